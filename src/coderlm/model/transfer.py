"""Carrying a trained model's weights into a model for new targets (fine-tuning).

Everything but the decoder's position table keeps its shape: the input side depends
only on the tokenizer, the number vocabulary only on the number format and specials.
The position table has one row per output position (objectives x tokens per number);
with a different number of objectives, objective j takes the rows of the source's
objective min(j, k_source - 1), so each number starts from positions trained to
write a number.
"""

from __future__ import annotations

import dataclasses

import torch

from coderlm.model.config import ModelConfig
from coderlm.numbers.codec import NumberCodec

POSITIONS_KEY = "decoder.pos_emb.weight"
# Model options that may differ from the source model: they do not change any weight's shape or meaning.
FREE_OPTIONS = ("dropout", "gradient_checkpointing")


def finetune_config(source: ModelConfig, output_length: int, options: dict) -> ModelConfig:
    """The source's config for ``output_length`` output tokens; ``options`` may only repeat its values
    (or change the FREE_OPTIONS); a conflicting option raises ValueError naming it."""
    known = source.to_dict()
    conflicts = [
        f"{k}={v!r} (the init model has {known[k]!r})"
        for k, v in sorted(options.items())
        if k not in FREE_OPTIONS and known.get(k) != v
    ]
    if conflicts:
        raise ValueError(
            "model option(s) conflict with the init model, whose architecture fine-tuning keeps: "
            + ", ".join(conflicts)
        )
    free = {k: v for k, v in options.items() if k in FREE_OPTIONS}
    return dataclasses.replace(source, output_length=output_length, **free)


def adapt_state(state: dict[str, torch.Tensor], number_length: int, output_length: int) -> dict[str, torch.Tensor]:
    """A copy of ``state`` whose decoder position table has ``output_length`` rows."""
    state = dict(state)
    table = state[POSITIONS_KEY]  # (k_source * L, D)
    if table.shape[0] == output_length:
        return state
    source_objectives = table.shape[0] // number_length
    rows = torch.arange(output_length)
    objective, offset = rows // number_length, rows % number_length
    source_rows = objective.clamp(max=source_objectives - 1) * number_length + offset
    state[POSITIONS_KEY] = table[source_rows].clone()
    return state


def check_same_number_tokens(codec: NumberCodec, base: NumberCodec) -> None:
    """Fine-tuning keeps the decoder's vocabulary: the number format and specials must match the init model's."""
    differences = []
    if codec.format.to_dict() != base.format.to_dict():
        differences.append(f"number format {codec.format.to_dict()} != the init model's {base.format.to_dict()}")
    if codec.specials != base.specials:
        differences.append(f"specials {list(codec.specials)} != the init model's {list(base.specials)}")
    if differences:
        raise ValueError(
            "fine-tuning keeps the init model's number tokens, but "
            + "; ".join(differences)
            + " (leave number_format/specials unset to use the init model's)"
        )
