"""The tasks of ``bench/multitask.py``: each a dataset's texts (``task: <name>`` first), targets, split and
objective names; and the rows of several tasks together, in shared or separate number slots."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import kernel_latency  # bench/ is on the path: the importing script's folder
from coderlm.data import read_dataset
from program_data import load as load_programs
from program_data import split as split_programs

NB201_OBJECTIVES = ["c10_test_acc_200ep", "lat_ms_pixel3"]


def program_task(path: Path, name: str, language: str) -> dict:
    """One language's programs of a collected dataset (MBXP or LeetCode), split by problem: memory (the
    collection's label for the language: tracemalloc peak for Python, the allocation counter's heap peak for
    C++, ...) and runtime."""
    data = load_programs(path, [language])
    if not data["texts"]:
        raise SystemExit(f"{path}: no {language} programs with labels (collect them first; see the docstring)")
    prefix = f"language: {language}\n"  # bench/programs.py's input start; here every input names its task
    texts = [f"task: {name}\n" + t.removeprefix(prefix) for t in data["texts"]]
    parts = split_programs(data, "problem")
    objectives = [data["memory_labels"][0], "runtime_s"]  # one language: one memory label
    return {"texts": texts, "targets": data["targets"], "parts": parts, "objectives": objectives}


def nb201_task(path: Path, val: int, test: int) -> dict:
    rows = read_dataset(path)
    texts = [f"task: nb201\n{r.text}" for r in rows]
    targets = np.array([[r.targets[o] for o in NB201_OBJECTIVES] for r in rows], dtype=np.float64)
    order = np.random.default_rng(0).permutation(len(rows))
    parts = {"test": order[:test], "val": order[test : test + val], "train": order[test + val :]}
    return {"texts": texts, "targets": targets, "parts": parts, "objectives": NB201_OBJECTIVES}


def kernel_task(paths: list[Path]) -> dict:
    """TorchInductor C++ kernels, split by program as ``bench/kernel_latency.py`` splits them: latency alone."""
    data = kernel_latency.load(paths, "inductor_cpp")
    texts = [f"task: kernels\n{t}" for t in data["texts"]]
    parts = kernel_latency.split(data, "program")
    return {"texts": texts, "targets": data["targets"], "parts": parts, "objectives": ["latency_us"]}


def load_tasks(args: argparse.Namespace) -> dict:
    """The tasks ``--tasks`` names, in its order: ``python`` (MBXP), ``nb201``, ``leetcode-<language>``,
    ``kernels``."""
    tasks = {}
    for name in args.tasks.split(","):
        language = name.removeprefix("leetcode-")  # a program task's language
        if name == "python":
            paths, how = [args.programs], "coderlm collect programs --corpus mbxp --languages python"
        elif name == "nb201":
            paths, how = [args.nets], "coderlm collect nas"
        elif name.startswith("leetcode-"):
            paths, how = [args.leetcode], f"coderlm collect programs --corpus leetcode --languages {language}"
        elif name == "kernels":
            paths, how = [Path(p) for p in args.kernels.split(",")], "coderlm collect kernels"
        else:
            raise SystemExit(f"--tasks: unknown task {name!r} (python, nb201, leetcode-<language>, kernels)")
        for path in paths:
            if not path.is_file():
                raise SystemExit(f"{path}: not found (run {how} first; see the docstring)")
        if name == "nb201":
            tasks[name] = nb201_task(paths[0], args.nb201_val, args.nb201_test)
        elif name == "kernels":
            tasks[name] = kernel_task(paths)
        else:
            tasks[name] = program_task(paths[0], name, language)
    for item in filter(None, args.max_train.split(",")):
        name, _, count = item.partition("=")
        if name not in tasks or not count.isdigit():
            raise SystemExit(f"--max-train: expected TASK=N with TASK one of {', '.join(tasks)}, got {item!r}")
        tasks[name]["parts"]["train"] = tasks[name]["parts"]["train"][: int(count)]  # a seeded order already
    return tasks


def rows_of(
    tasks: dict, names: list[str], *parts: str, slots: str = "shared"
) -> tuple[list[str], np.ndarray, list[str]]:
    """The rows of the named tasks in ``parts``, concatenated: texts, targets and task labels. With
    ``slots="shared"`` targets have as many columns as the task with the most objectives (a task with fewer
    leaves the last ones NaN); with ``"separate"`` one column per objective of every task, each task in its
    own columns and NaN in the others'."""
    texts, targets, labels = [], [], []
    widths = [len(tasks[name]["objectives"]) for name in names]
    for t, name in enumerate(names):
        task = tasks[name]
        idx = np.concatenate([task["parts"][part] for part in parts])
        texts += [task["texts"][i] for i in idx]
        values = task["targets"][idx]
        if slots == "separate":
            before, after = sum(widths[:t]), sum(widths[t + 1 :])
        else:
            before, after = 0, max(widths) - widths[t]
        values = np.pad(values, ((0, 0), (before, after)), constant_values=np.nan)
        targets.append(values)
        labels += [name] * len(idx)
    return texts, np.concatenate(targets), labels
