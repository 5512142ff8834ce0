"""What validation minimizes (training option ``val_metric``): a function of the model -> a number,
lower is better, that the trainer calls every ``eval_every`` steps to stop early and keep the best
weights.

* ``"loss"``: the mean negative log-likelihood of the validation targets' number tokens;
* ``"spearman"``: 1 - Spearman's rho between the median of ``val_samples`` samples and the
  measured values, within each task (``evaluation.metrics.task_spearman``; tasks weighted by
  their rows or alike, training option ``val_task_weights``), averaged over objectives. This
  asks what the model is used for (ranking), not how well it spells numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from torch import nn

from coderlm.decoding.estimates import point_estimate
from coderlm.decoding.walk import walk_inputs
from coderlm.evaluation.metrics import spearman_by_task, task_spearman
from coderlm.training.batches import TokenTensors
from coderlm.training.config import TrainConfig
from coderlm.training.examples import check_rows, encode_targets

Validation = Callable[[nn.Module], float]


def likelihood_validation(tensors: TokenTensors) -> Validation:
    """Mean loss over the validation rows."""
    return tensors.mean_loss


class RankingValidation:
    """1 - mean over objectives of the within-task Spearman rho of sample medians (tasks weighted by
    ``weights``: "rows" or "equal"); ``sample()`` draws (n, S, k) samples of the validation inputs from
    the model as it is now. After each call ``rankings`` holds what the mean was taken over, each task's
    rho per objective (``"task/objective"``, or ``"objective"`` without tasks): a multi-task run's
    learning curve per task (the trainer logs it as ``val_rankings``)."""

    def __init__(
        self,
        sample: Callable[[], np.ndarray],
        values: np.ndarray,
        tasks: Sequence[str] | None = None,
        weights: str = "rows",
        names: Sequence[str] | None = None,
    ) -> None:
        self.sample, self.values, self.tasks, self.weights = sample, values, tasks, weights
        self.names = list(names) if names is not None else [f"objective_{j + 1}" for j in range(values.shape[1])]
        self.rankings: dict[str, float] = {}

    def __call__(self, _objective: nn.Module) -> float:
        medians = point_estimate(self.sample(), "median")
        k = self.values.shape[1]
        rhos = [task_spearman(medians[:, j], self.values[:, j], self.tasks, self.weights) for j in range(k)]
        self.rankings = {
            (f"{task}/{name}" if self.tasks is not None else name): round(rho, 4)
            for j, name in enumerate(self.names)
            for task, rho in spearman_by_task(medians[:, j], self.values[:, j], self.tasks).items()
        }
        return 1.0 - float(np.nanmean(rhos)) if not np.isnan(rhos).all() else 1.0


def model_validation(
    rlm, texts, values, tasks, missing: str, specials, config: TrainConfig, make_tensors, trained
) -> Validation | None:
    """What ``RegressionLM.fit`` validates on (None without validation rows): the likelihood of the targets,
    or (``val_metric="spearman"``) 1 - rank correlation of medians: of ``val_samples`` samples per input, or
    (``val_samples=0``) the exact median alone, walked (``coderlm.decoding.walk``): no sampling noise in
    the choice of weights."""
    if texts is None:
        return None
    k = rlm.codec_.num_objectives
    val = check_rows(texts, values, tasks, missing=missing, specials=specials, num_objectives=k, what="validation ")
    if config.val_metric == "spearman":
        tokens = rlm._encode(val.texts)  # once: every evaluation reads the same inputs
        if config.val_samples:
            draws = lambda: rlm.codec_.decode(rlm._sample_ids(tokens, config.val_samples, None, 0))  # noqa: E731
        else:
            half, batch = np.array([0.5]), rlm.batch_size
            draws = lambda: walk_inputs(rlm.network_.eval(), rlm._automaton(), rlm.codec_, tokens, half, batch)  # noqa: E731
        return RankingValidation(draws, val.values, val.tasks, config.val_task_weights, rlm.objectives_)
    tokens = rlm.tokenizer_.encode(val.texts, rlm._input_len())
    targets = encode_targets(rlm.codec_, val.values, missing, trained, config.digit_decay)
    return likelihood_validation(make_tensors(tokens, targets))
