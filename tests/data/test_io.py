"""Reading and writing datasets: JSONL and Parquet round trips, accepted Parquet layouts, atomic writes;
resumable JSON Lines (torn lines cut, rows read with their line numbers, rows appended durably)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from coderlm.data import Dataset, DatasetError, Example, iter_examples, read_dataset, write_dataset
from coderlm.data.io import JsonlAppender, cut_torn_line, read_rows

ROWS = [
    '{"text": "def f(): pass", "targets": {"latency": 1.5, "memory": null}, "task": "cpu", "group": "p1",'
    ' "meta": {"source": "x", "tags": [1, "b", null], "nested": {"ok": true}}}',
    "",
    '{"text": "ünïcode ✓\\n line", "targets": {"latency": NaN, "flops": -3e-12}}',
    "   ",
    '{"text": "graph", "targets": {}, "group": "", "meta": {}}',
    '{"text": "big", "targets": {"memory": 1e300, "latency": Infinity}, "task": ""}',
]


def _same(a: Example, b: Example) -> bool:
    """Equality with NaN == NaN in targets."""
    same_targets = a.targets.keys() == b.targets.keys() and all(
        (math.isnan(v) and math.isnan(b.targets[k])) or v == b.targets[k] for k, v in a.targets.items()
    )
    return same_targets and (a.text, a.task, a.group, a.meta) == (b.text, b.task, b.group, b.meta)


def _assert_same(a: Dataset, b: Dataset) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert _same(x, y), (x, y)


@pytest.fixture
def jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(ROWS) + "\n", encoding="utf-8")
    return path


def test_read_jsonl_skips_blank_lines_and_keeps_every_field(jsonl: Path) -> None:
    dataset = read_dataset(jsonl)
    assert len(dataset) == 4 and dataset.source == jsonl
    first = dataset[0]
    assert first.text == "def f(): pass" and first.task == "cpu" and first.group == "p1"
    assert first.meta == {"source": "x", "tags": [1, "b", None], "nested": {"ok": True}}
    assert first.targets["latency"] == 1.5 and math.isnan(first.targets["memory"])
    assert math.isnan(dataset[1].targets["latency"]) and dataset[1].text == "ünïcode ✓\n line"
    assert dataset[2].targets == {} and dataset[2].group == "" and dataset[2].meta == {}
    assert dataset[3].targets["latency"] == math.inf and dataset[3].task == ""
    assert dataset.target_names() == ["flops", "latency", "memory"]


def test_jsonl_round_trip_writes_nan_as_null(jsonl: Path, tmp_path: Path) -> None:
    dataset = read_dataset(jsonl)
    out = write_dataset(tmp_path / "out.jsonl", dataset)
    _assert_same(read_dataset(out), dataset)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4
    assert '"latency": null' in lines[1] and "NaN" not in lines[1]


def test_jsonl_parquet_jsonl_round_trip_preserves_everything(jsonl: Path, tmp_path: Path) -> None:
    dataset = read_dataset(jsonl)
    parquet = write_dataset(tmp_path / "mid.parquet", dataset)
    from_parquet = read_dataset(parquet)
    _assert_same(from_parquet, dataset)
    back = write_dataset(tmp_path / "back.jsonl", from_parquet)
    direct = write_dataset(tmp_path / "direct.jsonl", dataset)
    assert back.read_bytes() == direct.read_bytes()


def test_parquet_written_layout(jsonl: Path, tmp_path: Path) -> None:
    path = write_dataset(tmp_path / "x.parquet", read_dataset(jsonl))
    table = pq.read_table(path)
    assert table.schema.names == ["text", "targets", "task", "group", "meta"]
    assert pa.types.is_map(table.schema.field("targets").type)
    assert table.column("meta").to_pylist()[2] is None
    assert json.loads(table.column("meta").to_pylist()[0])["source"] == "x"
    assert table.column("targets").to_pylist()[0] == [("latency", 1.5), ("memory", None)]


def test_write_accepts_a_list_of_examples_and_creates_folders(tmp_path: Path) -> None:
    examples = [Example("a", {"y": 1.0}, meta={"k": "v"}), Example("b", {"y": math.nan}, task="t")]
    for name in ("deep/er/x.jsonl", "deep/er/x.parquet", "x.json"):
        path = write_dataset(tmp_path / name, examples)
        _assert_same(read_dataset(path), Dataset(examples))


@pytest.mark.parametrize(
    ("columns", "schema"),
    [
        (  # struct columns
            {"text": ["a", "b"], "targets": [{"y": 1.0, "z": None}, {"y": 2.0, "z": 3.0}], "meta": [{"k": 1}, None]},
            None,
        ),
        (  # JSON text columns
            {"text": ["a", "b"], "targets": ['{"y": 1, "z": null}', '{"y": 2, "z": 3}'], "meta": ['{"k": 1}', None]},
            None,
        ),
        (  # map columns, including meta
            {
                "text": ["a", "b"],
                "targets": [[("y", 1.0), ("z", None)], [("y", 2.0), ("z", 3.0)]],
                "meta": [[("k", 1)], None],
            },
            pa.schema(
                [
                    ("text", pa.string()),
                    ("targets", pa.map_(pa.string(), pa.float64())),
                    ("meta", pa.map_(pa.string(), pa.int64())),
                ]
            ),
        ),
    ],
)
def test_read_parquet_accepts_struct_map_and_json_text_columns(tmp_path: Path, columns: dict, schema) -> None:
    path = tmp_path / "ext.parquet"
    pq.write_table(pa.table(columns, schema=schema), path)
    dataset = read_dataset(path)
    assert [e.text for e in dataset] == ["a", "b"]
    assert dataset[0].targets["y"] == 1.0 and math.isnan(dataset[0].targets["z"])
    assert dataset[1].targets == {"y": 2.0, "z": 3.0}
    assert dataset[0].meta == {"k": 1} and dataset[1].meta == {}
    assert dataset[0].task is None and dataset[0].group is None


def test_read_is_case_insensitive_on_suffix_and_tolerates_bom_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "UPPER.JSONL"
    path.write_bytes(b'\xef\xbb\xbf{"text": "a", "targets": {"y": 1}}\r\n{"text": "b", "targets": {}}\r\n')
    assert [e.text for e in read_dataset(path)] == ["a", "b"]


def test_iter_examples_streams(jsonl: Path) -> None:
    stream = iter_examples(jsonl)
    assert next(stream).text == "def f(): pass"
    assert sum(1 for _ in stream) == 3


def test_write_is_atomic_and_leaves_no_temp_file_on_error(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    good = write_dataset(path, [Example("old", {})])
    bad = [Example("new", {}), Example("new2", {}, meta={"f": object()})]
    for target in (good, tmp_path / "x.parquet"):
        with pytest.raises(DatasetError) as info:
            write_dataset(target, bad)
        assert str(info.value).startswith(f"{target}:2: field 'meta': not JSON-serializable")
    assert [e.text for e in read_dataset(path)] == ["old"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.jsonl"]


def test_write_rejects_empty_unknown_suffix_and_non_examples(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"x\.jsonl: no examples to write"):
        write_dataset(tmp_path / "x.jsonl", [])
    with pytest.raises(DatasetError, match=r"x\.csv: unknown suffix '\.csv'; expected one of \.jsonl, \.json,"):
        write_dataset(tmp_path / "x.csv", [Example("a", {})])
    with pytest.raises(DatasetError, match="item 0 is dict, expected Example"):
        write_dataset(tmp_path / "x.jsonl", [{"text": "a", "targets": {}}])
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------- resumable JSON Lines
def test_cut_torn_line_cuts_only_a_half_written_last_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    assert not cut_torn_line(path)  # missing: nothing to do, nothing created
    assert not path.exists()
    path.write_bytes(b"")
    assert not cut_torn_line(path) and path.read_bytes() == b""
    path.write_bytes(b'{"a": 1}\n\n{"a": 2}\n')
    assert not cut_torn_line(path) and path.read_bytes() == b'{"a": 1}\n\n{"a": 2}\n'
    path.write_bytes(b'{"a": 1}\n{"a": 2}\n{"a": 3, "b": "hal')
    assert cut_torn_line(path)
    assert path.read_bytes() == b'{"a": 1}\n{"a": 2}\n'
    path.write_bytes(b'{"only": "torn')  # no complete line at all
    assert cut_torn_line(path) and path.read_bytes() == b""
    long_tail = b'{"a": 1}\n' + b"x" * 200_000  # a torn line longer than one read
    path.write_bytes(long_tail)
    assert cut_torn_line(path) and path.read_bytes() == b'{"a": 1}\n'


def test_read_rows_numbers_lines_from_one_and_skips_blanks(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n\n   \n{"a": NaN}\r\n[1, 2]\n')
    rows = list(read_rows(path))
    assert [number for number, _ in rows] == [1, 4, 5]
    assert rows[0][1] == {"a": 1} and math.isnan(rows[1][1]["a"]) and rows[2][1] == [1, 2]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"a": 1}\n{"a": \n', r":2: not JSON \(Expecting value at column 7\)$"),
        (b'{"a": 1}\n\n{"a": "\xff"}\n', r":3: not UTF-8 \(invalid start byte at byte 7\)$"),
        (b'{"a": 1}\n{"a": 2', r":2: not JSON"),  # a torn last line read without cutting it
    ],
)
def test_read_rows_names_file_and_line_of_a_bad_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(content)
    rows = read_rows(path)
    assert next(rows) == (1, {"a": 1})  # rows before the bad one arrive first
    with pytest.raises(ValueError, match=re.escape(str(path)) + message):
        next(rows)


def test_appended_rows_are_on_disk_after_each_write_and_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    first = {"text": "ünï", "targets": {"y": 1.5}}
    with JsonlAppender(path) as rows:
        rows.write(first)
        assert path.read_bytes() == json.dumps(first).encode("ascii") + b"\n"  # on disk already, ASCII
        rows.write({"y": math.nan})
    with open(path, "a") as f:  # a kill in the middle of the next row
        f.write('{"y": 3')
    assert cut_torn_line(path)
    with JsonlAppender(path) as rows:  # resume: append after what is there
        rows.write([3])
    read = list(read_rows(path))
    assert [number for number, _ in read] == [1, 2, 3]
    assert read[0][1] == first and math.isnan(read[1][1]["y"]) and read[2][1] == [3]
    appender = JsonlAppender(path)
    with pytest.raises(ValueError, match="outside its 'with' block"):
        appender.write({})
