"""Reading and writing datasets as JSON Lines or Parquet, chosen by the file's suffix.

JSON Lines (``.jsonl``, or ``.json`` holding one object per line): UTF-8, one row per line, blank lines
skipped, read line by line. ``NaN`` and ``Infinity`` literals are tolerated; NaN targets are written as null.

Parquet (``.parquet``), one row per example. Written columns:

===========  ==========================  =========================================
column       Arrow type                  content
===========  ==========================  =========================================
``text``     string                      the input
``targets``  map<string, double>         objective -> value; null = missing (NaN)
``task``     string                      null when absent
``group``    string                      null when absent
``meta``     string                      the meta object as JSON text; null when empty
===========  ==========================  =========================================

Read: ``targets`` and ``meta`` may be map, struct or JSON-string columns; ``task``, ``group`` and ``meta``
may be left out; a null cell means absent. So JSONL -> Parquet -> JSONL keeps every row as it was.
Writes are atomic: a temporary file in the same folder, then ``os.replace``.

Resumable JSON Lines (the collectors' datasets and logs), grown one row at a time so a kill loses at
most the row being written: ``cut_torn_line`` removes a half-written last line, ``read_rows`` reads
the rows already there (errors name ``FILE:LINE``), and ``JsonlAppender`` appends rows, each one
flushed and fsynced before ``write`` returns.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, TextIO

import pyarrow as pa
import pyarrow.parquet as pq

from coderlm.atomic import atomic_file
from coderlm.data.schema import Dataset, DatasetError, Example, example_from_row

JSONL_SUFFIXES = (".jsonl", ".json")
PARQUET_SUFFIXES = (".parquet",)
PARQUET_SCHEMA = pa.schema(
    [
        ("text", pa.string()),
        ("targets", pa.map_(pa.string(), pa.float64())),
        ("task", pa.string()),
        ("group", pa.string()),
        ("meta", pa.string()),
    ]
)
_BATCH_ROWS = 8192


def read_dataset(path: str | os.PathLike) -> Dataset:
    """Every example of a ``.jsonl``/``.json`` (JSON Lines) or ``.parquet`` file, validated.

    Raises DatasetError (``FILE:LINE: field 'x': message``) for a missing file, an unknown suffix, a bad row,
    or a file without examples.
    """
    examples = list(iter_examples(path))
    if not examples:
        raise DatasetError(path, "no examples (the file is empty)")
    return Dataset(examples, Path(path))


def iter_examples(path: str | os.PathLike) -> Iterator[Example]:
    """Validated examples of a dataset file, one at a time (nothing is held in memory)."""
    reader = _jsonl_examples if _kind(path) == "jsonl" else _parquet_examples
    if not os.path.exists(path):
        raise DatasetError(path, "no such file")
    if not os.path.isfile(path):
        raise DatasetError(path, "not a file")
    return reader(path)


def write_dataset(path: str | os.PathLike, data: Dataset | Iterable[Example]) -> Path:
    """Write examples to ``path`` as JSON Lines or Parquet (by suffix), atomically; parent folders are created.

    Returns the path. Raises DatasetError for an unknown suffix, no examples, or meta that is not JSON.
    """
    path = Path(path)
    kind = _kind(path)
    examples = list(data)
    if not examples:
        raise DatasetError(path, "no examples to write")
    for i, example in enumerate(examples):
        if not isinstance(example, Example):
            raise DatasetError(path, f"item {i} is {type(example).__name__}, expected Example")
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path) as file:
        if kind == "jsonl":
            _write_jsonl(file, examples, path)
        else:
            _write_parquet(file, examples, path)
    return path


def _kind(path: str | os.PathLike) -> str:
    suffix = Path(path).suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return "jsonl"
    if suffix in PARQUET_SUFFIXES:
        return "parquet"
    known = ", ".join(JSONL_SUFFIXES + PARQUET_SUFFIXES)
    raise DatasetError(path, f"unknown suffix {suffix or '(none)'!r}; expected one of {known}")


# ------------------------------------------------------------------------------------------------ JSON Lines
def _jsonl_examples(path: str | os.PathLike) -> Iterator[Example]:
    with open(path, "rb") as file:
        for number, raw in enumerate(file, start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise DatasetError(path, f"not UTF-8 ({exc.reason} at byte {exc.start})", number) from None
            if not line.strip():
                continue
            try:
                row = json.loads(line.rstrip("\r\n"))
            except json.JSONDecodeError as exc:
                raise DatasetError(path, f"invalid JSON: {exc.msg} at column {exc.colno}", number) from None
            except RecursionError:
                raise DatasetError(path, "invalid JSON: nested too deeply", number) from None
            yield example_from_row(row, path, number)


def _write_jsonl(file: IO[bytes], examples: list[Example], path: Path) -> None:
    for number, example in enumerate(examples, start=1):
        row = example.to_row()
        try:
            line = json.dumps(row, ensure_ascii=False)
            encoded = line.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: keep them as \u escapes
            encoded = json.dumps(row, ensure_ascii=True).encode("ascii")
        except (TypeError, ValueError) as exc:
            raise DatasetError(path, f"not JSON-serializable: {exc}", number, "meta") from None
        file.write(encoded + b"\n")


# --------------------------------------------------------------------------------------------------- Parquet
def _parquet_examples(path: str | os.PathLike) -> Iterator[Example]:
    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise DatasetError(path, f"not a readable Parquet file: {exc}") from None
    with parquet:
        yield from _parquet_rows(parquet, path)


def _parquet_rows(parquet: pq.ParquetFile, path: str | os.PathLike) -> Iterator[Example]:
    number = 0
    batches = parquet.iter_batches(batch_size=_BATCH_ROWS)
    while True:
        try:
            batch = next(batches, None)
        except (pa.ArrowException, OSError) as exc:
            raise DatasetError(path, f"not a readable Parquet file after row {number}: {exc}") from None
        if batch is None:
            return
        columns = [(field.name, field.type, batch.column(i).to_pylist()) for i, field in enumerate(batch.schema)]
        for j in range(batch.num_rows):
            number += 1
            row = {}
            for name, kind, values in columns:
                if values[j] is not None:
                    row[name] = _cell(values[j], kind, name, path, number)
            yield example_from_row(row, path, number)


def _cell(value: Any, kind: pa.DataType, name: str, path: str | os.PathLike, number: int) -> Any:
    """A Parquet cell as its JSON value: maps become objects; JSON text in ``targets``/``meta`` is decoded."""
    if pa.types.is_map(kind):
        out = {}
        for key, item in value:
            if key in out:
                raise DatasetError(path, f"map repeats key {key!r}", number, name)
            out[key] = item
        return out
    if name in ("targets", "meta") and isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise DatasetError(path, f"invalid JSON text: {exc.msg} at column {exc.colno}", number, name) from None
    return value


def _write_parquet(file: IO[bytes], examples: list[Example], path: Path) -> None:
    with pq.ParquetWriter(file, PARQUET_SCHEMA) as writer:
        for start in range(0, len(examples), _BATCH_ROWS):
            chunk = examples[start : start + _BATCH_ROWS]
            metas = []
            for number, example in enumerate(chunk, start=start + 1):
                try:
                    metas.append(json.dumps(example.meta, ensure_ascii=False) if example.meta else None)
                except (TypeError, ValueError) as exc:
                    raise DatasetError(path, f"not JSON-serializable: {exc}", number, "meta") from None
            columns = {
                "text": [e.text for e in chunk],
                "targets": [[(k, None if math.isnan(v) else v) for k, v in e.targets.items()] for e in chunk],
                "task": [e.task for e in chunk],
                "group": [e.group for e in chunk],
                "meta": metas,
            }
            try:
                writer.write_table(pa.Table.from_pydict(columns, schema=PARQUET_SCHEMA))
            except (pa.ArrowException, UnicodeEncodeError) as exc:
                raise DatasetError(path, f"cannot write rows {start + 1}-{start + len(chunk)}: {exc}") from None


# ---------------------------------------------------------------------------------- resumable JSON Lines
def cut_torn_line(path: str | os.PathLike) -> bool:
    """Cut a half-written last line (an append interrupted by a kill) off ``path``; True when it cut something.

    A missing file, an empty one and one ending in a newline are left untouched.
    """
    path = Path(path)
    if not path.is_file():
        return False
    with open(path, "rb") as file:
        end = file.seek(0, os.SEEK_END)
        position = end
        while position > 0:
            start = max(0, position - 65536)
            file.seek(start)
            chunk = file.read(position - start)
            if position == end and chunk.endswith(b"\n"):
                return False
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                position = start + newline + 1
                break
            position = start
    if position == end:  # an empty file
        return False
    with open(path, "r+b") as file:
        file.truncate(position)
    return True


def read_rows(path: str | os.PathLike) -> Iterator[tuple[int, Any]]:
    """``(line number, JSON value)`` for every non-blank line of ``path``, counting from 1, one at a time.

    Raises ValueError ``FILE:LINE: ...`` for a line that is not UTF-8 or not JSON (a torn last line
    included: ``cut_torn_line`` first where one may be).
    """
    with open(path, "rb") as file:
        for number, raw in enumerate(file, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(f"{path}:{number}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
            if not line.strip():
                continue
            try:
                value = json.loads(line.rstrip("\r\n"))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg} at column {exc.colno})") from None
            yield number, value


class JsonlAppender:
    """Appends rows to a JSON Lines file (created if missing), one line per row, flushed and fsynced.

    ``with JsonlAppender(path) as rows: rows.write({"text": ...})``. Each row is ``json.dumps(row)``
    (ASCII, ``NaN`` as is) and a newline; when ``write`` returns, the row is on disk.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._file: TextIO | None = None

    def __enter__(self) -> JsonlAppender:
        self._file = open(self.path, "a", encoding="utf-8")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def write(self, row: Any) -> None:
        """Append ``row`` as one line and make it durable."""
        if self._file is None:
            raise ValueError(f"{self.path}: JsonlAppender.write outside its 'with' block")
        self._file.write(json.dumps(row) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())
