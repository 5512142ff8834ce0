"""Every validation error names FILE:LINE and the field, in one line."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from coderlm.data import DatasetError, read_dataset

GOOD = '{"text": "ok", "targets": {"y": 1}}'
ALLOWED = "allowed fields are text, targets, task, group, meta"
OBJECT = "expected an object of name: number or null"
NUMBER = "expected a number or null"
TEXT = "expected a non-empty string"


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        ('{"text": "a", "targets": {}', "invalid JSON: Expecting ',' delimiter at column 28"),
        ("not json", "invalid JSON: Expecting value at column 1"),
        ("[1, 2]", "row is an array, expected a JSON object"),
        ('"text"', "row is a string, expected a JSON object"),
        ('{"targets": {"y": 1}}', "field 'text': missing (required)"),
        ('{"text": "", "targets": {}}', "field 'text': expected a non-empty string, got an empty string"),
        ('{"text": 7, "targets": {}}', "field 'text': expected a non-empty string, got a number (7)"),
        ('{"text": null, "targets": {}}', "field 'text': expected a non-empty string, got null"),
        ('{"text": "a"}', "field 'targets': missing (required)"),
        ('{"text": "a", "targets": [1]}', f"field 'targets': {OBJECT}, got an array"),
        ('{"text": "a", "targets": null}', f"field 'targets': {OBJECT}, got null"),
        ('{"text": "a", "targets": 3.5}', f"field 'targets': {OBJECT}, got a number (3.5)"),
        ('{"text": "a", "targets": {"y": "1"}}', f"field 'targets.y': {NUMBER}, got a string"),
        ('{"text": "a", "targets": {"y": true}}', f"field 'targets.y': {NUMBER}, got a boolean (true)"),
        ('{"text": "a", "targets": {"y": [1]}}', f"field 'targets.y': {NUMBER}, got an array"),
        ('{"text": "a", "targets": {"": 1}}', "field 'targets': objective names must be non-empty strings, got ''"),
        (
            '{"text": "a", "targets": {"y": 1' + "0" * 400 + "}}",
            "field 'targets.y': 1" + "0" * 400 + " is too large for a float64",
        ),
        ('{"text": "a", "targets": {}, "task": 3}', "field 'task': expected a string, got a number (3)"),
        ('{"text": "a", "targets": {}, "group": ["g"]}', "field 'group': expected a string, got an array"),
        ('{"text": "a", "targets": {}, "meta": "m"}', "field 'meta': expected an object, got a string"),
        ('{"text": "a", "targets": {}, "meta": [1]}', "field 'meta': expected an object, got an array"),
        ('{"text": "a", "targets": {}, "label": 1}', f"field 'label': unknown field; {ALLOWED}"),
        ('{"txt": "a", "targets": {}}', f"field 'txt': unknown field; {ALLOWED}"),
    ],
)
def test_jsonl_row_errors_name_file_line_and_field(tmp_path: Path, bad: str, expected: str) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(f"{GOOD}\n\n{bad}\n{GOOD}\n", encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        read_dataset(path)
    assert str(info.value) == f"{path}:3: {expected}"
    assert info.value.line == 3 and "\n" not in str(info.value)


def test_jsonl_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(GOOD.encode() + b'\n{"text": "\xff", "targets": {}}\n')
    with pytest.raises(DatasetError) as info:
        read_dataset(path)
    assert str(info.value) == f"{path}:2: not UTF-8 (invalid start byte at byte 10)"


@pytest.mark.parametrize("content", ["", "\n\n   \n"])
def test_empty_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(content)
    with pytest.raises(DatasetError) as info:
        read_dataset(path)
    assert str(info.value) == f"{path}: no examples (the file is empty)"


def test_missing_file_directory_and_unknown_suffix(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as info:
        read_dataset(tmp_path / "nope.jsonl")
    assert str(info.value) == f"{tmp_path / 'nope.jsonl'}: no such file"
    (tmp_path / "dir.parquet").mkdir()
    with pytest.raises(DatasetError) as info:
        read_dataset(tmp_path / "dir.parquet")
    assert str(info.value) == f"{tmp_path / 'dir.parquet'}: not a file"
    with pytest.raises(DatasetError) as info:
        read_dataset(tmp_path / "d.csv")
    assert str(info.value) == f"{tmp_path / 'd.csv'}: unknown suffix '.csv'; expected one of .jsonl, .json, .parquet"
    with pytest.raises(DatasetError, match="unknown suffix '\\(none\\)'"):
        read_dataset(tmp_path / "noext")


# --------------------------------------------------------------------------------------------------- Parquet
def _parquet(tmp_path: Path, columns: dict, schema: pa.Schema | None = None) -> Path:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table(columns, schema=schema), path)
    return path


@pytest.mark.parametrize(
    ("columns", "expected"),
    [
        ({"text": ["a", None], "targets": ['{"y": 1}', "{}"]}, "2: field 'text': missing (required)"),
        ({"text": ["a", "b"], "targets": ['{"y": 1}', None]}, "2: field 'targets': missing (required)"),
        ({"text": ["a"]}, "1: field 'targets': missing (required)"),
        ({"text": ["a", "b"], "targets": ["{}", '{"y": "x"}']}, f"2: field 'targets.y': {NUMBER}, got a string"),
        (
            {"text": ["a", "b"], "targets": ["{}", "{bad"]},
            "2: field 'targets': invalid JSON text: Expecting property name enclosed in double quotes at column 2",
        ),
        ({"text": ["a", "b"], "targets": ["{}", "[1]"]}, f"2: field 'targets': {OBJECT}, got an array"),
        ({"text": ["a", ""], "targets": ["{}", "{}"]}, f"2: field 'text': {TEXT}, got an empty string"),
        ({"text": ["a"], "targets": ["{}"], "task": [5]}, "1: field 'task': expected a string, got a number (5)"),
        (
            {"text": ["a", "b"], "targets": ["{}", "{}"], "meta": [None, "3"]},
            "2: field 'meta': expected an object, got a number (3)",
        ),
        ({"text": ["a"], "targets": ["{}"], "extra": [1]}, f"1: field 'extra': unknown field; {ALLOWED}"),
        ({"text": [b"a"], "targets": ["{}"]}, "1: field 'text': expected a non-empty string, got bytes"),
        ({"text": ["a"], "targets": [{"y": True}]}, f"1: field 'targets.y': {NUMBER}, got a boolean (true)"),
    ],
)
def test_parquet_row_errors_name_file_row_and_field(tmp_path: Path, columns: dict, expected: str) -> None:
    path = _parquet(tmp_path, columns)
    with pytest.raises(DatasetError) as info:
        read_dataset(path)
    assert str(info.value) == f"{path}:{expected}"


def test_parquet_error_row_counts_across_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("coderlm.data.io._BATCH_ROWS", 3)
    texts = ["a"] * 7 + [""]
    path = _parquet(tmp_path, {"text": texts, "targets": ["{}"] * 8})
    with pytest.raises(DatasetError, match=r"d\.parquet:8: field 'text'"):
        read_dataset(path)


def test_parquet_map_with_repeated_key(tmp_path: Path) -> None:
    schema = pa.schema([("text", pa.string()), ("targets", pa.map_(pa.string(), pa.float64()))])
    path = _parquet(tmp_path, {"text": ["a"], "targets": [[("y", 1.0), ("y", 2.0)]]}, schema)
    with pytest.raises(DatasetError) as info:
        read_dataset(path)
    assert str(info.value) == f"{path}:1: field 'targets': map repeats key 'y'"


def test_parquet_empty_and_unreadable(tmp_path: Path) -> None:
    schema = pa.schema([("text", pa.string()), ("targets", pa.string())])
    path = _parquet(tmp_path, {"text": [], "targets": []}, schema)
    with pytest.raises(DatasetError) as info:
        read_dataset(path)
    assert str(info.value) == f"{path}: no examples (the file is empty)"
    path.write_text(GOOD)
    with pytest.raises(DatasetError) as info:
        read_dataset(path)
    assert str(info.value).startswith(f"{path}: not a readable Parquet file: ")
