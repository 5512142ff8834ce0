"""Model configuration: one frozen dataclass, every field documented where declared."""

from __future__ import annotations

import dataclasses
from typing import Any

from coderlm.options import OptionError, check_integers, check_options


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """Sizes of the encoder-decoder. Encoder and decoder widths and depths are independent."""

    input_vocab_size: int  # size of the input tokenizer's vocabulary
    output_vocab_size: int  # number tokens the decoder can write (the codec's vocabulary)
    output_length: int  # tokens the decoder writes per input (objectives x tokens per number)
    max_input_len: int = 512  # encoder context in tokens; longer inputs are truncated
    encoder_dim: int = 256  # encoder width; a pretrained encoder's states are projected to it (default: its width)
    encoder_layers: int = 2  # encoder blocks (scratch encoder)
    encoder_heads: int = 8  # encoder attention heads; must divide encoder_dim (scratch encoder)
    decoder_dim: int = 256  # decoder width; cross-attention projects encoder states to it
    decoder_layers: int = 2  # decoder blocks
    decoder_heads: int = 8  # decoder attention heads; must divide decoder_dim
    mlp_ratio: float = 4.0  # hidden width of each MLP as a multiple of the block width
    dropout: float = 0.0  # dropout on attention outputs and MLPs during training
    pooled_memory: bool = False  # cross-attention also reads the mean of the encoder states (one more memory slot)
    independent_objectives: bool = False  # each objective written from the input alone, not after the ones before it
    number_length: int = 0  # tokens per objective (the codec's; set when built; 0 in models saved before it)
    positions: str = "learned"  # encoder positions: "learned" (absolute; they count tokens well) or "rope"
    pad_id: int = 0  # id of the input padding token
    encoder: str = "scratch"  # "scratch", "minilm" (extra 'encoders') or a local Hugging Face model folder
    train_encoder: bool = False  # pretrained encoders: train their weights too (default: frozen)
    gradient_checkpointing: bool = False  # trainable pretrained encoders: recompute activations in backward
    encoder_attention_dropout: float | None = None  # trained encoder: attention-weight dropout (None: its own; 0: fast)
    number_values: bool = False  # digit tokens also embed their number's log10 value (scratch or trained encoder)
    digit_ids: tuple[int, ...] = ()  # ids of the tokens 0..9 (from the tokenizer; for number_values)

    def __post_init__(self) -> None:
        positive = (
            "input_vocab_size",
            "output_vocab_size",
            "output_length",
            "max_input_len",
            "encoder_dim",
            "encoder_layers",
            "encoder_heads",
            "decoder_dim",
            "decoder_layers",
            "decoder_heads",
        )
        check_integers(self, positive, "model option")
        own_encoder = self.encoder == "scratch"  # a pretrained encoder has its own heads and positions
        for width, heads in (("encoder_dim", "encoder_heads"), ("decoder_dim", "decoder_heads"))[not own_encoder :]:
            if getattr(self, width) % getattr(self, heads):
                raise ValueError(
                    f"model option {heads}={getattr(self, heads)} must divide {width}={getattr(self, width)}"
                )
            if (getattr(self, width) // getattr(self, heads)) % 2 and self.positions == "rope":
                raise ValueError(f"rotary positions need an even head size; {width}/{heads} is odd")
        if not isinstance(self.encoder, str) or not self.encoder:
            raise OptionError(
                "encoder", f"must be 'scratch', 'minilm' or a folder, got {self.encoder!r}", "model option"
            )
        if self.positions not in ("rope", "learned"):
            raise OptionError("positions", f"must be 'rope' or 'learned', got {self.positions!r}", "model option")
        if not 0.0 <= self.dropout < 1.0:
            raise OptionError("dropout", f"must be in [0, 1), got {self.dropout!r}", "model option")
        rate = self.encoder_attention_dropout
        if rate is not None and (not isinstance(rate, (int, float)) or not 0.0 <= rate < 1.0):
            raise OptionError("encoder_attention_dropout", f"must be in [0, 1) or None, got {rate!r}", "model option")
        if rate is not None and (own_encoder or not self.train_encoder):
            raise OptionError(
                "encoder_attention_dropout",
                "applies to a pretrained encoder that trains (train_encoder on); the scratch encoder drops its "
                "attention output (option dropout), a frozen one runs without dropout",
                "model option",
            )
        if self.mlp_ratio <= 0:
            raise OptionError("mlp_ratio", f"must be > 0, got {self.mlp_ratio!r}", "model option")
        object.__setattr__(self, "digit_ids", tuple(int(i) for i in self.digit_ids))  # JSON gives a list
        if self.number_values:
            if not (own_encoder or self.train_encoder):
                raise OptionError(
                    "number_values",
                    "needs an encoder that trains: a frozen pretrained encoder's states are a fixed function of "
                    "the text (and cached), so values added to its input would never be learned; set "
                    "train_encoder (fine-tune it) or leave number_values off",
                    "model option",
                )
            if len(self.digit_ids) != 10 or not all(0 <= i < self.input_vocab_size for i in self.digit_ids):
                raise ValueError(f"number_values needs the ids of the 10 digit tokens, got {self.digit_ids!r}")
        if self.independent_objectives and (self.number_length < 1 or self.output_length % self.number_length):
            raise OptionError(
                "independent_objectives",
                f"needs the tokens per objective (number_length={self.number_length}) to divide "
                f"output_length={self.output_length}",
                "model option",
            )
        if not 0 <= self.pad_id < self.input_vocab_size:
            raise ValueError(f"model option pad_id={self.pad_id} is outside the input vocabulary")

    @property
    def objective_span(self) -> int:
        """Decoder positions one start token begins and self-attention spans: all (chained objectives) or
        one objective's (independent)."""
        return self.number_length if self.independent_objectives else self.output_length

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> ModelConfig:
        """Build from a dict; unknown keys raise ValueError naming them."""
        check_options(cls, values, "model")
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# Fields an estimator derives from its tokenizer, codec and options; users set the rest.
DERIVED_FIELDS = (
    "input_vocab_size",
    "output_vocab_size",
    "output_length",
    "number_length",
    "max_input_len",
    "pad_id",
    "digit_ids",
)


def size_options(values: dict[str, Any] | None, owner: str) -> dict[str, Any]:
    """A user's model options: ModelConfig fields, none of the derived ones; errors name the bad keys."""
    options = dict(values or {})
    check_options(ModelConfig, options, "model")
    derived = sorted(set(options) & set(DERIVED_FIELDS))
    if derived:
        raise ValueError(f"model option(s) {derived} are set by {owner} itself")
    return options
