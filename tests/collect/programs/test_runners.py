"""Language runners are data; each available toolchain compiles, runs and measures; missing ones are skipped."""

import pytest

from coderlm.collect.programs.runners import baseline, get_runner, load_runners, profile_program

RUNNERS = load_runners()
FAST = {"repeats": 2, "warmups": 1}

# per language: a passing program that allocates ~64 MiB, and one that fails its check at run time
PROGRAMS = {
    "cpp": (
        "#include <vector>\n#include <cstdio>\nint main() { std::vector<char> v(64 << 20, 1); long s = 0;"
        ' for (char c : v) s += c; std::printf("%ld\\n", s); return s == (64 << 20) ? 0 : 1; }\n',
        '#include <stdexcept>\nint main() { throw std::runtime_error("test case 0 did not pass"); }\n',
    ),
    "java": (
        "class Main { public static void main(String[] a) { byte[] b = new byte[64 << 20];"
        " java.util.Arrays.fill(b, (byte) 1); System.out.println(b.length); } }\n",
        'class Main { public static void main(String[] a) throws Exception { throw new Exception("fail"); } }\n',
    ),
    "javascript": (
        "const b = Buffer.alloc(64 << 20, 1); console.log(b.length);\n",
        "throw 'Error at 1th assert statement';\n",
    ),
    "typescript": (
        "const b: Buffer = Buffer.alloc(64 << 20, 1); console.log(b.length);\n",
        "import * as assert from 'assert'\nassert.deepEqual(1, 2, 'test case 0 failed');\n",
    ),
    "perl": (
        "my $s = 'x' x (64 << 20); print length($s), \"\\n\";\n",
        "die 'Exception -- test case 0 did not pass.';\n",
    ),
    "go": (
        'package main\nimport "fmt"\nfunc main() { b := make([]byte, 64<<20); for i := range b { b[i] = 1 };'
        " fmt.Println(len(b)) }\n",
        'package main\nfunc main() { panic("test case 0 failed") }\n',
    ),
}
# (TypeScript is left out: tsc emits JavaScript despite errors, as MBXP runs it, so a broken file fails at run time)
COMPILE_ERRORS = {"cpp": "int main( {", "java": "class Main {", "go": "package main\nfunc"}


def available(language):
    runner = RUNNERS[language]
    problem = runner.missing()
    if problem:
        pytest.skip(problem)
    return runner


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(PROGRAMS))
def test_each_language_runs_measures_and_fails_cleanly(language):
    runner = available(language)
    good, bad = PROGRAMS[language]
    record = profile_program(good, runner, **FAST)
    assert record["status"] == "passed", record.get("stderr_tail")
    empty = baseline(runner, **FAST)
    assert empty["status"] == "passed", empty.get("stderr_tail")
    # 64 MiB touched: the run's peak RSS is ~64 MiB above the empty program's
    assert 50 << 20 < record["peak_memory_bytes"] - empty["peak_memory_bytes"] < 200 << 20
    assert len(record["runtime_repeats_s"]) == 2 and record["runtime_s"] > 0
    assert ("compile_s" in record) == bool(runner.compile)
    failed = profile_program(bad, runner, **FAST)
    assert failed["status"] in ("failed", "crashed") and failed["failed_run"] == 0
    if language in COMPILE_ERRORS:
        broken = profile_program(COMPILE_ERRORS[language], runner, **FAST)
        assert broken["status"] == "compile_error" and broken["stderr_tail"]


def test_cpp_timeout_and_second_pass():
    runner = available("cpp")
    hang = profile_program("int main() { volatile long i = 0; while (true) { i++; } }\n", runner, timeout_s=0.5, **FAST)
    assert hang["status"] == "timeout"
    twice = profile_program("int main() { return 0; }\n", runner, passes=2, **FAST)
    assert twice["status"] == "passed" and len(twice["reruns"]) == 1
    assert twice["reruns"][0]["peak_memory_bytes"] > 0


def test_a_missing_toolchain_is_reported_and_skipped(tmp_path):
    table = tmp_path / "mine.toml"
    table.write_text(
        '[cobol]\nfile = "main.cob"\nrun = ["./main"]\ncompile = ["cobc-not-installed-xyz", "main.cob"]\n'
        'needs = ["cobc-not-installed-xyz"]\ninstall = "apt-get install gnucobol"\n'
    )
    runners = load_runners(table)
    assert "cpp" in runners and "cobol" in runners  # added to the shipped table
    problem = runners["cobol"].missing()
    assert "cobc-not-installed-xyz" in problem and "apt-get install gnucobol" in problem
    assert profile_program("x", runners["cobol"])["status"] == "unavailable"


def test_runner_table_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[x]\nfile = "a"\nrun = ["a"]\ncolour = "red"\n')
    with pytest.raises(ValueError, match="unknown field"):
        load_runners(bad)
    bad.write_text('[x]\nrun = ["a"]\n')
    with pytest.raises(ValueError, match="needs 'file'"):
        load_runners(bad)
    with pytest.raises(ValueError, match="unknown language 'klingon'"):
        get_runner("klingon")
    with pytest.raises(FileNotFoundError):
        load_runners(tmp_path / "absent.toml")


def test_shipped_table_covers_the_mbxp_languages():
    assert {"python", "cpp", "java", "javascript", "typescript", "perl", "go"} <= set(RUNNERS)
    assert all(r.empty and r.install for r in RUNNERS.values())


def test_harness_table_errors_name_the_table(tmp_path):
    bad = tmp_path / "bad.toml"
    base = '[x]\nfile = "a"\nrun = ["a"]\n[x.harness]\ntemplate = "t"\nmemory = ["a"]\ntime = ["a"]\n'
    bad.write_text(base + 'labels = ["alloc_bytes"]\ncolour = "red"\n')
    with pytest.raises(ValueError, match=r"\[x.harness\] has unknown field\(s\) \['colour'\]"):
        load_runners(bad)
    bad.write_text(base + 'labels = ["alloc_bytes"]\nmemory_label = "peak"\n')
    with pytest.raises(ValueError, match="memory_label 'peak' is not one of labels"):
        load_runners(bad)
    bad.write_text(base)
    with pytest.raises(ValueError, match=r"\[x.harness\] needs 'labels'"):
        load_runners(bad)
    bad.write_text(base + 'labels = ["alloc_bytes"]\n')
    assert "harness template" in load_runners(bad)["x"].harness_missing()
    assert "no [perl.harness] table" in RUNNERS["perl"].harness_missing()
