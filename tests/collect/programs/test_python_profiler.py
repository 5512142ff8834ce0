"""The Python profiler follows the paper's protocol: heap peak of the tests only, in-process timing."""

import shutil

import pytest

from coderlm.collect.programs.python_profiler import profile_python, profile_python_passes

pytestmark = pytest.mark.skipif(shutil.which("python3", path="/usr/bin:/bin") is None, reason="no system python3")
FAST = {"repeats": 3, "warmups": 1}

DEFINITIONS = "def build(n):\n    return [i * 2 for i in range(n)]\n"


def test_peak_grows_with_what_the_tests_allocate_not_with_the_source():
    small = profile_python(DEFINITIONS, "assert len(build(10)) == 10\n", **FAST)
    large = profile_python(DEFINITIONS, "assert len(build(100000)) == 100000\n", **FAST)
    assert small["status"] == large["status"] == "passed"
    assert small["peak_memory_bytes"] < 5_000 < 800_000 < large["peak_memory_bytes"]  # a list of 100k ints
    # a long source with the same tests: compilation and definitions are outside the trace
    padded = DEFINITIONS + "".join(f"def unused_{i}(x):\n    return [x] * {i}\n" for i in range(300))
    same = profile_python(padded, "assert len(build(10)) == 10\n", **FAST)
    assert abs(same["peak_memory_bytes"] - small["peak_memory_bytes"]) < 512


def test_record_fields_and_protocol():
    record = profile_python(DEFINITIONS, "build(1000)\n", repeats=5, warmups=2)
    assert record["status"] == "passed" and record["exit_code"] == 0
    assert record["repeats"] == 5 and record["warmups"] == 2 and len(record["runtime_repeats_s"]) == 5
    times = sorted(record["runtime_repeats_s"])
    assert record["runtime_s"] == times[2] and 0 < record["runtime_s"] < 0.1  # median of in-process test time
    assert record["process_wall_s"] > record["runtime_s"] * 5  # the process (start-up included) is recorded apart
    assert record["peak_rss_bytes"] > 1 << 20
    assert record["isolation"]["rss_source"] in ("rss_exec", "wait4-inherited")


def test_dynamic_peak_is_deterministic_run_to_run():
    record = profile_python_passes(DEFINITIONS, "build(5000)\n", passes=2, **FAST)
    assert record["status"] == "passed"
    assert record["reruns"][0]["peak_memory_bytes"] == record["peak_memory_bytes"]


@pytest.mark.parametrize(
    ("tests", "status"),
    [
        ("assert build(2) == [0, 3]\n", "failed"),
        ("import os\nos.kill(os.getpid(), 11)\n", "crashed"),
        ("import sys\nsys.stdout.write('x' * (3 << 20))\n", "output_limit"),
        ("x = bytearray(4 << 30)\n", "failed"),
    ],
)
def test_failures_are_recorded_with_their_status(tests, status):
    record = profile_python(DEFINITIONS, tests, memory_mb=512, **FAST)
    assert record["status"] == status and "peak_memory_bytes" not in record


@pytest.mark.slow
def test_a_hang_costs_one_timeout():
    record = profile_python("", "while True:\n    pass\n", timeout_s=1.0, **FAST)
    assert record["status"] == "timeout" and record["process_wall_s"] < 3


def test_stdin_is_rewound_for_every_repeat_and_sys_exit_zero_is_fine():
    script = "import sys\ntotal = sum(map(int, sys.stdin.read().split()))\nassert total == 6, total\nsys.exit(0)\n"
    record = profile_python("", script, stdin="1 2 3\n", **FAST)
    assert record["status"] == "passed"


def test_bad_protocol_raises():
    with pytest.raises(ValueError, match="repeats"):
        profile_python("", "pass\n", repeats=0)
