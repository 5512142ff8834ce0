"""Evaluation: accuracy, ranking and selection metrics, JSON and markdown reports, figures.

Figures live in ``coderlm.evaluation.plots`` (imported on demand, as it loads matplotlib).
"""

from coderlm.evaluation.metrics import (
    best_of_group,
    group_spearman,
    interval_coverage,
    regression_metrics,
    spearman_by_task,
    task_spearman,
)
from coderlm.evaluation.report import evaluate, markdown_table, to_json, write_report

__all__ = [
    "best_of_group",
    "evaluate",
    "group_spearman",
    "interval_coverage",
    "markdown_table",
    "regression_metrics",
    "spearman_by_task",
    "task_spearman",
    "to_json",
    "write_report",
]
