"""The programs bench's data: a collected dataset read as texts and [memory, runtime] targets, its splits
(random, or by problem shared across languages) and the collector's statistics beside it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from coderlm.data import read_dataset
from coderlm.evaluation import markdown_table


def memory_of(example, choice: str) -> str:
    """The target standing for memory in this row: ``choice``, or with ``auto`` the row's own
    ``meta.memory_label`` (LeetCode harness rows) else ``peak_memory_bytes`` (MBXP)."""
    return example.meta.get("memory_label", "peak_memory_bytes") if choice == "auto" else choice


def load(path: Path, languages: list[str] | None, memory_label: str = "auto") -> dict:
    """Texts, targets as [memory, runtime] (memory: each row's ``memory_of``, named in ``memory_labels``) and
    the second run's figures."""
    dataset = read_dataset(path)
    rows = [e for e in dataset if languages is None or e.task in languages]
    rows = [e for e in rows if memory_of(e, memory_label) in e.targets]
    texts = [f"language: {e.task}\n{e.text}" for e in rows]
    names = [[memory_of(e, memory_label), "runtime_s"] for e in rows]
    targets = np.array([[e.targets[n] for n in pair] for e, pair in zip(rows, names, strict=True)], dtype=np.float64)
    reruns = np.full_like(targets, np.nan)
    for i, e in enumerate(rows):
        again = (e.meta.get("reruns") or [{}])[0]
        reruns[i] = [again.get(n, np.nan) for n in names[i]]
    return {
        "texts": texts,
        "targets": targets,
        "reruns": reruns,
        "tasks": [e.task for e in rows],
        "groups": [e.group for e in rows],
        "memory_labels": [pair[0] for pair in names],
    }


def with_extra(data: dict, extras: dict[str, dict]) -> dict:
    """``data`` with each extra collection's rows appended after its own (so indices into ``data`` still hold),
    their groups prefixed by the collection's name (``leetcode:python/1``: no problem id of one corpus meets
    another's in a split). The appended rows are ``extra_rows`` (indices): training rows only."""
    joined = {k: list(data[k]) for k in ("texts", "tasks", "groups", "memory_labels")}
    arrays = {k: [data[k]] for k in ("targets", "reruns")}
    for name, more in extras.items():
        joined["texts"] += more["texts"]
        joined["tasks"] += more["tasks"]
        joined["memory_labels"] += more["memory_labels"]
        joined["groups"] += [f"{name}:{g}" for g in more["groups"]]
        for k in arrays:
            arrays[k].append(more[k])
    n = len(data["texts"])
    return {
        **joined,
        **{k: np.concatenate(v) for k, v in arrays.items()},
        "extra_rows": np.arange(n, len(joined["texts"])),
    }


def extra_training(data: dict, train: np.ndarray, held: np.ndarray) -> np.ndarray:
    """The extra rows (``with_extra``) that may join the training rows ``train``. Left out: those of a problem
    some ``held`` row (validation, test) comes from, by problem id (a fuller collection of the same corpus, or
    its single-case rows from ``coderlm collect programs --case-rows``, would show held-out programs in
    training), and repeats of a training row (same problem and text: counted twice)."""
    held_groups = {data["groups"][i] for i in held}
    seen = {(data["groups"][i], data["texts"][i]) for i in train}
    keep = []
    for i in data["extra_rows"]:
        group = data["groups"][i].split(":", 1)[1]  # without the collection's name
        if group not in held_groups and (group, data["texts"][i]) not in seen:
            keep.append(i)
    dropped = len(data["extra_rows"]) - len(keep)
    if dropped:
        print(f"  extra rows: {dropped} of {len(data['extra_rows'])} left out (a held-out problem's, or repeats)")
    return np.array(keep, dtype=int)


def split(data: dict, how: str, seed: int = 0) -> dict[str, np.ndarray]:
    n = len(data["texts"])
    rng = np.random.default_rng(seed)
    if how == "random":
        order = rng.permutation(n)
        cut = int(0.8 * n)
        train, test = order[:cut], order[cut:]
        val = int(0.1 * len(train))
        return {"train": train[val:], "val": train[:val], "test": test}
    # by problem number, shared across languages; validation problems are unseen in training too,
    # so early stopping picks the weights that generalize to new problems, as the test asks
    number = np.array([g.rsplit("/", 1)[-1] for g in data["groups"]])
    problems = rng.permutation(np.unique(number))
    cut = int(0.8 * len(problems))
    test_problems, val_problems = set(problems[cut:]), set(problems[: int(0.1 * cut)])
    is_test = np.array([p in test_problems for p in number])
    is_val = np.array([p in val_problems for p in number])
    train = rng.permutation(np.flatnonzero(~is_test & ~is_val))
    return {"train": train, "val": np.flatnonzero(is_val), "test": np.flatnonzero(is_test)}


def collection_stats(data: Path) -> dict:
    """The collector's statistics beside the dataset (``<corpus>.stats.json``), printed as a table."""
    path = data.with_name(data.stem + ".stats.json")
    if not path.is_file():
        return {}
    stats = json.loads(path.read_text())
    table = [{"language": lang, **row} for lang, row in stats["languages"].items()]
    minutes, sessions = stats["wall_s"] / 60, stats["sessions"]
    print(f"collection: {minutes:.1f} min wall over {sessions} session(s), {stats['workers']} workers")
    print(markdown_table(table))
    skipped = stats.get("skipped_programs") or {}
    if skipped:
        print("left out (cannot be harnessed), per language: " + json.dumps(skipped))
    return stats
