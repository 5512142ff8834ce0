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
from coderlm.evaluation.metrics import task_spearman
from coderlm.training.batches import TokenTensors

Validation = Callable[[nn.Module], float]


def likelihood_validation(tensors: TokenTensors) -> Validation:
    """Mean loss over the validation rows."""
    return tensors.mean_loss


def ranking_validation(
    sample: Callable[[], np.ndarray], values: np.ndarray, tasks: Sequence[str] | None = None, weights: str = "rows"
) -> Validation:
    """1 - mean over objectives of the within-task Spearman rho of sample medians (tasks weighted by
    ``weights``: "rows" or "equal"); ``sample()`` draws (n, S, k) samples of the validation inputs from
    the model as it is now."""

    def loss(_objective: nn.Module) -> float:
        medians = point_estimate(sample(), "median")
        rhos = [task_spearman(medians[:, j], values[:, j], tasks, weights) for j in range(values.shape[1])]
        return 1.0 - float(np.nanmean(rhos)) if not np.isnan(rhos).all() else 1.0

    return loss
