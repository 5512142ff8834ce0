"""Pretraining: corpus reading, span masking, the loop and its folder, and RLMs started from it."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from safetensors.torch import load_file

from coderlm import RegressionLM
from coderlm.cli import main
from coderlm.model.hf_encoder import is_encoder_folder
from coderlm.pretraining import pretrain
from coderlm.pretraining.corpus import read_corpus
from coderlm.pretraining.masking import IGNORE, mask_spans
from coderlm.pretraining.pretrain import bpe_sample, cut_windows
from coderlm.text.hf_tokenizer import PretrainedTokenizer
from coderlm.training import Callback, trainer

TINY = {"vocab_size": 300, "max_len": 48, "hidden_size": 32, "layers": 1, "heads": 4, "intermediate_size": 64}
QUIET = {"progress": False, "batch_size": 8, "eval_every": 4, "checkpoint_every": 4, "log_every": 1}


def program(rng: random.Random) -> str:
    """A small Python function: loops and sums of random depth, so the text has structure to learn."""
    name, n = rng.choice(["total", "count", "acc"]), rng.randint(1, 4)
    lines = [f"def f{rng.randint(0, 99)}(xs):", f"    {name} = 0"]
    lines += ["    for x in xs:" if i == 0 else "        " + "    " * (i - 1) + "for y in xs:" for i in range(n)]
    lines += ["    " * (n + 1) + f"{name} += x", f"    return {name}"]
    return "\n".join(lines) + "\n"


def write_corpus(path: Path, n: int = 120, seed: int = 0) -> Path:
    rng = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(n):
            f.write(json.dumps({"text": program(rng), "targets": {"y": 1.0}}) + "\n")
    return path


# ----------------------------------------------------------------------------------------------- corpus
def test_corpus_reads_folders_jsonl_gz_parquet_and_files_once_each(tmp_path):
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "a.py").write_text("print(1)\n")
    (tree / "b.go").write_text("package main\n")
    (tree / "image.png").write_bytes(b"\x89PNG")  # not a source suffix: ignored
    (tree / "latin1.py").write_bytes("s = 'caf\xe9'\n".encode("latin-1"))  # not UTF-8: skipped, counted
    with gzip.open(tmp_path / "code.jsonl.gz", "wt") as f:
        f.write(json.dumps({"code": "int main() {}\n"}) + "\n" + json.dumps({"code": "print(1)\n"}) + "\n")
    pq.write_table(pa.table({"code": ["fn main() {}\n"]}), tmp_path / "rows.parquet")
    (tmp_path / "notes.md").write_text("a whole file\n")

    corpus = read_corpus([tree, tmp_path / "code.jsonl.gz", tmp_path / "rows.parquet"], field="code")
    assert sorted(corpus.texts) == sorted(["print(1)\n", "package main\n", "int main() {}\n", "fn main() {}\n"])
    assert corpus.duplicates == 1  # print(1) from the folder and from the JSONL file
    assert corpus.skipped == {"file not UTF-8": 1}
    assert corpus.sources[str(tree)] == 2
    assert read_corpus([tmp_path / "notes.md"]).texts == ["a whole file\n"]


def test_corpus_errors_name_the_file_line_and_field(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"text": "a"}\n{"code": "b"}\n')
    with pytest.raises(ValueError, match=r"rows\.jsonl:2: field 'text' is missing"):
        read_corpus([rows])
    rows.write_text('{"text": "a"}\n{"text": 3}\n')
    with pytest.raises(ValueError, match=r"rows\.jsonl:2: field 'text' must be a string"):
        read_corpus([rows])
    rows.write_text('{"text": "a"}\n{oops\n')
    with pytest.raises(ValueError, match=r"rows\.jsonl:2: not JSON"):
        read_corpus([rows])
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        read_corpus([tmp_path / "absent.jsonl"])
    with pytest.raises(ValueError, match="no pretraining data"):
        read_corpus([])


# ---------------------------------------------------------------------------------------------- masking
def test_spans_hide_the_rate_contiguously_and_never_specials_or_padding():
    rng = np.random.default_rng(0)
    ids = rng.integers(5, 300, size=(64, 200))
    ids[:, 0] = 1  # <s>
    real = np.arange(200)[None, :] < rng.integers(20, 201, size=64)[:, None]
    ids[~real] = 0
    maskable = real & (ids != 1)
    inputs, labels = mask_spans(ids, maskable, np.random.default_rng(1), mask_id=2, first_token=3, vocab_size=300)
    hidden = labels != IGNORE
    assert not (hidden & ~maskable).any()
    assert (labels[hidden] == ids[hidden]).all()
    assert (inputs[~hidden] == ids[~hidden]).all()  # only hidden positions change
    share = hidden.sum() / maskable.sum()
    assert 0.13 < share < 0.17
    assert 0.7 < (inputs[hidden] == 2).mean() < 0.9  # most spans become <mask>
    runs = [len(run) for row in hidden for run in "".join("x" if h else " " for h in row).split()]
    assert np.mean(runs) > 2.0  # spans, not single tokens (mean 3, capped by budget and overlaps)
    again = mask_spans(ids, maskable, np.random.default_rng(1), mask_id=2, first_token=3, vocab_size=300)
    assert (again[0] == inputs).all() and (again[1] == labels).all()  # a function of the generator


def test_windows_cover_each_document_after_a_start_token_short_tails_dropped():
    windows = cut_windows([list(range(100, 130)), [7, 8], list(range(200, 225))], max_len=12, start_id=1)
    pieces = [windows.tokens[a:b].tolist() for a, b in zip(windows.offsets[:-1], windows.offsets[1:], strict=True)]
    assert pieces == [
        [1, *range(100, 111)],
        [1, *range(111, 122)],
        [1, *range(122, 130)],  # 8 tokens: kept
        [1, 7, 8],  # a whole short document: kept
        [1, *range(200, 211)],
        [1, *range(211, 222)],
    ]  # 222-224: a 3-token tail, dropped


def test_the_bpe_learns_from_a_seeded_sample_of_about_bpe_chars():
    texts = [f"doc {i} " * (i + 1) for i in range(200)]
    assert bpe_sample(texts, 0, seed=0) is texts and bpe_sample(texts, 10**9, seed=0) is texts
    sample = bpe_sample(texts, 5000, seed=0)
    assert 5000 <= sum(map(len, sample)) < 5000 + max(map(len, texts)) and set(sample) < set(texts)
    assert sample == bpe_sample(texts, 5000, seed=0) and sample != bpe_sample(texts, 5000, seed=1)


# ----------------------------------------------------------------------------------- the loop, the folder
@pytest.fixture(scope="module")
def encoder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pretrain")
    result = pretrain(
        [write_corpus(root / "corpus.jsonl")],
        root / "enc",
        config=TINY,
        training=QUIET | {"steps": 40, "learning_rate": 5e-3},
    )
    return result.folder


def test_pretraining_lowers_the_validation_loss_and_writes_an_encoder_folder(encoder):
    record = json.loads((encoder / "pretrain.json").read_text())
    val = [loss for _, loss in record["result"]["val_losses"]]
    assert val[-1] < val[0] - 1.0  # from ~log(300) toward the corpus's few patterns
    assert record["corpus"]["documents"] > 50 and record["windows"]["val"] > 0
    assert is_encoder_folder(encoder)
    config = json.loads((encoder / "config.json").read_text())
    assert config["model_type"] == "bert" and config["hidden_size"] == 32 and config["max_position_embeddings"] == 48
    tokenizer = PretrainedTokenizer.from_folder(encoder)
    assert not tokenizer.structure  # byte-level BPE keeps newlines and indentation: no markers needed
    text = "def f(xs):\n    return 12\n"
    ids = tokenizer.tokenize([text])[0]
    assert ids[0] == 1 and tokenizer.decode(ids) == text  # <s> first, exact round trip, digits one by one


class RunInterruptedError(Exception):
    pass


class StopAfter(Callback):
    def on_step_end(self, step: int) -> None:
        if step == 4:  # after step 4's checkpoint
            raise RunInterruptedError


def test_an_interrupted_run_resumes_to_the_same_weights(tmp_path, monkeypatch):
    corpus = write_corpus(tmp_path / "corpus.jsonl", n=60)
    straight = pretrain([corpus], tmp_path / "a", config=TINY, training=QUIET | {"steps": 8})
    original = trainer.Trainer.__init__
    monkeypatch.setattr(
        trainer.Trainer, "__init__", lambda self, *a, **k: original(self, *a, **k, callbacks=[StopAfter()])
    )
    with pytest.raises(RunInterruptedError):
        pretrain([corpus], tmp_path / "b", config=TINY, training=QUIET | {"steps": 8})
    monkeypatch.undo()
    assert not (tmp_path / "b" / "config.json").exists()  # no model folder until the run ends
    resumed = pretrain([corpus], tmp_path / "b", config=TINY, training=QUIET | {"steps": 8}, resume=True)
    a, b = load_file(str(straight.folder / "model.safetensors")), load_file(str(resumed.folder / "model.safetensors"))
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    with pytest.raises(ValueError, match="already holds a run"):
        pretrain([corpus], tmp_path / "b", config=TINY, training=QUIET | {"steps": 8})


def test_rlms_start_from_the_encoder_fine_tuned_or_frozen(encoder, tmp_path):
    rng = random.Random(3)
    texts = [program(rng) for _ in range(24)]
    y = [t.count("for") for t in texts]
    training = {"steps": 3, "batch_size": 8, "progress": False}
    tuned = RegressionLM(training=training, num_samples=4).fit(texts, y, init=encoder)
    cfg = tuned.network_.cfg
    assert cfg.encoder == str(encoder) and cfg.train_encoder and cfg.input_vocab_size == 300
    body = tuned.network_.encoder.body
    assert not torch.equal(body.embeddings.word_embeddings.weight, load_encoder_embeddings(encoder))  # trained
    tuned.save(tmp_path / "tuned")
    assert RegressionLM.load(tmp_path / "tuned").predict(texts[:2]).shape == (2, 1)

    frozen = RegressionLM(model={"encoder": str(encoder)}, training=training | {"encoder_cache": "memory"})
    frozen.fit(texts, y)
    body = frozen.network_.encoder.body
    assert torch.equal(body.embeddings.word_embeddings.weight, load_encoder_embeddings(encoder))  # left as it was


def test_a_trained_encoder_defaults_to_the_fine_tuning_rate_a_frozen_one_to_the_fresh_rate(encoder, tmp_path):
    rng = random.Random(4)
    texts = [program(rng) for _ in range(16)]
    y = [t.count("for") for t in texts]
    base = {"steps": 2, "batch_size": 8, "warmup_fraction": 0.0, "log_every": 1, "progress": False}
    runs = (
        ("tuned", {}, {}, 3e-4),  # init= a pretrained encoder, trained under the new decoder
        ("set", {}, {"learning_rate": 1e-4}, 1e-4),  # a rate the user sets wins
        ("frozen", {"train_encoder": False}, {}, 1e-3),  # only the fresh decoder trains
    )
    for name, model, training, peak in runs:
        run = tmp_path / name
        rlm = RegressionLM(model=model, training=base | training).fit(texts, y, init=encoder, run_dir=run)
        first = json.loads((run / "metrics.jsonl").read_text().splitlines()[0])
        assert first["lr"] == pytest.approx(peak * 0.5), name  # cosine at step 1 of 2
        assert rlm.fit_report_["learning_rate"] == peak  # kept with the model


def load_encoder_embeddings(folder: Path) -> torch.Tensor:
    return load_file(str(folder / "model.safetensors"))["bert.embeddings.word_embeddings.weight"]


def test_a_saved_coderlm_model_is_not_an_encoder_folder(tmp_path):
    model = RegressionLM(training={"steps": 1, "batch_size": 4, "progress": False}, vocab_size=300)
    model.fit(["a = 1\n", "b = 22\n", "c = 333\n", "d = 4444\n"], [1.0, 2.0, 3.0, 4.0]).save(tmp_path / "m")
    assert not is_encoder_folder(tmp_path / "m") and not is_encoder_folder(tmp_path / "nothing")


# ------------------------------------------------------------------------------------------ command line
def test_command_line_pretrains_and_reports(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "corpus.jsonl", n=40)
    flags = ["--vocab-size", "300", "--max-len", "48", "--hidden-size", "32", "--layers", "1", "--heads", "4"]
    flags += ["--intermediate-size", "64", "--steps", "2", "--batch-size", "4", "--no-progress"]
    assert main(["pretrain", "--data", str(corpus), "--data", str(corpus), "--out", str(tmp_path / "enc"), *flags]) == 0
    summary = json.loads(capsys.readouterr().out)
    distinct = len({json.loads(line)["text"] for line in corpus.read_text().splitlines()})  # given twice: once each
    assert summary["encoder"] == str(tmp_path / "enc") and summary["steps"] == 2 and summary["documents"] == distinct
    assert (tmp_path / "enc" / "config.json").is_file()


def test_command_line_stops_at_max_seconds_with_a_bpe_sample(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "corpus.jsonl", n=60)
    flags = ["--vocab-size", "300", "--max-len", "48", "--hidden-size", "32", "--layers", "1", "--heads", "4"]
    flags += ["--intermediate-size", "64", "--steps", "1000000", "--max-seconds", "1", "--bpe-chars", "2000"]
    assert main(["pretrain", "--data", str(corpus), "--out", str(tmp_path / "enc"), *flags, "--no-progress"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["out_of_time"] and 0 < summary["steps"] < 1000000
    assert (tmp_path / "enc" / "config.json").is_file()


def test_line_pretokenizing_merges_across_punctuation_for_machine_written_text(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "corpus.jsonl", n=60)
    flags = ["--vocab-size", "300", "--max-len", "48", "--hidden-size", "32", "--layers", "1", "--heads", "4"]
    flags += ["--intermediate-size", "64", "--steps", "1", "--batch-size", "4", "--no-progress"]
    vocabularies = {}
    for how in ("code", "lines"):
        out = tmp_path / how
        assert main(["pretrain", "--data", str(corpus), "--out", str(out), *flags, "--pretokenize", how]) == 0
        vocabularies[how] = PretrainedTokenizer.from_folder(out).tokenizer.get_vocab()
        assert json.loads((out / "pretrain.json").read_text())["pretrain"]["pretokenize"] == how
    # "(" and "xs" are separate pieces for code; every line is one piece for lines, so they merge
    assert not any("(xs" in token for token in vocabularies["code"])
    assert any("(xs" in token for token in vocabularies["lines"])
    capsys.readouterr()


def test_command_line_errors_are_one_line(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "corpus.jsonl", n=4)
    assert main(["pretrain", "--out", str(tmp_path / "x")]) == 2
    assert "--data is required" in capsys.readouterr().err
    assert main(["pretrain", "--data", str(corpus), "--out", str(tmp_path / "x"), "--field", "code"]) == 2
    assert "corpus.jsonl:1: field 'code' is missing" in capsys.readouterr().err
    assert main(["pretrain", "--data", str(corpus), "--out", str(tmp_path / "x"), "--heads", "5"]) == 2
    assert "--heads 5 must divide hidden_size=256" in capsys.readouterr().err
    assert main(["pretrain", "--data", str(corpus), "--out", str(tmp_path / "x"), "--pretokenize", "words"]) == 2
    assert "pretokenize must be one of code, lines, lines+digits, got 'words'" in capsys.readouterr().err
