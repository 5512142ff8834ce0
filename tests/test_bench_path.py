"""The bench scripts run with bench/ first on sys.path (Python puts a script's folder there): no module of
theirs may shadow a package that the libraries they load look for. A ``bench/kernels.py`` once did:
``transformers`` probes the Hugging Face ``kernels`` package and imported the bench script instead."""

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_a_bert_encoder_loads_with_bench_first_on_the_path():
    pytest.importorskip("transformers")
    code = "import sys; sys.path.insert(0, sys.argv[1]); import transformers.models.bert.modeling_bert"
    done = subprocess.run([sys.executable, "-c", code, str(BENCH)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
