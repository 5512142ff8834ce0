import json

import numpy as np
import pytest
from scipy.stats import spearmanr

from coderlm import IEEE, RegressionLM
from coderlm.data.toy import line_count_task
from coderlm.evaluation import task_spearman

TINY = {"encoder_dim": 32, "decoder_dim": 32, "encoder_heads": 4, "decoder_heads": 4}


@pytest.fixture(scope="module")
def fitted() -> RegressionLM:
    texts, targets = line_count_task(300, seed=0)
    rlm = RegressionLM(vocab_size=300, max_input_len=128, model=TINY, training={"steps": 250, "batch_size": 32})
    return rlm.fit(texts, targets)


def test_fit_ranks_held_out_texts(fitted):
    texts, targets = line_count_task(100, seed=1)
    predictions = fitted.predict(texts)
    assert predictions.shape == (100, 1)
    assert spearmanr(predictions[:, 0], targets).statistic > 0.9


def test_fit_returns_self_and_learned_state():
    texts, targets = line_count_task(20, seed=2)
    rlm = RegressionLM(vocab_size=300, model=TINY, training={"steps": 2})
    assert rlm.fit(texts, targets) is rlm
    assert rlm.codec_.num_objectives == 1 and len(rlm.loss_history_) == 2
    report = rlm.fit_report_
    assert {k: report[k] for k in ("examples", "truncated", "overflow", "underflow", "steps")} == {
        "examples": 20,
        "truncated": 0,
        "overflow": 0,
        "underflow": 0,
        "steps": 2,
    }
    assert rlm.objectives_ == ["y0"]


def test_fit_report_gives_the_mean_input_tokens_per_task():
    short = [f"x = {i}" for i in range(10)]
    long = [" ".join(f"call_{j}(v{i})" for j in range(12)) for i in range(10)]
    rlm = RegressionLM(vocab_size=300, model=TINY, training={"steps": 1})
    rlm.fit(short + long, np.arange(20.0) + 1, tasks=["short"] * 10 + ["long"] * 10)
    report = rlm.fit_report_
    lengths = rlm.tokenizer_.encode(short + long, 10_000).lengths
    assert report["input_tokens_by_task"] == {
        "long": round(float(lengths[10:].mean()), 1),
        "short": round(float(lengths[:10].mean()), 1),
    }
    assert report["input_tokens_by_task"]["long"] > 3 * report["input_tokens_by_task"]["short"]
    assert report["input_tokens"] == round(float(lengths.mean()), 1)
    single = RegressionLM(vocab_size=300, model=TINY, training={"steps": 1}).fit(short, np.arange(10.0) + 1)
    assert "input_tokens_by_task" not in single.fit_report_ and single.fit_report_["input_tokens"] > 0


def test_fit_report_records_the_validation_curve_and_the_step_kept():
    texts, targets = line_count_task(24, seed=2)
    rlm = RegressionLM(vocab_size=300, model=TINY, training={"steps": 4, "eval_every": 2})
    rlm.fit(texts[:16], targets[:16], val_texts=texts[16:], val_targets=targets[16:])
    curve = rlm.fit_report_["val_losses"]
    assert [step for step, _ in curve] == [2, 4]
    best_step, best_loss = min(curve, key=lambda pair: pair[1])
    assert rlm.fit_report_["best_step"] == best_step and rlm.fit_report_["best_val_loss"] == best_loss
    assert rlm.fit_report_["kept_steps"] == [best_step]


def test_validation_can_score_ranking_instead_of_likelihood():
    texts, targets = line_count_task(40, seed=4)
    tasks = ["a", "b"] * 10
    rlm = RegressionLM(vocab_size=300, model=TINY, training={"steps": 6, "val_metric": "spearman", "val_samples": 8})
    rlm.fit(texts[:20], targets[:20], val_texts=texts[20:], val_targets=targets[20:], val_tasks=tasks)
    report = rlm.fit_report_
    assert report["val_metric"] == "spearman" and [step for step, _ in report["val_losses"]] == [6]
    medians = np.median(rlm.sample(texts[20:], num_samples=8, seed=0)[:, :, 0], axis=1)
    assert report["best_val_loss"] == pytest.approx(1 - task_spearman(medians, targets[20:], tasks))
    with pytest.raises(ValueError, match="3 validation task labels for 20"):
        rlm.fit(texts[:20], targets[:20], val_texts=texts[20:], val_targets=targets[20:], val_tasks=tasks[:3])
    with pytest.raises(ValueError, match="val_metric"):
        RegressionLM(training={"val_metric": "accuracy"}).fit(texts, targets)


def test_ranking_validation_can_rank_exact_medians():
    """``val_samples=0``: validation ranks the exact medians (no samples), as ``predict(point="exact")``."""
    texts, targets = line_count_task(40, seed=4)
    rlm = RegressionLM(vocab_size=300, model=TINY, training={"steps": 6, "val_metric": "spearman", "val_samples": 0})
    rlm.fit(texts[:20], targets[:20], val_texts=texts[20:], val_targets=targets[20:])
    exact = rlm.predict(texts[20:], point="exact")[:, 0]
    assert rlm.fit_report_["best_val_loss"] == pytest.approx(1 - task_spearman(exact, targets[20:], None))
    with pytest.raises(ValueError, match="val_samples"):
        RegressionLM(training={"val_samples": -1}).fit(texts, targets)


def test_ranking_validation_can_weigh_tasks_alike():
    texts, targets = line_count_task(40, seed=4)
    tasks = ["a"] * 14 + ["b"] * 6  # the plain mean over tasks, not the mean over rows
    training = {"steps": 6, "val_metric": "spearman", "val_samples": 8, "val_task_weights": "equal"}
    rlm = RegressionLM(vocab_size=300, model=TINY, training=training)
    rlm.fit(texts[:20], targets[:20], val_texts=texts[20:], val_targets=targets[20:], val_tasks=tasks)
    medians = np.median(rlm.sample(texts[20:], num_samples=8, seed=0)[:, :, 0], axis=1)
    equal = task_spearman(medians, targets[20:], tasks, "equal")
    assert rlm.fit_report_["best_val_loss"] == pytest.approx(1 - equal)
    with pytest.raises(ValueError, match="val_task_weights"):
        RegressionLM(training={"val_task_weights": "by size"}).fit(texts, targets)


def test_ranking_validation_logs_each_tasks_ranking():
    """A multi-task run's learning curve per task: each evaluation's rho per task and objective, whose
    row-weighted mean is the validation loss."""
    texts, targets = line_count_task(40, seed=4)
    tasks = ["a"] * 14 + ["b"] * 6
    training = {"steps": 6, "eval_every": 3, "val_metric": "spearman", "val_samples": 8}
    rlm = RegressionLM(vocab_size=300, model=TINY, training=training)
    rlm.fit(texts[:20], targets[:20], val_texts=texts[20:], val_targets=targets[20:], val_tasks=tasks, objectives=["n"])
    curve = rlm.fit_report_["val_rankings"]
    assert [step for step, _ in curve] == [3, 6]
    for (_, rankings), (_, loss) in zip(curve, rlm.fit_report_["val_losses"], strict=True):
        assert set(rankings) == {"a/n", "b/n"}
        assert 1 - (14 * rankings["a/n"] + 6 * rankings["b/n"]) / 20 == pytest.approx(loss, abs=1e-3)


def test_ranking_validation_reports_truncated_inputs_once(caplog):
    texts, targets = line_count_task(24, seed=5)
    rlm = RegressionLM(
        vocab_size=300,
        max_input_len=8,
        model=TINY,
        training={"steps": 6, "eval_every": 2, "val_metric": "spearman", "val_samples": 4},
    )
    with caplog.at_level("WARNING", logger="coderlm"):
        rlm.fit(texts[:16], targets[:16], val_texts=texts[16:], val_targets=targets[16:])
    assert len(rlm.fit_report_["val_losses"]) == 3
    truncated = [r.getMessage() for r in caplog.records if "truncated" in r.getMessage()]
    assert [m.split(" text(s)")[0] for m in truncated] == ["14 of 16", "8 of 8"]  # training set, validation set


def test_sample_shapes_and_intervals(fitted):
    texts, _ = line_count_task(5, seed=3)
    samples = fitted.sample(texts, num_samples=32, seed=0)
    assert samples.shape == (5, 32, 1) and samples.dtype == np.float64
    np.testing.assert_array_equal(samples, fitted.sample(texts, num_samples=32, seed=0))
    interval = fitted.predict_interval(texts, 0.9)
    assert interval.shape == (5, 1, 2) and (interval[..., 0] <= interval[..., 1]).all()
    q = fitted.predict_quantiles(texts, [0.1, 0.5, 0.9])
    assert q.shape == (5, 1, 3)
    greedy = fitted.sample(texts, num_samples=4, temperature=0.0)
    assert (greedy == greedy[:, :1]).all()


def test_sampling_progress_counts_inputs_on_stderr_and_changes_no_sample(fitted, capsys):
    texts, _ = line_count_task(5, seed=3)
    quiet = fitted.sample(texts, num_samples=8, seed=0)
    assert capsys.readouterr().err == ""
    shown = fitted.sample(texts, num_samples=8, seed=0, progress=True)
    np.testing.assert_array_equal(quiet, shown)
    assert "sampling" in (err := capsys.readouterr().err) and "5/5" in err


def test_log_prob_prefers_the_truth(fitted):
    texts, targets = line_count_task(30, seed=4)
    truth = fitted.log_prob(texts, targets)
    wrong = fitted.log_prob(texts, [t + 40 for t in targets])
    assert truth.shape == (30,) and (truth <= 0).all()
    assert (truth > wrong).mean() > 0.9
    assert fitted.log_prob(texts, targets, per_objective=True).shape == (30, 1)


def test_multi_objective_and_ieee():
    texts, lines = line_count_task(40, seed=5)
    targets = [[n, n * 1000.0, -n / 8] for n in lines]
    rlm = RegressionLM(IEEE(), vocab_size=300, model=TINY, training={"steps": 3}).fit(texts, targets)
    assert rlm.codec_.total_length == 3 * IEEE().length
    assert rlm.predict(texts[:4]).shape == (4, 3)
    assert rlm.sample(texts[:2], num_samples=5).shape == (2, 5, 3)


def test_special_values_are_learned_not_rejected():
    texts, lines = line_count_task(30, seed=6)
    targets = [float("nan") if n > 10 else n for n in lines]
    with pytest.raises(ValueError, match=r"targets\[\d+\]\[0\] is missing .* specials=\('nan',\)"):
        RegressionLM(model=TINY, training={"steps": 1}).fit(texts, targets)
    rlm = RegressionLM(specials=("nan",), vocab_size=300, model=TINY, training={"steps": 2}).fit(texts, targets)
    samples = rlm.sample(texts[:3], num_samples=50, seed=1)
    kinds = np.isnan(samples) | np.isfinite(samples)
    assert kinds.all()


def test_save_load_round_trip(fitted, tmp_path):
    path = fitted.save(tmp_path / "model")
    assert sorted(p.name for p in path.iterdir()) == ["config.json", "model.safetensors", "tokenizer.json"]
    config = json.loads((path / "config.json").read_text())
    assert config["kind"] == "RegressionLM" and config["codec"]["format"]["kind"] == "p10"
    loaded = RegressionLM.load(path)
    texts, targets = line_count_task(6, seed=7)
    np.testing.assert_array_equal(loaded.sample(texts, 8, seed=3), fitted.sample(texts, 8, seed=3))
    np.testing.assert_allclose(loaded.log_prob(texts, targets), fitted.log_prob(texts, targets), atol=1e-5)
    fitted.save(path)  # overwriting an existing model directory works and leaves no debris
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_load_errors_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"config\.json is missing"):
        RegressionLM.load(tmp_path)
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        (tmp_path / name).write_text("{}")
    with pytest.raises(ValueError, match=r"config\.json"):
        RegressionLM.load(tmp_path)


def test_truncation_is_reported(caplog):
    texts, targets = line_count_task(20, seed=8)
    rlm = RegressionLM(vocab_size=300, max_input_len=8, model=TINY, training={"steps": 1}).fit(texts, targets)
    assert rlm.fit_report_["truncated"] > 0
    assert "exceed max_input_len=8 tokens and were truncated" in caplog.text


def test_overflow_is_reported(caplog):
    texts, _ = line_count_task(10, seed=9)
    rlm = RegressionLM(target_scale="raw", vocab_size=300, model=TINY, training={"steps": 1})
    rlm.fit(texts, [1e20] * 10)
    assert rlm.fit_report_["overflow"] == 10
    assert "10 target(s) above the format's largest magnitude were clamped" in caplog.text
    # spelled by rank ("auto": one shared leading digit), the same targets fit the format and decode back
    ranked = RegressionLM(vocab_size=300, model=TINY, training={"steps": 1}).fit(texts, [1e20] * 10)
    assert ranked.fit_report_["overflow"] == 0 and ranked.codec_.scale.ranked == [True]
    assert ranked.codec_.decode(ranked.codec_.encode([[1e20]]).ids)[0, 0] == 1e20


@pytest.mark.parametrize(
    "texts, targets, message",
    [
        (["a", ""], [1.0, 2.0], r"texts\[1\] is an empty string"),
        (["a", 3], [1.0, 2.0], r"texts\[1\] is int, expected str"),
        ("abc", [1.0], "not one string"),
        ([], [], "texts is empty"),
        (["a", "b"], [1.0], "got 2 texts but 1 targets"),
        (["a", "b"], [1.0, float("inf")], r"targets\[1\]\[0\] is inf"),
        (["a", "b"], [[1.0, 2.0], [3.0]], r"targets\[1\] has 1 objective\(s\), expected 2"),
        (["a", "b"], [1.0, "2"], r"targets\[1\] is str"),
        (["a", "b"], [[1.0], [None]], r"targets\[1\]\[0\] is missing \(None or NaN\); pass missing='mask'"),
    ],
)
def test_bad_input_names_the_row(texts, targets, message):
    with pytest.raises(ValueError, match=message):
        RegressionLM(model=TINY, training={"steps": 1}).fit(texts, targets)


def test_unknown_options_raise():
    texts, targets = line_count_task(4, seed=10)
    with pytest.raises(ValueError, match=r"unknown model option\(s\) \['width'\]"):
        RegressionLM(model={"width": 3}).fit(texts, targets)
    with pytest.raises(ValueError, match=r"unknown training option\(s\) \['epochs'\]"):
        RegressionLM(training={"epochs": 3}).fit(texts, targets)
    with pytest.raises(ValueError, match="set by RegressionLM itself"):
        RegressionLM(model={"output_length": 3}).fit(texts, targets)
    with pytest.raises(TypeError):
        RegressionLM(max_len=3)


def test_predict_before_fit_raises():
    with pytest.raises(RuntimeError, match="not fitted yet"):
        RegressionLM().predict(["x"])


def test_wrong_number_of_objectives_at_scoring(fitted):
    with pytest.raises(ValueError, match=r"targets\[0\] has 2 objective\(s\), expected 1"):
        fitted.log_prob(["x = 1\n"], [[1.0, 2.0]])


QUICK = {"steps": 2, "batch_size": 8, "progress": False}


@pytest.mark.parametrize(
    "missing, kept, skipped",
    [("skip", 16, 4), ("mask", 20, None), ("special", 20, None)],
)
def test_missing_targets_follow_the_one_vocabulary(missing, kept, skipped):
    texts, targets = line_count_task(20, seed=3)
    rows = [[t, None if i % 5 == 0 else t + 1] for i, t in enumerate(targets)]
    rlm = RegressionLM(vocab_size=300, model=TINY, training=QUICK).fit(texts, rows, missing=missing)
    assert rlm.fit_report_["examples"] == kept and rlm.fit_report_.get("skipped") == skipped
    assert ("nan" in rlm.codec_.specials) == (missing == "special")
    assert rlm.specials == ()  # the constructor's arguments are never changed
    with pytest.raises(ValueError, match=r"targets\[0\]\[1\] is missing"):
        RegressionLM(vocab_size=300, model=TINY, training=QUICK).fit(texts, rows)  # default: "error"
    with pytest.raises(ValueError, match="missing must be one of"):
        RegressionLM(training=QUICK).fit(texts, rows, missing="drop")


def test_get_params_lists_every_constructor_argument_and_model_is_an_alias():
    rlm = RegressionLM(vocab_size=300, layout_markers="never")
    params = rlm.get_params()
    assert params["vocab_size"] == 300 and params["layout_markers"] == "never" and "device" in params
    texts, targets = line_count_task(16, seed=4)
    rlm = RegressionLM(vocab_size=300, model=TINY, training=QUICK).fit(texts, targets)
    assert rlm.model_ is rlm.network_  # older name of the fitted network


def test_pretokenize_values_belong_to_the_learned_bpe():
    texts, targets = line_count_task(16, seed=4)
    with pytest.raises(ValueError, match=r"pretokenize 'structure' is for pretrained encoders"):
        RegressionLM(pretokenize="structure", training=QUICK).fit(texts, targets)


def test_independent_objectives_fit_sample_and_round_trip(tmp_path):
    """``model={"independent_objectives": True}``: each objective decoded from the input alone; it learns
    both, and a saved model keeps the option (same samples after loading)."""
    texts, lines = line_count_task(300, seed=7)
    targets = [[n, 1000.0 / n] for n in lines]
    model = TINY | {"independent_objectives": True}
    training = {"steps": 250, "batch_size": 32, "target_noise": 0.0}  # exact: 250 steps are few for noisy ones
    rlm = RegressionLM(vocab_size=300, max_input_len=128, model=model, training=training)
    rlm.fit(texts, targets)
    assert rlm.network_.cfg.independent_objectives and rlm.network_.cfg.number_length == rlm.codec_.length
    held, held_lines = line_count_task(60, seed=8)
    predicted = rlm.predict(held)
    assert spearmanr(predicted[:, 0], held_lines).statistic > 0.9
    assert spearmanr(predicted[:, 1], held_lines).statistic < -0.7
    loaded = RegressionLM.load(rlm.save(tmp_path / "model"))
    assert loaded.network_.cfg == rlm.network_.cfg
    again = loaded.sample(held[:5], num_samples=8, seed=3)
    np.testing.assert_array_equal(again, rlm.sample(held[:5], num_samples=8, seed=3))


def test_quantile_target_scale_learns_in_ranks_and_predicts_in_units(tmp_path):
    texts, lines = line_count_task(300, seed=7)
    targets = [[80 + n / 10.0, 1000.0 / n] for n in lines]
    rlm = RegressionLM(target_scale="quantile", vocab_size=300, max_input_len=128, model=TINY,
                       training={"steps": 250, "batch_size": 32, "progress": False, "target_noise": 0.0})  # fmt: skip
    rlm.fit(texts, targets)
    assert rlm.codec_.scale is not None and rlm.get_params()["target_scale"] == "quantile"
    held, held_lines = line_count_task(60, seed=8)
    predicted = rlm.predict(held)
    assert spearmanr(predicted[:, 0], held_lines).statistic > 0.9
    low, high = np.min(targets, 0), np.max(targets, 0)
    assert ((predicted >= low - 0.1 * (high - low)) & (predicted <= high + 0.1 * (high - low))).all()  # units
    loaded = RegressionLM.load(rlm.save(tmp_path / "model"))
    assert loaded.codec_ == rlm.codec_
    np.testing.assert_array_equal(
        loaded.sample(held[:4], num_samples=8, seed=2), rlm.sample(held[:4], num_samples=8, seed=2)
    )
    tuned = RegressionLM(training={"steps": 1, "progress": False}).fit(texts[:40], targets[:40], init=rlm)
    assert tuned.codec_.scale is not None and tuned.codec_.scale != rlm.codec_.scale  # kept, refitted
    with pytest.raises(
        ValueError, match=r"target_scale must be one of \['auto', 'raw', 'quantile', 'linear'\], got 'rank'"
    ):
        RegressionLM(target_scale="rank", model=TINY, training={"steps": 1}).fit(texts[:10], targets[:10])


def test_linear_target_scale_keeps_the_training_range_and_saves_it(tmp_path):
    texts, lines = line_count_task(40, seed=7)
    targets = [[80 + n / 10.0, 1000.0 / n] for n in lines]
    rlm = RegressionLM(target_scale="linear", vocab_size=300, model=TINY, training={"steps": 2, "progress": False})
    rlm.fit(texts, targets)
    low, high = np.min(targets, 0), np.max(targets, 0)
    assert rlm.codec_.scale.values == tuple((float(a), float(b)) for a, b in zip(low, high, strict=True))
    assert rlm.codec_.scale.spelled == ((1.5, 9.5), (1.5, 9.5))
    loaded = RegressionLM.load(rlm.save(tmp_path / "model"))
    assert loaded.codec_ == rlm.codec_
    np.testing.assert_array_equal(
        loaded.sample(texts[:3], num_samples=4, seed=1), rlm.sample(texts[:3], num_samples=4, seed=1)
    )


def test_a_fit_still_improving_at_its_last_evaluation_says_so(caplog):
    texts, targets = line_count_task(24, seed=2)
    rlm = RegressionLM(vocab_size=300, model=TINY, training={"steps": 4, "eval_every": 2})
    with caplog.at_level("WARNING", logger="coderlm"):
        rlm.fit(texts[:16], targets[:16], val_texts=texts[16:], val_targets=targets[16:])
    report = rlm.fit_report_
    assert report["best_step"] == 4 and report["best_at_end"] is True  # 4 steps: the loss still falls
    assert "last evaluation's (step 4 of 4)" in caplog.text and "more steps may rank better" in caplog.text
