import math

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from coderlm import RegressionLM
from coderlm.builtin import model_folder
from coderlm.model.hf_encoder import PretrainedEncoder
from coderlm.model.number_values import NumberValues, digit_table, run_log_values
from coderlm.options import OptionError
from coderlm.text import BPETokenizer, PretrainedTokenizer
from tests.conftest import tiny_config
from tests.hf_tiny import make_bert

TINY = {"encoder_dim": 32, "decoder_dim": 32, "encoder_heads": 4, "decoder_heads": 4}
DIGITS = list(range(10, 20))  # token id 10 + d stands for digit d


def test_runs_of_digits_get_their_numbers_log_value():
    table = digit_table(30, DIGITS)
    # <s> 2 0 4 8 0 a 7 b 0 0 5 <pad>: the runs 20480, 7 and 005
    ids = torch.tensor([[1, 12, 10, 14, 18, 10, 2, 17, 3, 10, 10, 15, 0]])
    is_digit, log_value = run_log_values(ids, table)
    assert is_digit[0].tolist() == [False, *[True] * 5, False, True, False, True, True, True, False]
    expected = [0.0, *[math.log10(20481)] * 5, 0.0, math.log10(8), 0.0, *[math.log10(6)] * 3, 0.0]
    assert log_value[0].tolist() == pytest.approx(expected, abs=1e-5)


def test_long_runs_keep_four_significant_digits_and_stay_finite():
    table = digit_table(30, DIGITS)
    ids = torch.tensor([[10 + int(c) for c in "12345678"] + [10 + 9] * 40])
    _, log_value = run_log_values(ids[:, :8], table)
    assert log_value[0, 0].item() == pytest.approx(math.log10(1.234e7), abs=1e-5)
    _, huge = run_log_values(ids, table)
    assert torch.isfinite(huge).all()


def test_only_digit_tokens_get_the_value_embedding():
    torch.manual_seed(0)
    module = NumberValues(30, DIGITS, 8)
    out = module(torch.tensor([[1, 12, 13, 2, 0]]))
    assert out[0, [0, 3, 4]].abs().sum() == 0
    assert out[0, 1].abs().sum() > 0
    assert torch.allclose(out[0, 1], out[0, 2])  # both tokens of "23"


def test_digit_ids_of_a_tokenizer_that_splits_digits():
    texts = ["for (int i = 0; i < 4096; i += 16) {}\n" * 3, "x = 12345\n"] * 20
    tokenizer = BPETokenizer.train(texts, vocab_size=300, pretokenize="lines+digits")
    ids = tokenizer.digit_ids()
    assert [tokenizer.decode([i]) for i in ids] == [str(d) for d in range(10)]
    merged = BPETokenizer.train(texts, vocab_size=300, pretokenize="lines")
    with pytest.raises(ValueError, match="merges digits"):
        merged.digit_ids()


def test_number_values_need_an_encoder_that_trains_and_ten_digit_ids():
    with pytest.raises(OptionError, match="needs an encoder that trains"):
        tiny_config(number_values=True, digit_ids=DIGITS, encoder="some/folder")  # frozen
    with pytest.raises(ValueError, match="10 digit tokens"):
        tiny_config(number_values=True, digit_ids=DIGITS[:3])
    assert tiny_config(number_values=True, digit_ids=DIGITS).digit_ids == tuple(DIGITS)


def loop_task(n: int, seed: int) -> tuple[list[str], np.ndarray]:
    """The target is the loop bound written in the text, 10..1e6 (held-out bounds are mostly unseen)."""
    bounds = (10 ** np.random.default_rng(seed).uniform(1, 6, n)).astype(int)
    return [f"x = load()\nfor i in range({k}):\n    x += 1\n" for k in bounds], bounds.astype(float)


def fit_loops(number_values: bool) -> RegressionLM:
    rlm = RegressionLM(
        vocab_size=300,
        max_input_len=64,
        model={**TINY, "number_values": number_values},
        training={"steps": 150, "batch_size": 32, "progress": False},
        num_samples=16,
    )
    return rlm.fit(*loop_task(300, seed=0))


def test_number_values_let_a_small_model_read_a_bound_as_a_magnitude(tmp_path):
    texts, bounds = loop_task(100, seed=1)
    plain = spearmanr(fit_loops(False).predict(texts)[:, 0], bounds).statistic
    rlm = fit_loops(True)
    valued = spearmanr(rlm.predict(texts)[:, 0], bounds).statistic
    assert valued > 0.6 and valued > plain + 0.2  # measured 0.75 vs 0.27 at 150 steps
    rlm.save(tmp_path / "run")
    again = RegressionLM.load(tmp_path / "run")
    assert again.model_.cfg.number_values and len(again.model_.cfg.digit_ids) == 10
    assert np.array_equal(again.sample(texts[:4], seed=3), rlm.sample(texts[:4], seed=3))


def test_number_values_refuse_a_tokenizer_that_merges_digits():
    texts, bounds = loop_task(40, seed=0)
    rlm = RegressionLM(
        vocab_size=300, pretokenize="lines", model={**TINY, "number_values": True}, training={"steps": 1}
    )
    with pytest.raises(OptionError, match=r"number_values .*lines\+digits"):
        rlm.fit(texts, bounds)


def test_a_fine_tuned_pretrained_encoder_starts_as_it_was_and_learns_the_values(tmp_path):
    folder = str(model_folder("builtin:python-encoder"))
    tokenizer = PretrainedTokenizer.from_folder(folder)
    digits = tokenizer.digit_ids()
    assert [tokenizer.decode([i]) for i in digits] == [str(d) for d in range(10)]
    cfg = tiny_config(
        encoder=folder,
        train_encoder=True,
        encoder_dim=128,
        input_vocab_size=tokenizer.vocab_size,
        max_input_len=64,
        number_values=True,
        digit_ids=digits,
    )
    encoder = PretrainedEncoder(cfg).eval()
    batch = tokenizer.encode(["for i in range(4096):\n    x += 1\n"], 64)
    ids, mask = torch.as_tensor(batch.ids), torch.as_tensor(batch.mask)
    plain = encoder.body(input_ids=ids, attention_mask=mask.long()).last_hidden_state
    assert torch.equal(encoder.states(ids, mask), plain)  # the value embedding starts at zero

    texts, bounds = loop_task(48, seed=0)
    rlm = RegressionLM(
        max_input_len=64,
        model={"number_values": True, "decoder_dim": 32, "decoder_heads": 4},
        training={"steps": 4, "batch_size": 8, "progress": False},
        num_samples=4,
    )
    rlm.fit(texts, bounds, init="builtin:python-encoder")
    values = rlm.network_.encoder.number_values
    assert values is not None and values.proj.weight.abs().sum() > 0  # trained with the body
    rlm.save(tmp_path / "run")
    again = RegressionLM.load(tmp_path / "run")
    assert again.network_.encoder.number_values is not None
    assert np.array_equal(again.sample(texts[:3], seed=2), rlm.sample(texts[:3], seed=2))


def test_a_pretrained_tokenizer_that_joins_digits_is_refused(tmp_path):
    tokenizer = PretrainedTokenizer.from_folder(make_bert(tmp_path / "bert"))  # WordPiece: "##3"
    with pytest.raises(ValueError, match=r"merges digits with other characters.*splits digits"):
        tokenizer.digit_ids()
