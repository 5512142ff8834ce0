"""Evaluate predictions per task and objective; write metrics.json, report.md and figures.

``evaluate`` returns ``{task: {objective: entry}}`` where ``entry`` holds the
``regression_metrics`` keys (spearman, kendall, pearson, mae, mape, n), one
``coverage_<percent>`` per interval level, and with groups ``group_spearman`` and
``best_of_group`` dicts. Tasks are listed in order of first appearance, then ``"all"``
(every row) when there are several; without tasks there is only ``"all"``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from coderlm.atomic import write_atomic
from coderlm.evaluation.metrics import best_of_group, group_spearman, interval_coverage, regression_metrics

ALL = "all"


def to_json(value):
    """A copy made of dicts, lists, str, bool, int, float and None only; NaN and inf become None."""
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [to_json(v) for v in value]
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    raise TypeError(f"cannot write a {type(value).__name__} as JSON: {value!r}")


def _matrix(name: str, values, n: int | None, k: int) -> np.ndarray:
    """(n, k) float array; a 1-D array is accepted when k == 1."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 1 and k == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[1] != k or (n is not None and arr.shape[0] != n):
        want = f"({'n' if n is None else n}, {k})"
        raise ValueError(f"{name} must have shape {want} (rows, objectives), got {arr.shape}")
    return arr


def _labels(name: str, values: Sequence | None, n: int) -> list[str] | None:
    if values is None:
        return None
    if len(values) != n:
        raise ValueError(f"{name} must hold one label per row ({n}), got {len(values)}")
    return [str(v) for v in values]


def _directions(objectives: Sequence[str], lower_is_better) -> list[bool]:
    """One flag per objective. None: lower is better unless the name mentions accuracy."""
    if lower_is_better is None:
        return ["accuracy" not in name.lower() for name in objectives]
    if isinstance(lower_is_better, (bool, np.bool_)):
        return [bool(lower_is_better)] * len(objectives)
    if isinstance(lower_is_better, Mapping):
        unknown = set(lower_is_better) - set(objectives)
        if unknown:
            raise ValueError(f"lower_is_better names unknown objectives {sorted(unknown)}; objectives: {objectives}")
        return [bool(lower_is_better.get(name, True)) for name in objectives]
    flags = [bool(flag) for flag in lower_is_better]
    if len(flags) != len(objectives):
        raise ValueError(f"lower_is_better needs one flag per objective ({len(objectives)}), got {len(flags)}")
    return flags


def _relative_width(low: np.ndarray, high: np.ndarray, predicted: np.ndarray) -> float | None:
    """Median of (upper - lower) / |prediction| over rows where all three are finite and the prediction is not 0."""
    width = (high - low) / np.abs(predicted)
    width = width[np.isfinite(width)]
    return float(np.median(width)) if width.size else None


def coverage_key(level: float) -> str:
    """0.9 -> 'coverage_90', 0.975 -> 'coverage_97.5'."""
    return f"coverage_{level * 100:g}"


def evaluate(
    predicted,
    measured,
    objectives: Sequence[str],
    tasks: Sequence[str] | None = None,
    groups: Sequence[str] | None = None,
    intervals: Mapping[float, np.ndarray] | None = None,
    lower_is_better: bool | Sequence[bool] | Mapping[str, bool] | None = None,
    calibrated: Mapping[float, np.ndarray] | None = None,
) -> dict:
    """Metrics for (n, k) predictions against (n, k) measurements, per task and objective.

    ``intervals`` maps a level in (0, 1) to (n, k, 2) lower and upper bounds; ``calibrated`` the same after
    conformal calibration. Each gives ``coverage_<percent>`` (``..._calibrated``) and ``width_<percent>``
    (``..._calibrated``): the median interval width relative to the prediction.
    ``groups`` labels rows that compete with each other (say, configurations of one
    program); a group never spans tasks, so in ``"all"`` groups are (task, group).
    ``lower_is_better``: one flag for all objectives, one per objective, or a dict by
    name (default True); None guesses lower is better unless the name has "accuracy".
    The result is JSON-ready: ``json.dumps(result, allow_nan=False)`` works.
    """
    objectives = [str(name) for name in objectives]
    if len(set(objectives)) != len(objectives):
        raise ValueError(f"objective names repeat: {objectives}")
    p = _matrix("predicted", predicted, None, len(objectives))
    n = p.shape[0]
    m = _matrix("measured", measured, n, len(objectives))
    task_labels = _labels("tasks", tasks, n)
    group_labels = _labels("groups", groups, n)
    bounds = {}
    for suffix, given in (("", intervals), ("_calibrated", calibrated)):
        for level, arr in (given or {}).items():
            if not 0 < level < 1:
                raise ValueError(f"interval levels must be in (0, 1), got {level}")
            arr = np.asarray(arr, dtype=np.float64)
            if arr.shape != (n, len(objectives), 2):
                raise ValueError(f"intervals[{level}] must have shape {(n, len(objectives), 2)}, got {arr.shape}")
            bounds[(float(level), suffix)] = arr
    flags = _directions(objectives, lower_is_better)

    selections: dict[str, np.ndarray] = {}
    if task_labels is not None:
        labels = np.asarray(task_labels, dtype=object)
        names = list(dict.fromkeys(task_labels))
        if len(names) > 1 and ALL in names:
            raise ValueError(f"a task may not be called {ALL!r} when there are several: that key holds every row")
        selections = {name: np.flatnonzero(labels == name) for name in names}
        if group_labels is not None:
            group_labels = [repr((t, g)) for t, g in zip(task_labels, group_labels, strict=True)]
    if len(selections) != 1:
        selections[ALL] = np.arange(n)

    out: dict[str, dict] = {}
    for task, rows in selections.items():
        out[task] = {}
        for j, name in enumerate(objectives):
            pj, mj = p[rows, j], m[rows, j]
            entry = regression_metrics(pj, mj)
            for level, suffix in sorted(bounds):
                low, high = bounds[(level, suffix)][rows, j, 0], bounds[(level, suffix)][rows, j, 1]
                entry[coverage_key(level) + suffix] = interval_coverage(low, high, mj)
                entry[f"width_{level * 100:g}{suffix}"] = _relative_width(low, high, pj)
            if group_labels is not None:
                task_groups = [group_labels[i] for i in rows]
                entry["group_spearman"] = group_spearman(pj, mj, task_groups)
                entry["best_of_group"] = best_of_group(pj, mj, task_groups, lower_is_better=flags[j])
                entry["best_of_group"]["lower_is_better"] = flags[j]
            out[task][name] = entry
    return to_json(out)


def _cell(value, floatfmt: str) -> str:
    if value is None or (isinstance(value, (float, np.floating)) and not math.isfinite(value)):
        return "-"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        small_or_huge = value != 0 and not 1e-3 <= abs(value) < 1e6
        return format(float(value), ".4g" if small_or_huge else floatfmt)
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(rows: Sequence[Mapping], columns: Sequence[str] | None = None, floatfmt: str = ".3f") -> str:
    """A GitHub-flavoured markdown table, one line per row dict.

    ``columns`` defaults to every key in order of first appearance. Missing values,
    None and NaN show as "-"; floats use ``floatfmt`` except magnitudes below 1e-3 or
    from 1e6 up, which get four significant digits. Returns "" without rows or columns.
    """
    if columns is None:
        columns = list(dict.fromkeys(key for row in rows for key in row))
    if not columns:
        return ""
    lines = ["| " + " | ".join(_cell(str(c), floatfmt) for c in columns) + " |"]
    lines.append("| " + " | ".join("---" for _ in columns) + " |")
    for row in rows:
        lines.append("| " + " | ".join(_cell(row.get(c), floatfmt) for c in columns) + " |")
    return "\n".join(lines) + "\n"


def _summary_rows(entries: Mapping[str, Mapping]) -> list[dict]:
    """Table rows (one per objective) from one task's ``evaluate`` entries."""
    rows = []
    for name, entry in entries.items():
        if not isinstance(entry, Mapping):
            continue
        row = {"objective": name, "n": entry.get("n")}
        for key, header in (
            ("spearman", "spearman"),
            ("kendall", "kendall"),
            ("pearson", "pearson"),
            ("mae", "MAE"),
            ("mape", "MAPE"),
        ):
            row[header] = entry.get(key)
        coverage = sorted(
            (k for k in entry if k.startswith("coverage_")), key=lambda k: (float(k[9:].split("_")[0]), k)
        )
        row.update({f"coverage {k[9:].replace('_calibrated', ' cal')}": entry[k] for k in coverage})
        if isinstance(entry.get("group_spearman"), Mapping):
            row["group spearman"] = entry["group_spearman"].get("mean")
        if isinstance(entry.get("best_of_group"), Mapping):
            best = entry["best_of_group"]
            row.update(
                {
                    "pairwise acc": best.get("pairwise_accuracy"),
                    "regret": best.get("regret"),
                    "random regret": best.get("random_regret"),
                }
            )
        rows.append(row)
    return rows


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "objective"


def write_report(
    out_dir: str | Path,
    metrics: dict,
    predicted,
    measured,
    objectives: Sequence[str],
    tasks: Sequence[str] | None = None,
    title: str = "coderlm evaluation",
    extra_tables: list[tuple[str, list[dict]]] | None = None,
) -> Path:
    """Writes metrics.json, one scatter PNG per objective (and a per-group Spearman
    histogram where ``metrics`` has one), and report.md; returns the report.md path.

    ``metrics`` is what ``evaluate`` returned; ``tasks`` colours the scatter points;
    ``extra_tables`` are (title, rows) pairs rendered after the summary tables.
    """
    from coderlm.evaluation import plots  # matplotlib only when writing figures

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    clean = to_json(metrics)
    write_atomic(out / "metrics.json", json.dumps(clean, indent=2, allow_nan=False) + "\n")
    objectives = [str(name) for name in objectives]
    p = _matrix("predicted", predicted, None, len(objectives))
    m = _matrix("measured", measured, p.shape[0], len(objectives))
    task_labels = _labels("tasks", tasks, p.shape[0])
    overall = clean.get(ALL) or next((v for v in clean.values() if isinstance(v, Mapping)), {})

    figures, slugs = [], []
    for j, name in enumerate(objectives):
        slugs.append(_slug(name) if _slug(name) not in slugs else f"{_slug(name)}_{j}")
        png = plots.scatter(p[:, j], m[:, j], out / f"scatter_{slugs[-1]}.png", name, labels=task_labels)
        figures.append((f"{name}: predicted vs measured", png.name))
        spread = (overall.get(name) or {}).get("group_spearman") or {}
        if spread.get("values"):
            png = plots.group_histogram(spread["values"], out / f"groups_{slugs[-1]}.png", name)
            figures.append((f"{name}: Spearman within groups", png.name))

    lines = [
        f"# {title}",
        "",
        "Metrics in [metrics.json](metrics.json). MAPE is a fraction; regret is relative to "
        "the best row of each group; pairwise accuracy 0.5 is chance.",
        "",
    ]
    for task, entries in clean.items():
        if isinstance(entries, Mapping):
            rows = _summary_rows(entries)
            if rows:
                lines += [f"## {task}", "", markdown_table(rows)]
    for table_title, rows in extra_tables or []:
        lines += [f"## {table_title}", "", markdown_table(rows) or "(no rows)\n"]
    lines += ["## Figures", ""] + [f"![{caption}]({name})\n" for caption, name in figures]
    return write_atomic(out / "report.md", "\n".join(lines))
