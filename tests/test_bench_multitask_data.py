"""The multi-task bench's tasks (bench/multitask_data.py): kernels join as a one-objective task, split by
program, and rows of tasks with different numbers of objectives line up in shared or separate slots."""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from multitask_data import load_tasks, rows_of


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def kernel_rows(n: int) -> list[dict]:
    rows = []
    for i in range(n):
        program = f"synthetic/{i // 3}"  # three kernels a program
        text = f"cpp_fused_add_{i}\n// loops: {100 * (i + 1)} iterations\nfor (...) {{}}"
        meta = {"level": "synthetic", "kind": "pointwise"}
        rows.append({"text": text, "targets": {"latency_us": 10.0 + i}, "task": "inductor_cpp", "group": program})
        rows[-1]["meta"] = meta
    rows.append({"text": "whole graph", "targets": {"latency_us": 99.0}, "task": "inductor_cpp_graph", "group": "g"})
    return rows


def net_rows(n: int) -> list[dict]:
    targets = lambda i: {"c10_test_acc_200ep": 80.0 + i / n, "lat_ms_pixel3": 5.0 + i}  # noqa: E731
    return [{"text": f"graph {i}", "targets": targets(i)} for i in range(n)]


def tasks_of(tmp_path: Path, names: str) -> dict:
    kernels = write_rows(tmp_path / "synthetic.jsonl", kernel_rows(60))
    nets = write_rows(tmp_path / "nb201.jsonl", net_rows(40))
    args = argparse.Namespace(tasks=names, kernels=str(kernels), nets=nets, nb201_val=5, nb201_test=10, max_train="")
    return load_tasks(args)


def test_kernels_are_a_one_objective_task_split_by_program(tmp_path):
    kernels = tasks_of(tmp_path, "kernels")["kernels"]
    assert kernels["objectives"] == ["latency_us"] and kernels["targets"].shape == (60, 1)  # no whole-graph row
    assert all(t.startswith("task: kernels\ncpp_fused_add_") for t in kernels["texts"])
    programs = {part: {i // 3 for i in idx} for part, idx in kernels["parts"].items()}
    assert not programs["test"] & programs["train"] and not programs["val"] & programs["train"]
    assert sum(len(idx) for idx in kernels["parts"].values()) == 60


def test_shared_slots_leave_the_missing_objective_of_a_one_objective_task_empty(tmp_path):
    tasks = tasks_of(tmp_path, "nb201,kernels")
    texts, targets, labels = rows_of(tasks, ["nb201", "kernels"], "train")
    nets = labels.count("nb201")
    assert targets.shape == (len(texts), 2)
    assert np.isfinite(targets[:nets]).all()  # accuracy and latency
    assert np.isfinite(targets[nets:, 0]).all() and np.isnan(targets[nets:, 1]).all()  # latency in slot 1
    _, alone, _ = rows_of(tasks, ["kernels"], "train")
    assert alone.shape == (len(texts) - nets, 1)  # a kernel model alone decodes one number


def test_separate_slots_give_each_task_its_own_columns(tmp_path):
    tasks = tasks_of(tmp_path, "kernels,nb201")
    _, targets, labels = rows_of(tasks, ["kernels", "nb201"], "test", slots="separate")
    kernels = np.array(labels) == "kernels"
    assert targets.shape == (len(labels), 3)
    assert np.isfinite(targets[kernels, 0]).all() and np.isnan(targets[kernels, 1:]).all()
    assert np.isnan(targets[~kernels, 0]).all() and np.isfinite(targets[~kernels, 1:]).all()


def test_the_table_labels_empty_slots_only_where_a_task_leaves_some(capsys):
    from multitask import print_tables

    row = {"method": "rlm", "training": "multi-task", "task": "python", "objective": "peak_memory_bytes"}
    row |= {"spearman": 0.9, "train_s": 1.0, "missing": "special", "dim": 128, "vocab": 2048}
    print_tables([row | {"empty_slots": False}, row | {"empty_slots": True, "slots": "separate"}])
    lines = capsys.readouterr().out.splitlines()
    assert any("| multi-task |" in line for line in lines)  # shared slots, equal widths: nothing empty
    assert any("multi-task (separate slots) (empty slots: nan)" in line for line in lines)
