import pytest

from coderlm.text import BPETokenizer

CODE = [
    "def add(a, b):\n    return a + b\n",
    "class Stack:\n\tdef push(self, x):\n\t\tself.items.append(x)\n",
    "for i in range(10):\n    if i % 2 == 0:\n        print(i)\n",
    "int main() {\n  return 42;\n}\n",
    "Conv kernel=[3, 3] pads=[1, 1, 1, 1] -> t7 (1, 16, 32, 32)\n",
] * 20


@pytest.fixture(scope="module")
def tokenizer() -> BPETokenizer:
    return BPETokenizer.train(CODE, vocab_size=400)


def test_round_trip_keeps_whitespace_and_case(tokenizer):
    for text in [*CODE[:5], "  MiXeD Case\n\n\ttabs  ", "unicode: naïve → λ 🚀"]:
        assert tokenizer.decode(tokenizer.tokenize([text])[0]) == text


def test_digits_are_split(tokenizer):
    ids = tokenizer.tokenize(["x = 12345"])[0]
    pieces = [tokenizer.tokenizer.id_to_token(i) for i in ids]
    assert pieces[-5:] == ["1", "2", "3", "4", "5"]


def test_indentation_is_visible(tokenizer):
    flat = tokenizer.tokenize(["if x:\ny = 1\n"])[0]
    indented = tokenizer.tokenize(["if x:\n    y = 1\n"])[0]
    assert flat != indented


def test_learned_merges_compress_the_corpus(tokenizer):
    text = CODE[0]
    assert len(tokenizer.tokenize([text])[0]) < len(text.encode()) / 2
    assert tokenizer.vocab_size <= 400


def test_encode_pads_truncates_and_counts(tokenizer):
    batch = tokenizer.encode(["a", CODE[2]], max_length=8)
    assert batch.ids.shape == (2, 8)
    assert batch.ids[0, 0] == tokenizer.start_id and batch.ids[0, -1] == tokenizer.pad_id
    assert batch.mask[0].sum() == batch.lengths[0] == 2  # <s> + "a"
    assert batch.mask[1].all() and batch.lengths[1] > 8
    assert batch.truncated == 1
    short = tokenizer.encode(["a", "b"], max_length=64)
    assert short.ids.shape == (2, 2) and short.truncated == 0


def test_save_load(tokenizer, tmp_path):
    tokenizer.save(tmp_path / "tokenizer.json")
    again = BPETokenizer.load(tmp_path / "tokenizer.json")
    assert again.tokenize(CODE[:3]) == tokenizer.tokenize(CODE[:3])


def test_vocab_size_too_small():
    with pytest.raises(ValueError, match="vocab_size must be >= 259"):
        BPETokenizer.train(CODE, vocab_size=100)


MACHINE_TEXT = [
    "".join(f"t{i + k} = Conv[pads=[1,1,1,1]](t{i + k - 1}, w{k}[16,16,3,3])  # [1,16,32,32]\n" for k in range(20))
    for i in range(30)
]


def test_lines_pretokenizer_compresses_machine_text_and_round_trips():
    code = BPETokenizer.train(MACHINE_TEXT, vocab_size=600)
    lines = BPETokenizer.train(MACHINE_TEXT, vocab_size=600, pretokenize="lines")
    text = MACHINE_TEXT[3]
    assert lines.decode(lines.tokenize([text])[0]) == text
    assert len(lines.tokenize([text])[0]) < len(code.tokenize([text])[0]) / 2
    pieces = [lines.tokenizer.id_to_token(i) for i in lines.tokenize([text])[0]]
    assert any("16,16,3,3" in piece for piece in pieces)  # merges span digits and punctuation


def test_lines_digits_merges_line_boilerplate_but_reads_numbers_digit_by_digit():
    code = BPETokenizer.train(MACHINE_TEXT, vocab_size=600)
    mixed = BPETokenizer.train(MACHINE_TEXT, vocab_size=600, pretokenize="lines+digits")
    text = MACHINE_TEXT[3]
    assert mixed.decode(mixed.tokenize([text])[0]) == text
    assert len(mixed.tokenize([text])[0]) < len(code.tokenize([text])[0])
    pieces = [mixed.tokenizer.id_to_token(i) for i in mixed.tokenize([text])[0]]
    assert any(len(piece) > 4 and "Conv" in piece for piece in pieces)  # boilerplate still merges
    assert all(not any(c.isdigit() for c in piece) or len(piece) == 1 for piece in pieces)  # digits stand alone


def test_unknown_pretokenizer():
    with pytest.raises(ValueError, match="pretokenize must be one of"):
        BPETokenizer.train(CODE, pretokenize="words")
