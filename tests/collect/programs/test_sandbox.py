"""The sandbox contains hostile programs and reports them as failures; the collector survives them."""

import os
import shutil
import socket

import pytest

from coderlm.collect.programs.sandbox import Limits, Sandbox, isolation

PYTHON = ["python3", "-I", "-S", "-B", "main.py"]
pytestmark = pytest.mark.skipif(shutil.which("python3", path="/usr/bin:/bin") is None, reason="no system python3")


DEFAULT = Limits(timeout_s=5, memory_mb=512, processes=64)


def run(source: str, limits: Limits = DEFAULT):
    with Sandbox() as box:
        box.write("main.py", source)
        result = box.run(PYTHON, limits)
        folder = box.path
    assert not folder.exists()  # the sandbox folder is removed afterwards
    return result


def test_ok_program_and_its_measurements():
    result = run("import sys\nx = bytearray(64 << 20)\nprint(len(x)); print('err', file=sys.stderr)")
    assert result.status == "ok" and result.returncode == 0
    assert result.stdout.strip() == str(64 << 20) and result.stderr.strip() == "err"
    # peak RSS is the program's own: above the 64 MiB it touched, far below the collector's footprint + 64 MiB
    assert 64 << 20 < result.peak_rss_bytes < 120 << 20
    assert result.wall_s > 0 and result.cpu_s > 0


def test_environment_is_scrubbed_and_home_is_the_sandbox():
    os.environ["CODERLM_TEST_SECRET"] = "hunter2"
    try:
        result = run("import os, json; print(json.dumps(dict(os.environ))); print(os.getcwd())")
    finally:
        del os.environ["CODERLM_TEST_SECRET"]
    env_line, cwd = result.stdout.strip().splitlines()
    assert "hunter2" not in env_line and "CODERLM_TEST_SECRET" not in env_line
    assert set(__import__("json").loads(env_line)) <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_CTYPE"}
    assert cwd.startswith("/") and "coderlm-sandbox" in cwd


@pytest.mark.slow
def test_infinite_loop_is_killed_at_the_timeout():
    result = run("while True:\n    pass\n", Limits(timeout_s=1.0, memory_mb=512))
    assert result.status == "timeout" and 0.9 < result.wall_s < 5


def test_cpu_limit_kills_even_without_the_wall_clock():
    result = run("while True:\n    pass\n", Limits(timeout_s=30, cpu_s=1, memory_mb=512))
    assert result.status == "signal" and result.wall_s < 10  # SIGXCPU, then SIGKILL at the hard limit


def test_memory_bomb_is_contained():
    result = run("x = bytearray(8 << 30)\n")  # 8 GiB against a 512 MiB address space
    assert result.status == "error" and "MemoryError" in result.stderr


def test_fork_bomb_is_contained_and_leaves_nothing_behind():
    if not isolation()["nproc_enforced"]:
        pytest.skip("RLIMIT_NPROC is not enforced for root without setpriv")
    source = "import os\nwhile True:\n    os.fork()\n"
    result = run(source, Limits(timeout_s=5, memory_mb=512, processes=32))
    assert result.status in ("error", "timeout", "signal")
    after = run("print('alive')")  # the machine still runs programs: no process-table exhaustion
    assert after.ok and after.stdout.strip() == "alive"


def test_writing_outside_the_sandbox_fails(tmp_path):
    if isolation()["user"] != "nobody":
        pytest.skip("files outside the sandbox are protected only when the collector runs as root (drops to nobody)")
    target = tmp_path / "escaped.txt"
    result = run(f"open({str(target)!r}, 'w').write('gotcha')\n")
    assert result.status == "error" and "PermissionError" in result.stderr
    assert not target.exists()


def test_opening_a_network_socket_fails():
    if not isolation()["network_namespace"]:
        pytest.skip("no network namespace here (unshare --net not permitted)")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        result = run(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'x')\n")
        server.settimeout(0.2)
        with pytest.raises(TimeoutError):  # a connection made by the program would be waiting in the backlog
            server.accept()
    assert result.status == "error" and "OSError" in result.stderr


def test_megabytes_of_output_are_capped():
    result = run("import sys\nwhile True:\n    sys.stdout.write('x' * 100000)\n", Limits(timeout_s=5, file_mb=1))
    assert result.status == "output_limit" and len(result.stdout) <= 1 << 20


def test_crash_by_signal_and_plain_failure_are_told_apart():
    assert run("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n").status == "signal"
    failed = run("raise SystemExit(3)\n")
    assert failed.status == "error" and failed.returncode == 3


def test_missing_command_is_an_error_not_an_exception():
    with Sandbox() as box:
        result = box.run(["definitely-not-a-command-xyz"], Limits(timeout_s=5))
    assert result.status in ("error", "signal") and result.returncode != 0


def test_limits_validate():
    with pytest.raises(ValueError, match="timeout_s"):
        Limits(timeout_s=0)
    with pytest.raises(ValueError, match="memory_mb"):
        Limits(memory_mb=1)


def test_stdin_is_fed():
    with Sandbox() as box:
        box.write("main.py", "import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))\n")
        result = box.run(PYTHON, Limits(timeout_s=5), stdin=b"1 2 3\n")
    assert result.ok and result.stdout.strip() == "6"
