"""Inputs and targets: checks, and (soon) the dataset format and splits."""

from coderlm.data.checks import check_targets, check_texts

__all__ = ["check_targets", "check_texts"]
