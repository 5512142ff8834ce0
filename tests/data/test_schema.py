"""Example and Dataset in memory: validation, indexing, names, and to_arrays under each missing policy."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from coderlm.data import Dataset, DatasetError, Example, example_from_row


def _dataset() -> Dataset:
    return Dataset(
        [
            Example("a", {"latency": 1.0, "memory": 10.0}, task="gpu", group="p1"),
            Example("b", {"latency": 2.0, "memory": math.nan}, task="cpu", group="p1"),
            Example("c", {"latency": 3.0}, group="p2"),
            Example("d", {"memory": 40.0, "flops": -1.5}, task="gpu"),
        ],
        source="data/x.jsonl",
    )


# ------------------------------------------------------------------------------------------------- Example
def test_example_normalizes_targets_to_floats_and_none_to_nan() -> None:
    example = Example("x", {"a": 1, "b": None, "c": np.float32(0.5)})
    assert example.targets["a"] == 1.0 and isinstance(example.targets["a"], float)
    assert math.isnan(example.targets["b"])
    assert example.targets["c"] == 0.5
    assert example.meta == {} and example.task is None and example.group is None


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"text": "", "targets": {}}, "Example.text"),
        ({"text": 3, "targets": {}}, "Example.text"),
        ({"text": "x", "targets": [1.0]}, "Example.targets must be a dict"),
        ({"text": "x", "targets": {"": 1.0}}, "names must be non-empty"),
        ({"text": "x", "targets": {"a": True}}, "Example.targets['a'] is bool"),
        ({"text": "x", "targets": {"a": "1"}}, "Example.targets['a'] is str"),
        ({"text": "x", "targets": {}, "task": 1}, "Example.task"),
        ({"text": "x", "targets": {}, "group": 1}, "Example.group"),
        ({"text": "x", "targets": {}, "meta": []}, "Example.meta"),
    ],
)
def test_example_rejects_bad_fields(kwargs: dict, needle: str) -> None:
    with pytest.raises(ValueError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        Example(**kwargs)


def test_to_row_writes_nan_as_null_and_omits_absent_fields() -> None:
    assert Example("x", {"a": math.nan, "b": 2.0}).to_row() == {"text": "x", "targets": {"a": None, "b": 2.0}}
    full = Example("x", {}, task="t", group="g", meta={"k": 1})
    assert full.to_row() == {"text": "x", "targets": {}, "task": "t", "group": "g", "meta": {"k": 1}}


def test_example_from_row_accepts_null_optional_fields() -> None:
    example = example_from_row({"text": "x", "targets": {"a": None}, "task": None, "group": None, "meta": None})
    assert example.task is None and example.group is None and example.meta == {}
    assert math.isnan(example.targets["a"])


def test_dataset_error_is_one_line_and_pickles() -> None:
    error = DatasetError("f.jsonl", "bad\nthing", 3, "text")
    assert str(error) == "f.jsonl:3: field 'text': bad thing"
    assert str(DatasetError(None, "oops")) == "<memory>: oops"
    again = pickle.loads(pickle.dumps(error))
    assert str(again) == str(error) and again.line == 3 and again.field == "text"
    assert isinstance(error, ValueError)


# ------------------------------------------------------------------------------------------------- Dataset
def test_dataset_names_tasks_groups_and_len() -> None:
    dataset = _dataset()
    assert len(dataset) == 4
    assert dataset.target_names() == ["flops", "latency", "memory"]
    assert dataset.tasks() == ["cpu", "gpu"]
    assert dataset.groups() == ["p1", "p2"]
    assert [e.text for e in dataset] == ["a", "b", "c", "d"]


def test_dataset_indexing_slicing_and_subset() -> None:
    dataset = _dataset()
    assert dataset[0].text == "a" and dataset[-1].text == "d" and dataset[np.int64(1)].text == "b"
    part = dataset[1:3]
    assert isinstance(part, Dataset) and [e.text for e in part] == ["b", "c"] and part.source == dataset.source
    assert [e.text for e in dataset.subset([3, 0, 3])] == ["d", "a", "d"]
    assert [e.text for e in dataset[np.array([2, 1])]] == ["c", "b"]
    with pytest.raises(DatasetError, match="subset index 9 is out of range for 4 examples"):
        dataset.subset([0, 9])
    with pytest.raises(DatasetError, match="subset index True is bool"):
        dataset.subset([True])


def test_dataset_rejects_non_examples() -> None:
    with pytest.raises(DatasetError, match=r"examples\[1\] is dict, expected Example"):
        Dataset([Example("a", {}), {"text": "b"}])


# ----------------------------------------------------------------------------------------------- to_arrays
def test_to_arrays_defaults_to_all_names_sorted_and_skip() -> None:
    arrays = _dataset().to_arrays()
    assert arrays.objectives == ["flops", "latency", "memory"]
    assert arrays.targets.shape == (0, 3) and arrays.skipped == 4 and arrays.rows.tolist() == []


def test_to_arrays_skip_drops_rows_missing_a_chosen_objective() -> None:
    arrays = _dataset().to_arrays(["memory", "latency"], missing="skip")
    assert arrays.objectives == ["memory", "latency"]
    assert arrays.targets.dtype == np.float64
    np.testing.assert_array_equal(arrays.targets, [[10.0, 1.0]])
    assert arrays.rows.tolist() == [0] and arrays.skipped == 3
    assert arrays.texts == ["a"] and arrays.tasks == ["gpu"] and arrays.groups == ["p1"]
    assert len(arrays) == 1


@pytest.mark.parametrize("missing", ["mask", "special"])
def test_to_arrays_mask_and_special_keep_nan_in_objective_order(missing: str) -> None:
    arrays = _dataset().to_arrays(["latency", "memory"], missing=missing)
    expected = np.array([[1.0, 10.0], [2.0, np.nan], [3.0, np.nan], [np.nan, 40.0]])
    np.testing.assert_array_equal(arrays.targets, expected)
    assert arrays.rows.tolist() == [0, 1, 2, 3] and arrays.skipped == 0 and arrays.missing == missing
    assert arrays.tasks == ["gpu", "cpu", "", "gpu"] and arrays.groups == ["p1", "p1", "p2", ""]


def test_to_arrays_auto_learns_what_a_task_never_has_and_skips_failed_measurements() -> None:
    """ "auto": cpu's only row and the unlabelled row have no memory (their tasks never do: learned as <NaN>);
    gpu's row d misses a latency gpu has elsewhere (a failed measurement: skipped)."""
    arrays = _dataset().to_arrays(["latency", "memory"], missing="auto")
    np.testing.assert_array_equal(arrays.targets, [[1.0, 10.0], [2.0, np.nan], [3.0, np.nan]])
    assert arrays.rows.tolist() == [0, 1, 2] and arrays.skipped == 1 and arrays.missing == "special"
    fully = _dataset()[:1].to_arrays(["latency", "memory"], missing="auto")  # nothing missing: skip, nothing to skip
    assert fully.missing == "skip" and fully.skipped == 0
    unlabelled = Dataset([Example(e.text, e.targets) for e in _dataset()]).to_arrays(["latency", "memory"], "auto")
    assert unlabelled.missing == "skip" and unlabelled.rows.tolist() == [0]  # one task: as "skip"


def test_to_arrays_error_names_the_first_missing_target() -> None:
    with pytest.raises(DatasetError) as info:
        _dataset().to_arrays(["latency", "memory"], missing="error")
    assert str(info.value).startswith("data/x.jsonl: field 'targets.memory': example 2 misses it")
    assert _dataset()[:1].to_arrays(["latency", "memory"], missing="error").targets.tolist() == [[1.0, 10.0]]


def test_to_arrays_single_objective_order_matters() -> None:
    dataset = _dataset()
    a = dataset.to_arrays(["latency"], missing="skip")
    np.testing.assert_array_equal(a.targets, [[1.0], [2.0], [3.0]])
    b = dataset.to_arrays(["flops", "memory"], missing="mask")
    np.testing.assert_array_equal(b.targets[3], [-1.5, 40.0])


def test_to_arrays_unknown_objective_names_it_and_lists_known() -> None:
    with pytest.raises(DatasetError) as info:
        _dataset().to_arrays(["latency", "energy"])
    assert str(info.value) == "data/x.jsonl: unknown objective 'energy'; known objectives: flops, latency, memory"


@pytest.mark.parametrize(
    ("objectives", "missing", "needle"),
    [
        (["latency"], "drop", "missing='drop' is unknown"),
        ([], "skip", "objectives is empty"),
        ("latency", "skip", "not one string"),
        (["latency", "latency"], "skip", "objectives repeat 'latency'"),
    ],
)
def test_to_arrays_rejects_bad_requests(objectives, missing: str, needle: str) -> None:
    with pytest.raises(DatasetError, match=needle):
        _dataset().to_arrays(objectives, missing=missing)
