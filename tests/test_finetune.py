"""Fine-tuning: fit(init=...) starts from a trained model's weights and tokenizer, on new targets."""

import json

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from coderlm import IEEE, P10, NumberCodec, RegressionLM
from coderlm.cli import main
from coderlm.data.toy import line_count_task
from coderlm.model.transfer import adapt_state
from coderlm.options import OptionError
from coderlm.training.batches import TokenTensors
from coderlm.training.examples import encode_targets
from coderlm.training.sampling import BatchSampler

TINY = {"encoder_dim": 32, "decoder_dim": 32, "encoder_heads": 4, "decoder_heads": 4}


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> tuple[RegressionLM, str]:
    texts, targets = line_count_task(64, seed=0)
    rlm = RegressionLM(
        vocab_size=300, max_input_len=96, model=TINY, training={"steps": 30, "batch_size": 16, "progress": False}
    )
    rlm.fit(texts, targets, objectives=["lines"])
    path = tmp_path_factory.mktemp("base")
    rlm.save(path)
    return rlm, str(path)


def _batch_loss(rlm: RegressionLM, texts, targets, batch_size: int, seed: int = 0) -> float:
    """The loss ``rlm`` gives the fine-tuning run's first batch (same sampler, same encoding)."""
    encoded = encode_targets(rlm.codec_, np.asarray(targets, dtype=np.float64).reshape(len(texts), -1), "error")
    data = TokenTensors(rlm._encode(texts), encoded.ids, encoded.weights, torch.device("cpu"))
    rows = BatchSampler(len(texts), batch_size, seed).batch(0)
    with torch.no_grad():
        return float(rlm.network_.eval().loss(**data.batch(rows)))


def test_starts_from_the_init_weights_and_tokenizer(base):
    rlm, path = base
    texts, targets = line_count_task(48, seed=1)
    tuned = RegressionLM(training={"steps": 3, "batch_size": 16, "progress": False})
    tuned.fit(texts, [2 * t for t in targets], init=path, objectives=["double"])
    assert tuned.tokenizer_.tokenizer.to_str() == rlm.tokenizer_.tokenizer.to_str()
    assert tuned.network_.cfg == rlm.network_.cfg
    # the first step's loss is the init model's loss on that batch: training started from its weights
    assert tuned.loss_history_[0] == pytest.approx(_batch_loss(rlm, texts, [2 * t for t in targets], 16), rel=1e-5)
    # and training moved them
    before, after = rlm.network_.state_dict(), tuned.network_.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)
    assert tuned.objectives_ == ["double"] and tuned.fit_report_["init"] == path


def test_a_tiny_learning_rate_keeps_predictions_and_the_init_estimator_untouched(base):
    rlm, _ = base
    snapshot = {k: v.clone() for k, v in rlm.network_.state_dict().items()}
    texts, targets = line_count_task(16, seed=2)
    tuned = RegressionLM(training={"steps": 1, "batch_size": 8, "learning_rate": 1e-12, "progress": False})
    tuned.fit(texts, targets, init=rlm)  # a fitted estimator works as init too
    np.testing.assert_allclose(tuned.log_prob(texts, targets), rlm.log_prob(texts, targets), rtol=1e-5)
    assert all(torch.equal(snapshot[k], v) for k, v in rlm.network_.state_dict().items())


def test_new_objectives_more_of_them_then_save_and_load(base, tmp_path):
    rlm, path = base
    texts, lines = line_count_task(48, seed=3)
    targets = [[n, len(t)] for n, t in zip(lines, texts, strict=True)]
    tuned = RegressionLM(training={"steps": 4, "batch_size": 16, "progress": False})
    tuned.fit(texts, targets, init=path, objectives=["lines", "bytes"])
    assert tuned.codec_.num_objectives == 2 and tuned.objectives_ == ["lines", "bytes"]
    assert tuned.network_.cfg.output_length == 2 * rlm.network_.cfg.output_length
    assert tuned.predict(texts[:3], num_samples=8).shape == (3, 2)
    tuned.save(tmp_path / "tuned")
    loaded = RegressionLM.load(tmp_path / "tuned")
    np.testing.assert_allclose(
        loaded.log_prob(texts[:5], targets[:5]), tuned.log_prob(texts[:5], targets[:5]), rtol=1e-6
    )


def test_learning_rate_defaults_to_the_papers_fine_tuning_rate(base, tmp_path):
    _, path = base
    texts, targets = line_count_task(16, seed=4)
    for run, training, peak in ((tmp_path / "default", {}, 5e-5), (tmp_path / "set", {"learning_rate": 3e-4}, 3e-4)):
        RegressionLM(
            training={
                "steps": 2,
                "batch_size": 8,
                "warmup_fraction": 0.0,
                "log_every": 1,
                "progress": False,
                **training,
            }
        ).fit(texts, targets, init=path, run_dir=run)
        first = json.loads((run / "metrics.jsonl").read_text().splitlines()[0])
        assert first["lr"] == pytest.approx(peak * 0.5)  # cosine at step 1 of 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"number_format": IEEE()}, r"number format .* != the init model's"),
        ({"number_format": P10(digits=3)}, r"number format .*'digits': 3"),
        ({"specials": ("nan",)}, r"specials \['nan'\] != the init model's \[\]"),
        ({"model": {"encoder_layers": 3}}, r"encoder_layers=3 \(the init model has 2\)"),
        ({"model": {"decoder_dim": 64}}, r"decoder_dim=64"),
    ],
)
def test_conflicts_with_the_init_model_are_named(base, kwargs, message):
    _, path = base
    texts, targets = line_count_task(8, seed=5)
    with pytest.raises(ValueError, match=message):
        RegressionLM(training={"steps": 1}, **kwargs).fit(texts, targets, init=path)


def test_repeating_the_init_models_options_or_changing_dropout_is_fine(base):
    _, path = base
    texts, targets = line_count_task(8, seed=6)
    rlm = RegressionLM(model={**TINY, "dropout": 0.1}, training={"steps": 1, "batch_size": 8, "progress": False})
    assert rlm.fit(texts, targets, init=path).model_.cfg.dropout == 0.1


def test_init_must_be_a_trained_model(tmp_path):
    texts, targets = line_count_task(8, seed=7)
    with pytest.raises(FileNotFoundError, match="holds no trained model"):
        RegressionLM().fit(texts, targets, init=tmp_path)
    with pytest.raises(RuntimeError, match="not fitted"):
        RegressionLM().fit(texts, targets, init=RegressionLM())


def test_cli_train_init(base, tmp_path, capsys):
    _, path = base
    texts, _ = line_count_task(24, seed=8)
    data = tmp_path / "ft.jsonl"
    data.write_text("".join(json.dumps({"text": t, "targets": {"chars": len(t)}}) + "\n" for t in texts))
    out = tmp_path / "run_b"
    code = main(["train", "--init", path, "--data", str(data), "--out", str(out), "--steps", "2",
                 "--batch-size", "8", "--no-progress"])  # fmt: skip
    assert code == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["objectives"] == ["chars"] and summary["init"] == path
    assert RegressionLM.load(out).objectives_ == ["chars"]
    # the init model's architecture is kept: conflicting size flags are an error naming the option
    assert main(["train", "--init", path, "--data", str(data), "--out", str(tmp_path / "c"), "--steps", "1",
                 "--encoder-layers", "5", "--no-progress"]) == 2  # fmt: skip
    assert "encoder_layers=5" in capsys.readouterr().err


def test_context_objectives_are_teacher_forced_not_learned(base):
    _, path = base
    texts, targets = line_count_task(32, seed=5)
    rows = [[t, 2 * t] for t in targets]
    codec = NumberCodec(P10(), 2)
    encoded = encode_targets(codec, np.asarray(rows, dtype=np.float64), "error", [False, True])
    length = codec.length
    assert (encoded.weights[:, :length] == 0).all() and (encoded.weights[:, length:] == 1).all()
    tuned = RegressionLM(training={"steps": 2, "batch_size": 16, "progress": False})
    tuned.fit(texts, rows, objectives=["lines", "double"], context=["lines"], init=path)
    assert tuned.objectives_ == ["lines", "double"]
    with pytest.raises(ValueError, match=r"context must name some but not all of the objectives"):
        tuned.fit(texts, rows, objectives=["lines", "double"], context=["speed"], init=path)
    independent = RegressionLM(vocab_size=300, model=TINY | {"independent_objectives": True}, training={"steps": 1})
    with pytest.raises(ValueError, match=r"context conditions the later objectives .* set it False"):
        independent.fit(texts, rows, objectives=["lines", "double"], context=["lines"])


@pytest.fixture(scope="module")
def two_objectives(tmp_path_factory) -> RegressionLM:
    """A base that writes a text's line count and its length in characters."""
    texts, targets = line_count_task(64, seed=0)
    rlm = RegressionLM(vocab_size=300, max_input_len=96, model=TINY, num_samples=8,
                       training={"steps": 30, "batch_size": 16, "progress": False})  # fmt: skip
    return rlm.fit(texts, [[t, len(x)] for x, t in zip(texts, targets, strict=True)], objectives=["lines", "chars"])


def test_context_init_writes_the_init_objectives_first_and_starts_a_new_one_from_its_nearest(two_objectives):
    base = two_objectives
    texts, _ = line_count_task(24, seed=6)
    new = [len(x) ** 2 for x in texts]  # ranks like "chars"
    tuned = RegressionLM(num_samples=8, training={"steps": 1, "learning_rate": 1e-12, "progress": False})
    tuned.fit(texts, new, objectives=["chars_squared"], init=base, context="init")
    assert tuned.objectives_ == ["lines", "chars", "chars_squared"]
    guessed = base.predict(texts)
    expected = "chars" if spearmanr(guessed[:, 1], new).statistic > spearmanr(guessed[:, 0], new).statistic else "lines"
    assert tuned.fit_report_["transfer"]["chars_squared"]["from"] == expected
    # the new objective's decoder positions are the source objective's; the others are the base's own
    length = base.codec_.length
    table, source = tuned.network_.decoder.pos_emb.weight, base.network_.decoder.pos_emb.weight
    start = base.objectives_.index(expected) * length
    torch.testing.assert_close(table[2 * length :], source[start : start + length])
    torch.testing.assert_close(table[: 2 * length], source)
    # only the new objective is learned: the context ones carry no loss
    assert tuned.predict(texts).shape == (24, 3)


def test_context_init_needs_an_init_model_and_names_apart_from_its_objectives(two_objectives):
    texts, targets = line_count_task(8, seed=7)
    rlm = RegressionLM(training={"steps": 1, "progress": False})
    with pytest.raises(OptionError, match="'init' with init="):
        rlm.fit(texts, targets, context="init")
    with pytest.raises(OptionError, match=r"objectives \['lines'\] from its predictions"):
        rlm.fit(texts, targets, objectives=["lines"], init=two_objectives, context="init")


def test_objectives_the_init_model_has_start_from_themselves_in_any_order(two_objectives):
    texts, targets = line_count_task(16, seed=8)
    rows = [[len(x), t] for x, t in zip(texts, targets, strict=True)]
    tuned = RegressionLM(training={"steps": 1, "learning_rate": 1e-12, "progress": False})
    tuned.fit(texts, rows, objectives=["chars", "lines"], init=two_objectives)
    length = two_objectives.codec_.length
    table, source = tuned.network_.decoder.pos_emb.weight, two_objectives.network_.decoder.pos_emb.weight
    torch.testing.assert_close(table[:length], source[length:])
    torch.testing.assert_close(table[length:], source[:length])
    assert "transfer" not in tuned.fit_report_


def test_adapt_state_takes_the_rows_of_the_sources_given():
    state = {"decoder.pos_emb.weight": torch.arange(12.0).reshape(6, 2)}  # 3 objectives of 2 tokens
    adapted = adapt_state(state, 2, 4, sources=[2, 0])["decoder.pos_emb.weight"]
    assert adapted.tolist() == [[8, 9], [10, 11], [0, 1], [2, 3]]
    with pytest.raises(ValueError, match=r"sources \[3, 0\]: need 2 indices below 3"):
        adapt_state(state, 2, 4, sources=[3, 0])


def test_cli_train_context_init(two_objectives, tmp_path, capsys):
    base = tmp_path / "base"
    two_objectives.save(base)
    texts, _ = line_count_task(16, seed=9)
    data = tmp_path / "dev.jsonl"
    data.write_text("".join(json.dumps({"text": t, "targets": {"words": len(t.split())}}) + "\n" for t in texts))
    out = tmp_path / "run_c"
    assert main(["train", "--init", str(base), "--context", "init", "--data", str(data), "--out", str(out),
                 "--steps", "2", "--batch-size", "8", "--no-progress"]) == 0  # fmt: skip
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["objectives"] == ["lines", "chars", "words"]
    assert summary["transfer"]["words"]["from"] in ("lines", "chars")
    assert RegressionLM.load(out).objectives_ == ["lines", "chars", "words"]
    assert json.loads((out / "train_summary.json").read_text())["context"] == "init"


def test_a_context_model_calibrates_and_evaluates_on_data_with_only_its_new_objective(two_objectives, tmp_path, capsys):
    texts, _ = line_count_task(24, seed=10)
    tuned = RegressionLM(num_samples=8, training={"steps": 2, "progress": False})
    tuned.fit(texts[:12], [len(t.split()) for t in texts[:12]], objectives=["words"], init=two_objectives,
              context="init")  # fmt: skip
    model = tuned.save(tmp_path / "dev")
    held = tmp_path / "held.jsonl"
    held.write_text("".join(json.dumps({"text": t, "targets": {"words": len(t.split())}}) + "\n" for t in texts[12:]))
    assert main(["calibrate", "--model", str(model), "--data", str(held)]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == 12
    assert (
        main(
            ["evaluate", "--model", str(model), "--data", str(held), "--report", str(tmp_path / "ev"), "--no-progress"]
        )
        == 0
    )
    capsys.readouterr()
    unrelated = tmp_path / "other.jsonl"
    unrelated.write_text(json.dumps({"text": "x", "targets": {"speed": 1.0}}) + "\n")
    assert main(["calibrate", "--model", str(model), "--data", str(unrelated)]) == 2
    assert "unknown objective" in capsys.readouterr().err
