"""``coderlm evaluate``'s regression-head baseline selects its weights as the model did (``--val-data``)."""

import json
from types import SimpleNamespace

from coderlm import RegressionLM
from coderlm.cli.evaluate import evaluate_run
from coderlm.data import read_dataset
from coderlm.evaluation.baselines import regression_head
from coderlm.evaluation.baselines.regression_head import selection_like
from tests.cli.test_cli import write_rows

TINY = {"encoder_dim": 32, "decoder_dim": 32, "encoder_heads": 4, "decoder_heads": 4}


def test_selection_like_copies_what_the_fit_ran_and_keeps_what_was_set():
    report = {"val_metric": "spearman", "ema_decay": 0.99, "val_losses": [[150, 0.3], [300, 0.2]]}
    rlm = SimpleNamespace(fit_report_=report)
    assert selection_like(rlm, {"steps": 600}) == {
        "steps": 600,
        "val_metric": "spearman",
        "ema_decay": 0.99,
        "eval_every": 150,
    }
    assert selection_like(rlm, {"ema_decay": 0.0, "eval_every": 50})["ema_decay"] == 0.0  # set: kept
    unvalidated = SimpleNamespace(fit_report_={"val_metric": None, "ema_decay": 0.0, "val_losses": []})
    assert selection_like(unvalidated, None) == {}


def test_evaluate_gives_the_head_the_models_validation(tmp_path, monkeypatch):
    train, val, test = (write_rows(tmp_path / f"{name}.jsonl", n=n, seed=s) for name, n, s in
                        (("train", 36, 0), ("val", 12, 1), ("test", 12, 2)))  # fmt: skip
    rows, val_rows = read_dataset(train), read_dataset(val)
    objectives = ["lines"]
    training = {"steps": 4, "eval_every": 2, "val_metric": "spearman", "val_samples": 4, "progress": False}
    rlm = RegressionLM(vocab_size=300, model=TINY, training=training)
    rlm.fit(
        [r.text for r in rows],
        [[r.targets["lines"]] for r in rows],
        objectives=objectives,
        val_texts=[r.text for r in val_rows],
        val_targets=[[r.targets["lines"]] for r in val_rows],
    )
    model = rlm.save(tmp_path / "model")
    fits = []
    original = regression_head.RegressionHeadRegressor.fit

    def spy(self, texts, targets, tasks=None, **validation):
        fits.append((self.training, validation))
        return original(self, texts, targets, tasks, **validation)

    monkeypatch.setattr(regression_head.RegressionHeadRegressor, "fit", spy)
    report = tmp_path / "report"
    metrics = evaluate_run(
        model, test, report, num_samples=4, baselines=["regression_head_norm"], train_data=train, val_data=val,
        progress=False,
    )  # fmt: skip
    ((head_training, validation),) = fits
    assert len(validation["val_texts"]) == 12 and validation["val_targets"].shape == (12, 1)
    assert head_training["val_metric"] == "spearman" and head_training["eval_every"] == 2
    assert head_training["steps"] == 4  # the model's budget
    assert set(metrics) == {"rlm", "regression_head_norm"}
    assert json.loads((report / "comparison.json").read_text()).keys() == {"rlm", "regression_head_norm"}
