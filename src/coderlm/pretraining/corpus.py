"""Unlabelled text for pretraining: datasets' ``text`` fields, JSONL files of code, and source trees.

Each ``--data`` path is read by what it is:

* a folder: every file under it whose suffix is a source or text suffix (``SOURCE_SUFFIXES``), one
  document each; files that are not UTF-8 are skipped and counted (a source tree may hold some);
* ``.jsonl`` / ``.jsonl.gz`` / ``.parquet``: one document per row, its ``text`` field (or the field
  named by ``field``, e.g. ``code`` for the shared LeetCode and TheAlgorithms files); other fields,
  targets included, are ignored, so a labelled dataset is also a pretraining corpus;
* any other file: its whole content, one document.

Identical documents are kept once (the same solution often appears in several corpora). Errors
name the file, and the line for JSON rows.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pyarrow.parquet as pq

SOURCE_SUFFIXES = (
    ".py", ".c", ".cc", ".cpp", ".h", ".hpp", ".java", ".go", ".js", ".ts", ".cs", ".kt", ".scala", ".swift",
    ".rs", ".rb", ".php", ".pl", ".sh", ".txt", ".onnx.txt",
)  # fmt: skip
ROW_SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet")
MAX_DOCUMENT_CHARS = 200_000  # longer files (generated tables, data dumps) are cut: they would swamp the corpus


@dataclasses.dataclass
class Corpus:
    """Distinct documents and where they came from."""

    texts: list[str]
    sources: dict[str, int]  # path -> documents read from it (before de-duplication)
    duplicates: int  # documents dropped as exact repeats
    skipped: dict[str, int]  # reason -> files or rows left out

    @property
    def chars(self) -> int:
        return sum(len(t) for t in self.texts)

    def summary(self) -> dict:
        return {
            "documents": len(self.texts),
            "chars": self.chars,
            "duplicates": self.duplicates,
            "skipped": self.skipped,
            "sources": self.sources,
        }


def read_corpus(paths: Sequence[str | Path], field: str = "text") -> Corpus:
    """The documents of every path (see the module docstring); errors name the file (and line)."""
    if not paths:
        raise ValueError("no pretraining data given (--data FILE or FOLDER, repeatable)")
    seen: set[bytes] = set()
    corpus = Corpus([], {}, 0, {})
    for path in map(Path, paths):
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such file or folder (--data)")
        count = 0
        for text in _documents(path, field, corpus.skipped):
            count += 1
            text = text[:MAX_DOCUMENT_CHARS]
            digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            if not text.strip() or digest in seen:
                corpus.duplicates += bool(text.strip())
                continue
            seen.add(digest)
            corpus.texts.append(text)
        corpus.sources[str(path)] = count
    if not corpus.texts:
        raise ValueError(f"no text found in {', '.join(map(str, paths))}")
    return corpus


def _documents(path: Path, field: str, skipped: dict[str, int]) -> Iterator[str]:
    if path.is_dir():
        for file in sorted(p for p in path.rglob("*") if p.is_file() and _is_source(p)):
            try:
                yield file.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                skipped["file not UTF-8"] = skipped.get("file not UTF-8", 0) + 1
        return
    name = path.name.lower()
    if name.endswith(".parquet"):
        yield from _parquet_texts(path, field)
    elif name.endswith((".jsonl", ".jsonl.gz")):
        yield from _jsonl_texts(path, field)
    else:
        try:
            yield path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _is_source(path: Path) -> bool:
    return path.name.lower().endswith(SOURCE_SUFFIXES)


def _jsonl_texts(path: Path, field: str) -> Iterator[str]:
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rb") as file:
        for number, raw in enumerate(file, start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as exc:
                raise ValueError(f"{path}:{number}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg} at column {exc.colno})") from None
            yield _field(row, field, f"{path}:{number}")


def _parquet_texts(path: Path, field: str) -> Iterator[str]:
    try:
        table = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several kinds for a file that is not Parquet
        raise ValueError(f"{path}: not a Parquet file ({exc})") from None
    if field not in table.schema_arrow.names:
        raise ValueError(f"{path}: no column '{field}' (columns: {table.schema_arrow.names}; choose one with --field)")
    number = 0
    for batch in table.iter_batches(columns=[field]):
        for value in batch.column(0).to_pylist():
            number += 1
            yield _field({field: value}, field, f"{path}: row {number}")


def _field(row: object, field: str, where: str) -> str:
    if not isinstance(row, dict):
        raise ValueError(f"{where}: a row must be a JSON object, got {type(row).__name__}")
    if field not in row:
        raise ValueError(f"{where}: field '{field}' is missing (choose the text field with --field)")
    value = row[field]
    if not isinstance(value, str):
        raise ValueError(f"{where}: field '{field}' must be a string, got {type(value).__name__}")
    return value
