"""Inputs and targets: in-memory checks, the dataset format (JSON Lines, Parquet) and splits."""

from coderlm.data.checks import check_targets, check_texts
from coderlm.data.io import iter_examples, read_dataset, write_dataset
from coderlm.data.schema import (
    FIELDS,
    MISSING_POLICIES,
    Dataset,
    DatasetArrays,
    DatasetError,
    Example,
    example_from_row,
)
from coderlm.data.splits import check_fractions, group_split, random_split, split_dataset, split_sizes

__all__ = [
    "FIELDS",
    "MISSING_POLICIES",
    "Dataset",
    "DatasetArrays",
    "DatasetError",
    "Example",
    "check_fractions",
    "check_targets",
    "check_texts",
    "example_from_row",
    "group_split",
    "iter_examples",
    "random_split",
    "read_dataset",
    "split_dataset",
    "split_sizes",
    "write_dataset",
]
