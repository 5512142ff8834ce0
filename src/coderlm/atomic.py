"""Atomic file writes: a temporary file beside the target, fsynced, then renamed over it.

A reader sees the old file or the new one, whole, never a half-written one; on any
error the temporary file is removed and the target is untouched.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO


@contextlib.contextmanager
def atomic_file(path: str | Path) -> Iterator[IO[bytes]]:
    """A new binary file that replaces ``path`` when the block ends without error."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        with open(temp, "xb") as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def write_atomic(path: str | Path, data: bytes | str) -> Path:
    """Write ``data`` (str as UTF-8) to ``path`` atomically."""
    with atomic_file(path) as file:
        file.write(data.encode("utf-8") if isinstance(data, str) else data)
    return Path(path)
