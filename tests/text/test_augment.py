import ast
import logging
import random

import numpy as np
import pytest

from coderlm import RegressionLM
from coderlm.text.augment import python_variant, renamable, variants
from coderlm.training.examples import Rows, augmented

PROGRAM = '''
import math
from collections import Counter

LIMIT = 10


def top_words(text, k=2):
    """Most common words.
    >>> top_words("a b a", 1)
    ['a']
    """
    counts = Counter(word for word in text.split())  # one pass
    ranked = sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))
    best = [word for word, _ in ranked[:k]]
    return best


def stats(values, *, scale=1.0):
    total = 0
    for index, value in enumerate(values):
        if index >= LIMIT:
            break
        total += value * scale
    label = f"{total:.1f}"
    try:
        root = math.sqrt(total)
    except ValueError as error:
        root = str(error)
    return {"total": total, "label": label, "root": root}


class Box:
    size = 3

    def grow(self, step):
        self.size = self.size + step
        return self.size
'''


def run(source: str) -> tuple:
    namespace: dict = {}
    exec(compile(source, "<program>", "exec"), namespace)
    box = namespace["Box"]()
    return (
        namespace["top_words"]("x y x z y x", k=2),
        namespace["stats"]([1, 4, 4], scale=2.0),
        namespace["stats"]([-1]),
        box.grow(4),
    )


def test_variants_behave_as_the_program_and_differ_from_it():
    expected = run(PROGRAM)
    texts = variants(PROGRAM, 8, seed=0)
    assert len(texts) == 8 and len(set(texts)) == 8 and PROGRAM not in texts
    for text in texts:
        assert run(text) == expected


def test_local_names_are_renamed_consistently_and_fixed_names_kept():
    names = renamable(ast.parse(PROGRAM))
    local = {"text", "counts", "ranked", "best", "word", "pair", "values", "index", "value", "root", "error", "label"}
    assert names == local | {"step"}
    # functions and classes (doctests call them), parameters with defaults (k) and keyword-only ones (scale),
    # module and class names (LIMIT, size), imports, keyword arguments (key), attributes, names in f-strings
    # (total), builtins and self keep their names
    renamed = next(t for seed in range(20) if "counts" not in (t := python_variant(PROGRAM, random.Random(seed))))
    assert "def top_words(" in renamed and "Counter(" in renamed and "self.size" in renamed
    assert '>>> top_words("a b a", 1)' in renamed  # docstrings untouched


def test_comments_dropped_and_indentation_respelled_in_some_variants():
    texts = variants(PROGRAM, 12, seed=1)
    assert any("# one pass" not in t for t in texts) and any("# one pass" in t for t in texts)
    assert any("\n\treturn best" in t or "\n\treturn" in t for t in texts)  # tabs
    assert any("\n  return" in t for t in texts)  # two spaces


@pytest.mark.parametrize("text", ["t0 = Conv(x0, w0[16,3,3,3])  # [1,16,32,32]\nif then:", "|nor_conv_3x3~0|+|", ""])
def test_text_that_is_not_python_or_has_nothing_to_rewrite_gets_no_variant(text):
    assert variants(text, 3, seed=0) == []


def test_unparsable_text_gives_none():
    assert python_variant("def f(:\n  return", random.Random(0)) is None
    assert variants("onnx opset=18\ninput x0 [1,3,32,32]", 2, seed=0) == []


def test_augmented_rows_carry_their_texts_targets_and_tasks():
    rows = Rows(["def f(a):\n    return a * 2\n", "not python ("], np.array([[1.0, 2.0], [3.0, 4.0]]), ["p", "q"])
    out = augmented(rows, 3, seed=0)
    assert out.texts[:2] == rows.texts and len(out.texts) == 5
    assert np.array_equal(out.values[2:], np.array([[1.0, 2.0]] * 3)) and out.tasks == ["p", "q", "p", "p", "p"]
    assert augmented(rows, 0, seed=0) is rows


def test_augmented_warns_when_nothing_parses(caplog):
    rows = Rows(["|a~0|+|b~1|", "x ="], np.zeros((2, 1)), None)
    with caplog.at_level(logging.WARNING, logger="coderlm"):
        assert augmented(rows, 2, seed=0).texts == rows.texts
    assert "augment=2" in caplog.text


def test_fit_trains_on_the_copies():
    programs = [f"def f(n):\n    out = [0] * n  # {i}\n    return out\n" for i in range(1, 13)]
    tiny = {"encoder_dim": 32, "decoder_dim": 32, "encoder_heads": 4, "decoder_heads": 4}
    rlm = RegressionLM(vocab_size=300, model=tiny, training={"steps": 2, "augment": 2, "progress": False})
    rlm.fit(programs, np.arange(1.0, 13.0))
    assert rlm.fit_report_["examples"] == 36
    assert rlm.predict(programs[:2]).shape == (2, 1)
    with pytest.raises(ValueError, match="augment"):
        RegressionLM(training={"augment": -1}).fit(programs, np.arange(1.0, 13.0))
