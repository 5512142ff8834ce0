"""Option errors name the option; they survive pickling (worker processes raise them too)."""

import pickle

import pytest

from coderlm.options import OptionError, check_options
from coderlm.training.config import TrainConfig


def test_option_error_names_the_option_and_round_trips():
    error = OptionError("steps", "must be a positive integer, got 0", kind="training option")
    assert str(error) == "training option steps must be a positive integer, got 0"
    again = pickle.loads(pickle.dumps(error))
    assert (again.option, again.message, str(again)) == ("steps", "must be a positive integer, got 0", str(error))
    assert isinstance(again, ValueError)


def test_check_options_lists_unknown_keys():
    with pytest.raises(ValueError, match=r"unknown training option\(s\) \['epochs'\]"):
        check_options(TrainConfig, {"epochs": 3}, "training")
