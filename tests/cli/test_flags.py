"""Flags come from where options are declared; errors name the flag."""

import dataclasses
import json

import pytest

from coderlm import RegressionLM
from coderlm.cli import main
from coderlm.cli.flags import dataclass_options, docstring_args, signature_options
from coderlm.cli.quickstart import QuickstartConfig
from coderlm.cli.train import ESTIMATOR_FLAGS, MODEL_FLAGS, TRAINING_FLAGS
from coderlm.model.config import DERIVED_FIELDS, ModelConfig
from coderlm.training.config import TrainConfig


def test_docstring_args_joins_continuation_lines():
    def f(a=1, b=2):
        """Summary.

        Args:
            a: first line
                and its continuation
            b: second
        """

    assert docstring_args(f) == {"a": "first line and its continuation", "b": "second"}


@pytest.mark.parametrize(
    "options",
    [ESTIMATOR_FLAGS, MODEL_FLAGS, TRAINING_FLAGS, dataclass_options(QuickstartConfig)],
    ids=["estimator", "model", "training", "quickstart"],
)
def test_every_generated_flag_is_documented(options):
    assert options and all(option.help for option in options), [o.name for o in options if not o.help]


def test_generated_flags_cover_every_option_with_its_default():
    assert {o.name for o in MODEL_FLAGS} == {f.name for f in dataclasses.fields(ModelConfig)} - set(DERIVED_FIELDS)
    assert {o.name: o.default for o in TRAINING_FLAGS} == dataclasses.asdict(TrainConfig())
    estimator = {o.name: o for o in signature_options(RegressionLM)}
    assert {o.name for o in ESTIMATOR_FLAGS} == set(estimator) - {"number_format", "specials", "model", "training"}
    assert {o.name: o.default for o in ESTIMATOR_FLAGS} == {
        k: v for k, v in RegressionLM().get_params().items() if k in {o.name for o in ESTIMATOR_FLAGS}
    }


def test_help_shows_defaults_from_the_declarations(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--batch-size-predict BATCH_SIZE_PREDICT inputs per forward pass when predicting (default: 16)" in out
    assert "--layout-markers" in out and "(default: auto)" in out
    assert "--clip-norm CLIP_NORM gradient clipping at this global norm; 0 disables it (default: 2.0)" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["collect", "nas", "--count", "99999", "--out", "{tmp}/n"], "coderlm: error: --count must be in 1..15625"),
        (
            ["train", "--data", "{data}", "--out", "{tmp}/r", "--steps", "0"],
            "coderlm: error: --steps must be a positive",
        ),
        (["train", "--data", "{data}", "--out", "{tmp}/r", "--dropout", "2"], "coderlm: error: --dropout must be in"),
        (["train", "--data", "{data}", "--out", "{tmp}/r", "--pretokenize", "plain"], "coderlm: error: --pretokenize"),
    ],
)
def test_library_errors_name_the_flag(tmp_path, capsys, argv, message):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"text": "a = 1\n", "targets": {"y": 1.0}}) + "\n")
    assert main([a.format(tmp=tmp_path, data=data) for a in argv]) == 2
    assert capsys.readouterr().err.startswith(message)
