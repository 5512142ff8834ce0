"""Encoder-output cache: same losses as running the frozen encoder, reuse, invalidation, resume, DDP."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from coderlm import RegressionLM  # noqa: E402
from coderlm.data.toy import line_count_task  # noqa: E402
from coderlm.model import ModelConfig  # noqa: E402
from coderlm.model.hf_encoder import PretrainedEncoder  # noqa: E402
from coderlm.text.hf_tokenizer import PretrainedTokenizer  # noqa: E402
from coderlm.training.encoder_cache import EncoderCache  # noqa: E402
from tests.hf_tiny import make_bert, make_t5gemma  # noqa: E402

DECODER = {"decoder_dim": 32, "decoder_heads": 4}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("encoders")
    made = {"bert": make_bert(root / "bert"), "bert_other": make_bert(root / "bert_other", seed=1)}
    if hasattr(transformers, "T5GemmaModel"):
        made["t5gemma"] = make_t5gemma(root / "t5gemma")
    return made


def fit(folder, cache: str, dtype: str = "fp32", steps: int = 6, **kwargs) -> RegressionLM:
    texts, targets = line_count_task(32, seed=0)
    training = {"steps": steps, "batch_size": 8, "progress": False, "encoder_cache": cache, "cache_dtype": dtype}
    rlm = RegressionLM(max_input_len=48, model={"encoder": str(folder), **DECODER}, training=training)
    return rlm.fit(texts, targets, **kwargs)


@pytest.mark.parametrize("name", ["bert", "t5gemma"])
def test_cached_training_gives_the_uncached_losses(folders, name, tmp_path):
    if name not in folders:
        pytest.skip("this transformers has no T5Gemma")
    plain = fit(folders[name], "off").loss_history_
    memory = fit(folders[name], "memory")
    disk = fit(folders[name], "disk", run_dir=tmp_path / "run")
    np.testing.assert_allclose(memory.loss_history_, plain, rtol=1e-5)
    np.testing.assert_allclose(disk.loss_history_, plain, rtol=1e-5)
    assert memory.fit_report_["encoder_cache"]["computed"] == 32  # each distinct input once, for all 6 steps
    half = fit(folders[name], "memory", dtype="fp16").loss_history_
    np.testing.assert_allclose(half, plain, rtol=2e-3)  # fp16 states: close, not equal
    # the cached model predicts from raw text like any other
    assert disk.predict(["x1 = 2\n"], num_samples=4).shape == (1, 1)


def _cache(folder, cache_dir, max_length: int = 48):
    cfg = ModelConfig(
        input_vocab_size=99,
        output_vocab_size=33,
        output_length=6,
        encoder_dim=32,
        encoder=str(folder),
        decoder_dim=32,
        decoder_heads=4,
    )
    encoder = PretrainedEncoder(cfg)
    tokens = PretrainedTokenizer.from_folder(folder).encode(line_count_task(10, seed=1)[0], max_length)
    cache = EncoderCache(encoder, "fp16", cache_dir)
    return cache, cache.states(tokens, max_length), encoder, tokens


def test_disk_cache_is_reused_and_invalidated_by_encoder_or_length(folders, tmp_path):
    cache, first, encoder, tokens = _cache(folders["bert"], tmp_path)
    assert cache.computed == 10
    again, second, _, _ = _cache(folders["bert"], tmp_path)  # a later run: everything found on disk
    assert again.computed == 0
    assert all(torch.equal(a, b) for a, b in zip(first, second, strict=True))
    row = 3
    width = int(tokens.mask[row].sum())
    direct = encoder.states(
        torch.from_numpy(tokens.ids[row : row + 1, :width]), torch.from_numpy(tokens.mask[row : row + 1, :width])
    )[0]
    torch.testing.assert_close(second[row].float(), direct, atol=2e-3, rtol=2e-3)
    other_length, _, _, _ = _cache(folders["bert"], tmp_path, max_length=40)
    assert other_length.computed == 10
    other_encoder, _, _, _ = _cache(folders["bert_other"], tmp_path)  # same config, other weights
    assert other_encoder.computed == 10 and other_encoder.identity != cache.identity


def test_cache_needs_a_frozen_pretrained_encoder(folders):
    texts, targets = line_count_task(8, seed=2)
    with pytest.raises(ValueError, match="encoder_cache needs a frozen pretrained encoder"):
        RegressionLM(model=DECODER, training={"steps": 1, "encoder_cache": "memory"}).fit(texts, targets)
    with pytest.raises(ValueError, match="encoder_cache needs a frozen pretrained encoder"):
        RegressionLM(
            model={"encoder": str(folders["bert"]), "train_encoder": True, **DECODER},
            training={"steps": 1, "encoder_cache": "memory"},
        ).fit(texts, targets)


def test_resume_with_the_disk_cache(folders, tmp_path):
    fit(folders["bert"], "disk", steps=3, run_dir=tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    cached = fit(folders["bert"], "disk", steps=6, run_dir=tmp_path / "a", resume=True)
    assert cached.fit_report_["encoder_cache"]["computed"] == 0  # the states were on disk
    plain = fit(folders["bert"], "off", steps=6, run_dir=tmp_path / "b", resume=True)
    assert len(cached.loss_history_) == 3
    np.testing.assert_allclose(cached.loss_history_, plain.loss_history_, rtol=1e-5)


DDP_SCRIPT = """
import json, sys, torch, torch.distributed as dist
from coderlm import RegressionLM
from coderlm.data.toy import line_count_task
from coderlm.training.distributed import exit_process, shutdown_distributed
texts, targets = line_count_task(32, seed=0)
training = {"steps": 4, "batch_size": 8, "progress": False, "encoder_cache": "disk", "cache_dir": sys.argv[2],
            "cache_dtype": "fp32"}
rlm = RegressionLM(max_input_len=48, model={"encoder": sys.argv[1], "decoder_dim": 32, "decoder_heads": 4},
                   training=training).fit(texts, targets)
flat = torch.cat([p.detach().flatten() for p in rlm.network_.parameters() if p.requires_grad])
gathered = [torch.zeros_like(flat) for _ in range(dist.get_world_size())]
dist.all_gather(gathered, flat)
report = {"same": all(torch.equal(g, flat) for g in gathered), "losses": rlm.loss_history_,
          "computed": rlm.fit_report_["encoder_cache"]["computed"]}
with open(f"{sys.argv[2]}-rank{dist.get_rank()}.json", "w") as f:
    json.dump(report, f)
if shutdown_distributed():
    exit_process(0)
"""


@pytest.mark.slow
def test_ddp_ranks_share_one_disk_cache(folders, tmp_path):
    script = tmp_path / "ddp.py"
    script.write_text(DDP_SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "OMP_NUM_THREADS": "1"}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        str(script),
        str(folders["bert"]),
        str(tmp_path / "cache"),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    reports = [json.loads((tmp_path / f"cache-rank{rank}.json").read_text()) for rank in (0, 1)]
    assert sorted(r["computed"] for r in reports) == [0, 32]  # one rank computed, the other read its states
    assert all(r["same"] for r in reports) and reports[0]["losses"] == reports[1]["losses"]
