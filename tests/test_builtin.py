"""Models shipped in the package: ``builtin:<name>`` wherever a model folder is taken, fp16 weights."""

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

import coderlm.builtin
from coderlm import RegressionLM
from coderlm.builtin import builtin_names, model_folder
from coderlm.cli import main
from coderlm.data.toy import line_count_task

TINY = {"encoder_dim": 32, "decoder_dim": 32, "encoder_heads": 4, "decoder_heads": 4}


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """A tiny model saved as the package ships one: a folder beside coderlm.builtin, weights in fp16."""
    texts, targets = line_count_task(40, seed=0)
    rlm = RegressionLM(vocab_size=300, model=TINY, num_samples=8, training={"steps": 30, "progress": False})
    rlm.fit(texts, targets)
    monkeypatch.setattr(coderlm.builtin, "HERE", tmp_path / "builtin")
    folder = tmp_path / "builtin" / "tiny"
    rlm.save(folder)
    weights = folder / "model.safetensors"
    save_file({k: v.to(torch.float16) for k, v in load_file(str(weights)).items()}, str(weights))
    return rlm, texts


def test_a_builtin_model_loads_from_fp16_weights_and_predicts_like_the_original(shipped):
    rlm, texts = shipped
    assert builtin_names() == ["tiny"]
    loaded = RegressionLM.load("builtin:tiny")
    assert all(p.dtype == torch.float32 for p in loaded.network_.parameters())  # fp16 on disk, fp32 to compute
    ours = loaded.sample(texts[:8], num_samples=8, seed=0)
    theirs = rlm.sample(texts[:8], num_samples=8, seed=0)
    assert np.mean(ours == theirs) > 0.8  # fp16 rounding may move a few sampled digits, not the model


def test_builtin_models_initialise_training_and_name_the_missing_ones(shipped, tmp_path, capsys):
    _, texts = shipped
    tuned = RegressionLM(training={"steps": 2, "progress": False}).fit(texts[:10], np.arange(10.0), init="builtin:tiny")
    assert tuned.predict(texts[:2]).shape == (2, 1)
    with pytest.raises(FileNotFoundError, match=r"builtin:nope: no such built-in model; built-in models: builtin:tiny"):
        model_folder("builtin:nope")
    assert model_folder("runs/a").as_posix() == "runs/a"
    assert main(["predict", "--model", "builtin:nope", "-"]) == 2
    assert "builtin:nope: no such built-in model" in capsys.readouterr().err


def test_the_shipped_python_encoder_starts_rlms_and_is_no_model_to_predict_with(capsys):
    assert {"nb201", "python-encoder"} <= set(builtin_names())
    texts = [f"def f(xs):\n    return [x * {i} for x in xs]\n" * (i % 4 + 1) for i in range(12)]
    rlm = RegressionLM(max_input_len=64, num_samples=4, batch_size=4, training={"steps": 2, "progress": False})
    rlm.fit(texts, np.arange(12.0) + 1, init="builtin:python-encoder")
    body = rlm.network_.encoder.body
    assert body.config.model_type == "bert" and body.config.vocab_size == 1024  # the shipped BERT, fine-tuned
    assert all(p.dtype == torch.float32 for p in body.parameters())  # fp16 on disk, fp32 to compute
    assert np.isfinite(rlm.predict(texts[:2])).all()
    with pytest.raises(ValueError, match="builtin:python-encoder: a pretrained encoder, not a trained model"):
        RegressionLM.load("builtin:python-encoder")
    assert main(["predict", "--model", "builtin:python-encoder", "-"]) == 2
    assert "coderlm train --init builtin:python-encoder" in capsys.readouterr().err
