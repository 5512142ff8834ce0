"""PNG figures for evaluation reports: predicted-versus-measured scatter, per-group histogram.

Figures are drawn with matplotlib's object-oriented API on the Agg canvas, so the
process-wide pyplot backend and figure list are never touched (nothing is left open),
and every PNG is written atomically (temporary file, then rename).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from coderlm.atomic import write_atomic

LOG_SPAN = 100.0  # log axes when max / min of all-positive values exceeds this
MAX_LEGEND = 10  # most labels that get their own colour in a scatter


def log_scale(*arrays: Sequence[float]) -> bool:
    """True when every finite value is positive and together they span more than 100x."""
    values = np.concatenate([np.ravel(np.asarray(a, dtype=np.float64)) for a in arrays])
    values = values[np.isfinite(values)]
    return bool(values.size and values.min() > 0 and values.max() / values.min() > LOG_SPAN)


def _save(fig: Figure, path: str | Path) -> Path:
    buffer = io.BytesIO()
    FigureCanvasAgg(fig).print_png(buffer)
    return write_atomic(path, buffer.getvalue())


def scatter(
    predicted: Sequence[float],
    measured: Sequence[float],
    path: str | Path,
    title: str,
    labels: Sequence[str] | None = None,
) -> Path:
    """Predicted (y) against measured (x) with the identity line; returns the PNG path.

    Rows with a non-finite value are left out; axes are logarithmic when all values are
    positive and span more than two decades. ``labels`` (one per row, such as tasks)
    colour the points, with a legend for up to ``MAX_LEGEND`` distinct labels.
    """
    p = np.asarray(predicted, dtype=np.float64).ravel()
    m = np.asarray(measured, dtype=np.float64).ravel()
    if p.shape != m.shape:
        raise ValueError(f"predicted and measured differ in length: {p.size} != {m.size}")
    if labels is not None and len(labels) != p.size:
        raise ValueError(f"labels must hold one label per row ({p.size}), got {len(labels)}")
    keep = np.isfinite(p) & np.isfinite(m)
    p, m = p[keep], m[keep]
    names = np.asarray([str(x) for x in labels], dtype=object)[keep] if labels is not None else None
    fig = Figure(figsize=(5, 5), dpi=100)
    ax = fig.add_subplot()
    if p.size:
        distinct = list(dict.fromkeys(names)) if names is not None else []
        if 1 < len(distinct) <= MAX_LEGEND:
            for name in distinct:
                ax.scatter(m[names == name], p[names == name], s=10, alpha=0.6, linewidths=0, label=name)
        else:
            ax.scatter(m, p, s=10, alpha=0.6, linewidths=0)
        lo, hi = float(min(p.min(), m.min())), float(max(p.max(), m.max()))
        ax.plot([lo, hi], [lo, hi], color="grey", linewidth=1, linestyle="--", label="predicted = measured")
        ax.legend(loc="upper left", frameon=False, fontsize="small")
        if log_scale(p, m):
            ax.set_xscale("log")
            ax.set_yscale("log")
    else:
        ax.text(0.5, 0.5, "no finite rows", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("measured")
    ax.set_ylabel("predicted")
    ax.set_title(f"{title} (n={p.size})")
    fig.tight_layout()
    return _save(fig, path)


def group_histogram(values: Sequence[float], path: str | Path, title: str) -> Path:
    """Histogram of per-group Spearman correlations on [-1, 1], mean marked; returns the PNG path."""
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[np.isfinite(v)]
    fig = Figure(figsize=(5, 3.5), dpi=100)
    ax = fig.add_subplot()
    ax.hist(v, bins=20, range=(-1, 1), color="tab:blue", alpha=0.8)
    if v.size:
        ax.axvline(float(v.mean()), color="black", linestyle="--", linewidth=1, label=f"mean {v.mean():.3f}")
        ax.legend(loc="upper left", frameon=False)
    ax.set_xlim(-1, 1)
    ax.set_xlabel("Spearman within group")
    ax.set_ylabel("groups")
    ax.set_title(f"{title} ({v.size} groups)")
    fig.tight_layout()
    return _save(fig, path)
