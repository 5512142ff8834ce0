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
import logging
from collections.abc import Sequence

import numpy as np
import torch
from scipy.stats import spearmanr

from coderlm.model.config import ModelConfig
from coderlm.numbers.codec import NumberCodec
from coderlm.options import OptionError

log = logging.getLogger("coderlm")

POSITIONS_KEY = "decoder.pos_emb.weight"
# Model options that may differ from the source model: they do not change any weight's shape or meaning.
FREE_OPTIONS = ("dropout", "gradient_checkpointing", "encoder_attention_dropout")


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


def adapt_state(
    state: dict[str, torch.Tensor],
    number_length: int,
    output_length: int,
    sources: Sequence[int] | None = None,
) -> dict[str, torch.Tensor]:
    """A copy of ``state`` whose decoder position table has ``output_length`` rows: objective j's rows are
    the source's objective ``sources[j]`` (default ``min(j, k_source - 1)``)."""
    state = dict(state)
    table = state[POSITIONS_KEY]  # (k_source * L, D)
    source_objectives = table.shape[0] // number_length
    k = output_length // number_length
    if sources is None:
        if table.shape[0] == output_length:
            return state
        sources = [min(j, source_objectives - 1) for j in range(k)]
    if len(sources) != k or not all(0 <= s < source_objectives for s in sources):
        raise ValueError(f"sources {list(sources)}: need {k} indices below {source_objectives} (the init's objectives)")
    rows = torch.arange(output_length)
    objective, offset = rows // number_length, rows % number_length
    source_rows = torch.tensor(list(sources))[objective] * number_length + offset
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


def transfer_sources(
    init_names: Sequence[str], names: Sequence[str], values: np.ndarray
) -> tuple[list[int], dict[str, dict]]:
    """Which of the init model's objectives each objective of ``names`` starts from (its decoder positions).

    An objective the init model has starts from itself. A new one starts from the init objective whose
    values in ``values`` (n, k; the init model's own predictions given as context) rank its targets best
    (Spearman): a new device's latency starts as the known device most like it, so the fine-tuned model
    begins where choosing that device would leave it. Without such values (or with fewer than 3 rows), a
    new objective j starts from the init's objective min(j, k_init - 1). Returns the source index per
    objective and, per new objective, ``{"from": name, "spearman": rho}``.
    """
    known = {name: i for i, name in enumerate(init_names)}
    given = [j for j, name in enumerate(names) if name in known]
    sources, report = [], {}
    for j, name in enumerate(names):
        if name in known:
            sources.append(known[name])
            continue
        scores = {known[names[c]]: _spearman(values[:, c], values[:, j]) for c in given}
        scores = {i: rho for i, rho in scores.items() if rho is not None}
        if scores:
            best = max(scores, key=scores.get)
            report[name] = {"from": init_names[best], "spearman": round(scores[best], 4)}
        else:
            best = min(j, len(init_names) - 1)
        sources.append(best)
    return sources, report


def _spearman(a: np.ndarray, b: np.ndarray) -> float | None:
    """Rank correlation over the rows where both are finite; None with fewer than 3 or a constant column."""
    both = np.isfinite(a) & np.isfinite(b)
    if both.sum() < 3 or np.ptp(a[both]) == 0 or np.ptp(b[both]) == 0:
        return None
    return float(spearmanr(a[both], b[both]).statistic)


def init_context(
    context: str, base, texts, targets, objectives, val_texts, val_targets
) -> tuple[np.ndarray, list[str], np.ndarray | None, list[str]]:
    """``fit(context="init")``: the init estimator ``base``'s predictions of the objectives it decodes,
    prepended to the targets and to the validation targets. Returns targets, objective names, validation
    targets and the context objectives; the new objectives must be named apart from the init model's."""
    if context != "init" or base is None:
        raise OptionError("context", f"must be objective names, or 'init' with init=; got {context!r}")
    decoded = base.decoded_objectives_
    values = np.asarray(targets, dtype=float)
    values = values[:, None] if values.ndim == 1 else values
    names = list(objectives) if objectives is not None else [f"y{j}" for j in range(values.shape[1])]
    clash = sorted(set(names) & set(decoded))
    if clash:
        raise OptionError(
            "context", f"'init' fills the init model's objectives {clash} from its predictions; name yours apart"
        )
    log.info("context='init': the init model predicts its objectives for %d texts", len(texts))
    predict = lambda t: base.predict(list(t))[:, : len(decoded)]  # noqa: E731
    joined = lambda t, v: np.hstack([predict(t), np.asarray(v, float).reshape(len(t), -1)])  # noqa: E731
    val = joined(val_texts, val_targets) if val_texts is not None and val_targets is not None else val_targets
    return joined(texts, values), decoded + names, val, decoded
