"""The RLM's part of ``bench/programs.py``: a fit that resumes in a run folder, and its predictions placed in
the columns of the targets it learned (samples, the exact median, pooled saved models)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from coderlm import RegressionLM
from coderlm.decoding import point_estimate
from coderlm.model.files import CONFIG_FILE
from program_scores import OBJECTIVES, scores


def fit_or_resume(rlm: RegressionLM, run: Path | None, **fit) -> RegressionLM:
    """``rlm.fit(**fit)``; with a ``run`` folder (``--runs``), a model finished there is loaded instead and a
    run stopped there continues from its latest checkpoint (``fit(resume=True)``)."""
    if run is None:
        return rlm.fit(**fit)
    if (run / CONFIG_FILE).is_file():
        print(f"  {run}: finished, loaded")
        return RegressionLM.load(run, device=rlm.device)
    resume = (run / "checkpoints" / "latest").is_file()
    print(f"  {run}: {'continued from its latest checkpoint' if resume else 'new run'}")
    return rlm.fit(**fit, run_dir=run, resume=resume)


def sample_columns(rlm: RegressionLM, texts: list[str], num_samples: int) -> np.ndarray:
    """(n, S, len(OBJECTIVES)) samples: each target the model learned in its column, NaN in the others."""
    samples = np.full((len(texts), num_samples, len(OBJECTIVES)), np.nan)
    columns = [OBJECTIVES.index(name) for name in rlm.objectives_]
    samples[:, :, columns] = rlm.sample(texts, num_samples=num_samples, seed=0, progress=True)
    return samples


def pooled_row(folders: list[Path], texts: list[str], test: dict, num_samples: int) -> dict:
    """A row for the pooled samples of saved RLMs (``--pool``; coderlm.ensemble's pooling): each model's
    samples go to the columns of the targets it learned, so one-target models pool with two-target ones."""
    pooled = []
    for folder in folders:
        model = RegressionLM.load(folder)
        if not set(model.objectives_) <= set(OBJECTIVES):
            raise SystemExit(f"--pool {folder}: predicts {model.objectives_}, not a subset of {OBJECTIVES}")
        pooled.append(sample_columns(model, texts, num_samples))
    predicted = point_estimate(np.concatenate(pooled, axis=1), "median")
    return scores(predicted, "rlm", test, models=len(folders), pooled=",".join(f.name for f in folders))


def exact_columns(rlm: RegressionLM, texts: list[str]) -> np.ndarray:
    """(n, len(OBJECTIVES)) exact medians of the model's distribution (``predict(point="exact")``), each target
    the model learned in its column, NaN in the others."""
    predicted = np.full((len(texts), len(OBJECTIVES)), np.nan)
    predicted[:, [OBJECTIVES.index(name) for name in rlm.objectives_]] = rlm.predict(texts, point="exact")
    return predicted
