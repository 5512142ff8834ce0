"""Structure markers: a reversible rewrite of newlines and leading indentation."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coderlm.text.hf_tokenizer import mark_structure, unmark_structure


@pytest.mark.parametrize(
    ("text", "marked"),
    [
        ("a = 1", "a = 1"),
        ("if x:\n    return 1\n", "if x:¶»return 1¶"),
        ("def f():\n        y\n\tz", "def f():¶»»y¶→z"),
        ("  two spaces", "  two spaces"),  # less than one indent unit stays as is
        ("      six", "»  six"),
        ("a ¶ b » c → d § e", "a §¶ b §» c §→ d §§ e"),  # literal markers are escaped
        ("\n\n", "¶¶"),
        ("", ""),
    ],
)
def test_marking_table(text, marked):
    assert mark_structure(text) == marked
    assert unmark_structure(marked) == text


@given(st.text(alphabet=st.sampled_from(list("ab \t\n¶»→§x:")), max_size=60))
def test_unmark_inverts_mark(text):
    assert unmark_structure(mark_structure(text)) == text


@given(st.text(max_size=80))
def test_unmark_inverts_mark_on_any_text(text):
    assert unmark_structure(mark_structure(text)) == text
