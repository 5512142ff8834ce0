"""Random and group splits, and split files on disk."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from coderlm.data import (
    Dataset,
    DatasetError,
    Example,
    check_fractions,
    group_split,
    random_split,
    read_dataset,
    split_dataset,
    split_sizes,
    write_dataset,
)

FRACTIONS = {"train": 0.8, "val": 0.1, "test": 0.1}


def _grouped(num_groups: int = 50, seed: int = 0) -> list[str | None]:
    """Groups of 1..12 rows each (shuffled), plus a few rows without a group."""
    rng = np.random.default_rng(seed)
    groups: list[str | None] = [f"g{g}" for g in range(num_groups) for _ in range(rng.integers(1, 13))]
    groups += [None, "", None]
    return [groups[i] for i in rng.permutation(len(groups))]


# ----------------------------------------------------------------------------------------------- fractions
@pytest.mark.parametrize(
    ("fractions", "needle"),
    [
        ({}, "non-empty mapping"),
        ([0.5, 0.5], "non-empty mapping"),
        ({"train": 0.8, "val": 0.1}, "sum to 0.9"),
        ({"train": 1.0, "val": 0.0}, r"fractions\['val'\] is 0.0"),
        ({"train": 1.5, "val": -0.5}, r"fractions\['train'\] is 1.5"),
        ({"train": True}, r"fractions\['train'\] is True"),
        ({"": 1.0}, "split names must be non-empty strings"),
    ],
)
def test_check_fractions_rejects(fractions, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        check_fractions(fractions)


def test_fractions_within_tolerance_are_accepted() -> None:
    assert check_fractions({"a": 1 / 3, "b": 1 / 3, "c": 1 / 3 + 5e-7}) == {"a": 1 / 3, "b": 1 / 3, "c": 1 / 3 + 5e-7}


def test_split_sizes_are_largest_remainders() -> None:
    assert split_sizes(100, FRACTIONS) == {"train": 80, "val": 10, "test": 10}
    assert split_sizes(7, FRACTIONS) == {"train": 5, "val": 1, "test": 1}
    assert split_sizes(5, FRACTIONS) == {"train": 4, "val": 1, "test": 0}
    assert split_sizes(0, FRACTIONS) == {"train": 0, "val": 0, "test": 0}
    assert sum(split_sizes(1001, {"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}).values()) == 1001


# ------------------------------------------------------------------------------------------------- random
@pytest.mark.parametrize("n", [0, 1, 10, 97, 1000])
def test_random_split_is_disjoint_covering_and_sized(n: int) -> None:
    parts = random_split(n, FRACTIONS, seed=3)
    assert list(parts) == ["train", "val", "test"]
    together = np.concatenate(list(parts.values()))
    assert sorted(together.tolist()) == list(range(n))
    assert {name: len(rows) for name, rows in parts.items()} == split_sizes(n, FRACTIONS)
    for rows in parts.values():
        assert rows.dtype == np.int64 and np.all(np.diff(rows) > 0)


def test_random_split_is_deterministic_for_a_seed() -> None:
    a, b, c = (random_split(200, FRACTIONS, seed=s) for s in (7, 7, 8))
    assert all(np.array_equal(a[k], b[k]) for k in FRACTIONS)
    assert not np.array_equal(a["test"], c["test"])


@pytest.mark.parametrize(
    ("n", "seed", "needle"),
    [(-1, 0, "n must be"), (3.5, 0, "n must be"), (5, -1, "seed"), (5, None, "seed"), (5, 1.5, "seed")],
)
def test_random_split_rejects_bad_arguments(n, seed, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        random_split(n, FRACTIONS, seed)


# -------------------------------------------------------------------------------------------------- group
def test_group_split_keeps_groups_whole_and_matches_fractions() -> None:
    groups = _grouped()
    n = len(groups)
    parts = group_split(groups, FRACTIONS, seed=0)
    together = np.concatenate(list(parts.values()))
    assert sorted(together.tolist()) == list(range(n))
    seen: dict[str, str] = {}
    for name, rows in parts.items():
        for i in rows:
            if groups[i]:
                assert seen.setdefault(groups[i], name) == name, f"group {groups[i]} in two splits"
    for name, fraction in FRACTIONS.items():
        assert abs(len(parts[name]) / n - fraction) < 0.04, (name, len(parts[name]), n)


def test_group_split_rows_without_group_are_singletons() -> None:
    parts = group_split([None] * 10 + [""] * 10, {"a": 0.5, "b": 0.5}, seed=1)
    assert len(parts["a"]) == 10 and len(parts["b"]) == 10


def test_group_split_is_deterministic_and_seed_dependent() -> None:
    groups = _grouped(seed=4)
    a, b = group_split(groups, FRACTIONS, seed=5), group_split(groups, FRACTIONS, seed=5)
    assert all(np.array_equal(a[k], b[k]) for k in FRACTIONS)
    others = [group_split(groups, FRACTIONS, seed=s)["test"] for s in range(6, 10)]
    assert any(not np.array_equal(a["test"], other) for other in others)


def test_group_split_rejects_non_string_groups() -> None:
    with pytest.raises(ValueError, match=r"groups\[1\] is int"):
        group_split(["a", 3], {"x": 1.0}, seed=0)


# ---------------------------------------------------------------------------------------------- on disk
def _write_source(path: Path) -> Dataset:
    groups = _grouped(num_groups=30, seed=2)
    examples = [
        Example(f"row {i}", {"y": float(i), "z": float("nan") if i % 5 == 0 else -i}, task="t", group=g, meta={"i": i})
        for i, g in enumerate(groups)
    ]
    write_dataset(path, examples)
    return read_dataset(path)


@pytest.mark.parametrize(("suffix", "by_group"), [(".jsonl", False), (".parquet", True)])
def test_split_dataset_writes_readable_files_and_manifest(tmp_path: Path, suffix: str, by_group: bool) -> None:
    source = tmp_path / f"all{suffix}"
    dataset = _write_source(source)
    out = tmp_path / "splits" / "v1"
    paths = split_dataset(source, out, FRACTIONS, seed=11, by_group=by_group)
    assert paths == {name: out / f"{name}{suffix}" for name in FRACTIONS}
    assert sorted(p.name for p in out.iterdir()) == sorted([f"{n}{suffix}" for n in FRACTIONS] + ["split.json"])
    parts = {name: read_dataset(path) for name, path in paths.items()}
    texts = [e.text for part in parts.values() for e in part]
    assert sorted(texts) == sorted(e.text for e in dataset)
    if by_group:
        owners = {}
        for name, part in parts.items():
            for e in part:
                if e.group:
                    assert owners.setdefault(e.group, name) == name
    manifest = json.loads((out / "split.json").read_text())
    assert manifest["seed"] == 11 and manifest["fractions"] == FRACTIONS and manifest["by_group"] is by_group
    assert manifest["counts"] == {name: len(part) for name, part in parts.items()}
    assert manifest["source"] == str(source) and manifest["num_rows"] == len(dataset)
    again = split_dataset(dataset, tmp_path / "again", FRACTIONS, seed=11, by_group=by_group)
    assert all(again[k].read_bytes() == paths[k].read_bytes() for k in FRACTIONS)


def test_split_dataset_in_memory_defaults_to_jsonl(tmp_path: Path) -> None:
    dataset = Dataset([Example(f"t{i}", {"y": i}) for i in range(10)])
    paths = split_dataset(dataset, tmp_path, {"train": 0.5, "test": 0.5}, seed=0)
    assert paths["train"].name == "train.jsonl" and len(read_dataset(paths["test"])) == 5
    assert json.loads((tmp_path / "split.json").read_text())["source"] is None


def test_split_dataset_refuses_empty_splits_and_writes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "few.jsonl"
    write_dataset(source, [Example(f"t{i}", {}, group="same") for i in range(5)])
    out = tmp_path / "out"
    with pytest.raises(DatasetError) as info:
        split_dataset(source, out, FRACTIONS, seed=0)
    assert str(info.value).startswith(f"{source}: split 'test' would be empty (5 rows")
    with pytest.raises(DatasetError, match="split 'val' would be empty \\(1 groups"):
        split_dataset(source, out, FRACTIONS, seed=0, by_group=True)
    with pytest.raises(DatasetError, match="split name 'a/b' cannot be a file name"):
        split_dataset(source, out, {"a/b": 0.5, "c": 0.5}, seed=0)
    assert not out.exists()


def test_split_dataset_cleans_up_staging_on_write_error(tmp_path: Path) -> None:
    dataset = Dataset([Example(f"t{i}", {}, meta={"bad": object()} if i == 9 else {}) for i in range(10)])
    out = tmp_path / "out"
    with pytest.raises(DatasetError, match="not JSON-serializable"):
        split_dataset(dataset, out, {"train": 0.5, "test": 0.5}, seed=0)
    assert list(out.iterdir()) == []
