"""Reliability of the process as a whole (issue 12): the patch ``--diff``
prints, what reaches the terminal, signals, broken standard streams, and
the bounds on what one file may cost.  Every test runs the real command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import default_sigint

CMD = [sys.executable, "-m", "celerylint"]
ENV = {**os.environ, "NO_COLOR": "1"}

# CL203 (lock without a TTL): --fix --unsafe-fixes adds ``timeout=60``.
LOCK = 'import redis\nr = redis.Redis()\ndef f(k):\n    with r.lock("lock:" + k):\n        pass'


def run(*args: str, cwd: Path, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("timeout", 300)
    return subprocess.run([*CMD, *args], cwd=cwd, capture_output=True, env=ENV, **kw)


# -- F3: --diff is a patch git applies ----------------------------------------

def _lock_with(line: str) -> str:
    """The lock case with ``line`` just above the fixed one: inside the hunk."""
    return LOCK.replace("    with", f"    {line}\n    with")


DIFF_CASES = {
    "no trailing newline": {"a.py": LOCK.encode(), "b.py": (LOCK + "\n").encode()},
    "no trailing newline, far from the fix": {"a.py": (LOCK + "\n" + "x = 1\n" * 8 + "# end").encode()},
    "form feed and U+2028": {
        "a.py": _lock_with('s = "x\u2028y"  # a\x0cb\x0b\x1c\x85').encode(),
        "b.py": ("import redis\nr = redis.Redis()\n\x0c\ndef f(k):\n    # \u2029\n"
                 "    with r.lock(k):\n        pass\n").encode()},
    "CRLF": {"a.py": (LOCK + "\n").replace("\n", "\r\n").encode(),
             "b.py": LOCK.replace("\n", "\r\n").encode()},
    "CR only": {"a.py": (LOCK + "\n").replace("\n", "\r").encode(),
                "b.py": LOCK.replace("\n", "\r").encode()},
    "latin-1": {"a.py": ("# -*- coding: latin-1 -*-\n" + _lock_with('s = "caf\xe9 \xa0"')).encode("latin-1")},
    "escape bytes": {"a.py": _lock_with('s = "\x1b[2J\x1b]0;PWNED\x07\x9b"  # \x1b[31mred\x7f').encode()},
    "odd file names": {"caf\xe9 and space.py": (LOCK + "\n").encode(), 'q"uote\\d.py': LOCK.encode()},
}


def _git(*args: str, cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-c", "core.autocrlf=false", *args], cwd=cwd, capture_output=True,
                          timeout=60, **kw)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("case", sorted(DIFF_CASES))
def test_diff_is_a_patch_git_applies(tmp_path, case):
    files = DIFF_CASES[case]
    repo, fixed = tmp_path / "repo", tmp_path / "fixed"
    for root in (repo, fixed):
        root.mkdir()
        for name, data in files.items():
            (root / name).write_bytes(data)
    _git("init", "-q", ".", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start", cwd=repo)

    diff = run("--no-cache", "--diff", "--unsafe-fixes", ".", cwd=repo)
    assert diff.returncode == 1, diff.stderr
    patch = diff.stdout
    assert patch.endswith(b"\n")
    check = _git("apply", "--check", "-", cwd=repo, input=patch)
    assert check.returncode == 0, check.stderr.decode() + patch.decode("latin-1")
    assert _git("apply", "-", cwd=repo, input=patch).returncode == 0
    assert {name: (repo / name).read_bytes() for name in files} != files  # something changed

    done = run("--no-cache", "--fix", "--unsafe-fixes", ".", cwd=fixed)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in files:
        assert (repo / name).read_bytes() == (fixed / name).read_bytes(), name
    # Nothing is left to fix: the applied patch is what --fix writes.
    assert run("--no-cache", "--diff", "--unsafe-fixes", ".", cwd=repo).stdout == b""


def test_diff_keeps_the_file_bytes(tmp_path):
    """The patch is in the file's own encoding and keeps its control bytes,
    also when stdout is not a terminal (click.echo would strip them)."""
    (tmp_path / "a.py").write_bytes(("# -*- coding: latin-1 -*-\n" + _lock_with('s = "\xe9\x1b[2J"')).encode("latin-1"))
    patch = run("--no-cache", "--diff", "--unsafe-fixes", ".", cwd=tmp_path).stdout
    assert b' s = "\xe9\x1b[2J"\n' in patch
    assert b"\\ No newline at end of file\n" in patch
    assert run("--no-cache", "--diff", "--unsafe-fixes", "--output", "fixes.patch", ".", cwd=tmp_path).returncode == 1
    assert (tmp_path / "fixes.patch").read_bytes() == patch


def test_patch_builder_edge_cases():
    from celerylint.run.patch import unified_diff

    assert unified_diff(b"x\n", b"x\n", "a.py") == b""
    assert unified_diff(b"", b"x\n", "a.py") == b"--- a/a.py\n+++ b/a.py\n@@ -0,0 +1 @@\n+x\n"
    assert unified_diff(b"x", b"x\n", "a.py").endswith(
        b"@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+x\n")
    assert unified_diff(b"x\n", b"", "a.py").endswith(b"@@ -1 +0,0 @@\n-x\n")
    assert unified_diff(b"a\nb", b"a\nc", "a.py").endswith(
        b"@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n")


# -- F4: nothing from the linted files reaches the terminal raw ---------------

HOSTILE = "\x1b]0;PWNED\x07\x1b[2J\u202e\x9b\x7f\x00"[:-1]  # title, clear screen, RLO, CSI (C1), DEL
HOSTILE_SHOWN = "\\x1b]0;PWNED\\x07\\x1b[2J\\u202e\\x9b\\x7f"
RAW = [chr(c) for c in [*range(0x00, 0x0A), *range(0x0B, 0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F),
                        *range(0x2066, 0x206A)]]


@pytest.fixture
def hostile(tmp_path):
    key = f'"lock:{HOSTILE}"'
    source = f"import redis\nr = redis.Redis()\ndef f(token):\n    r.set({key}, token, nx=True, ex=30)\n    r.delete({key})\n"
    (tmp_path / "jobs.py").write_text(source)
    (tmp_path / f"x{HOSTILE}.py").write_text(source)  # the path is shown too
    os.symlink(tmp_path / "missing", tmp_path / f"gone{HOSTILE}.py")  # a notice naming it
    return tmp_path


@pytest.mark.parametrize("fmt", ["full", "concise", "grouped", "github"])
def test_human_formats_escape_control_characters(hostile, fmt):
    done = run("--no-cache", "--format", fmt, ".", cwd=hostile)
    assert done.returncode == 1, done.stderr
    out, err = done.stdout.decode(), done.stderr.decode()
    assert [c for c in RAW if c in out] == []
    assert [c for c in RAW if c in err] == []
    # one finding in each of two files, one of them named with it (full also quotes the source lines)
    assert out.count(HOSTILE_SHOWN) > 3 if fmt == "full" else out.count(HOSTILE_SHOWN) == 3
    assert f"gone{HOSTILE_SHOWN}.py: skipped" in err


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_json_formats_escape_control_characters_and_keep_them(hostile, fmt):
    import json

    done = run("--no-cache", "--format", fmt, ".", cwd=hostile)
    out = done.stdout.decode()
    assert [c for c in RAW if c in out] == []
    data = json.loads(out)
    messages = [f["message"] for f in data] if fmt == "json" else [
        r["message"]["text"] for r in data["runs"][0]["results"]]
    assert sum(HOSTILE in m for m in messages) == 2  # the same text, once decoded


def test_printable():
    from celerylint.reporters.printable import json_escaped, printable

    assert printable("a\tb\nc\rd\x1b\x85\u2066 é ✓") == "a\\tb\\nc\\rd\\x1b\\x85\\u2066 é ✓"
    assert printable("line\none\x07", newlines=True) == "line\none\\x07"
    assert json_escaped('"\x7f\u202e"') == '"\\u007f\\u202e"'


# -- F15: a standard output that cannot be written to -------------------------

@pytest.fixture
def findings(tmp_path):
    (tmp_path / "jobs.py").write_text(LOCK + "\n")
    return tmp_path


def _one_line_error(stderr: bytes, what: str) -> None:
    lines = stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("celerylint: error: ") and what in lines[0], stderr.decode()


@pytest.mark.parametrize("args", [[], ["--format", "json"], ["--diff", "--unsafe-fixes"], ["--list-rules"]])
def test_closed_stdout_exits_2_with_one_line(findings, args):
    done = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", *CMD, "--no-cache", *args, "."],
                          cwd=findings, capture_output=False, stderr=subprocess.PIPE, timeout=120, env=ENV)
    assert done.returncode == 2
    _one_line_error(done.stderr, "standard output is closed")


def test_closed_stdout_with_output_file_still_works(findings):
    done = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", *CMD, "--no-cache", "--output", "r.txt", "."],
                          cwd=findings, stderr=subprocess.PIPE, timeout=120, env=ENV)
    assert (done.returncode, done.stderr) == (1, b"")
    assert "CL203" in (findings / "r.txt").read_text()


@pytest.mark.parametrize("args", [[], ["--format", "sarif"], ["--diff", "--unsafe-fixes"], ["--explain", "CL203"]])
def test_full_stdout_exits_2_with_one_line(findings, args):
    with open("/dev/full", "w") as full:
        done = subprocess.run([*CMD, "--no-cache", *args, "."], cwd=findings, stdout=full,
                              stderr=subprocess.PIPE, timeout=120, env=ENV)
    assert done.returncode == 2
    _one_line_error(done.stderr, "No space left on device")


def test_broken_stdout_and_stderr_exit_2_quietly(findings):
    """Neither stream works: no traceback can be shown, the status says it."""
    for shell in ('exec "$@" >&- 2>&-', 'exec "$@" >/dev/full 2>/dev/full'):
        done = subprocess.run(["sh", "-c", shell, "sh", *CMD, "--no-cache", "."], cwd=findings, timeout=120, env=ENV)
        assert done.returncode == 2, shell


def test_reader_leaving_the_pipe_is_not_a_traceback(tmp_path):
    """``celerylint . | head -1`` on a report larger than the pipe's buffer
    (400 findings with their snippets and fixes: 150 kB, a Linux pipe holds 64 kB)."""
    (tmp_path / "jobs.py").write_text("import redis\nr = redis.Redis()\n" + "with r.lock('x'):\n    pass\n" * 400)
    proc = subprocess.Popen([*CMD, "--no-cache", "."], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=ENV)
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 2
    assert b"Traceback" not in err and b"Exception ignored" not in err, err.decode()


# -- F13, F14: signals ----------------------------------------------------------

import signal  # noqa: E402
import time  # noqa: E402

TASKS = "from celery import shared_task\nimport redis\nr = redis.Redis()\n" + "".join(
    f"@shared_task(bind=True)\ndef task_{j}(self, k):\n    with r.lock('lock:' + k):\n        self.retry(countdown=7200)\n"
    for j in range(1200))  # ~130 kB, 2,400 findings: a result far larger than a pipe's buffer


@pytest.fixture
def pool_tree(tmp_path):
    """Enough files for both pools (pool.PARALLEL_MIN_PATHS and
    PARALLEL_MIN_FILES/BYTES): several seconds of work for two processes."""
    from celerylint.run import pool

    for i in range(pool.PARALLEL_MIN_PATHS + 50):
        (tmp_path / f"m{i}.py").write_text(f"from celery import shared_task\n@shared_task\ndef t{i}(x):\n    return x\n")
    for i in range(max(pool.PARALLEL_MIN_FILES, 6)):
        (tmp_path / f"big{i}.py").write_text(TASKS)
    assert 6 * len(TASKS) >= pool.PARALLEL_MIN_BYTES
    yield tmp_path
    for pid in _running_in(tmp_path):  # what a failed test left behind
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _start(cwd: Path, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([*CMD, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
                            preexec_fn=default_sigint, **kw)


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _running_in(directory: Path) -> list[int]:
    """Live processes (not zombies) whose working directory is ``directory``:
    celerylint and any worker it forked, whoever their parent is now."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/cwd") != str(directory):
                continue
            with open(f"/proc/{entry}/stat") as fh:
                state = fh.read().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            found.append(int(entry))
    return found


def _wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _loaded(pid: int, library: str) -> bool:
    try:
        with open(f"/proc/{pid}/maps") as fh:
            return library in fh.read()
    except OSError:
        return False


def _parsing_worker(pid: int) -> bool:
    """A worker of the parsing pool runs: forked after libcst was imported."""
    return any(_loaded(child, "libcst") for child in _children(pid))


def _none_left(directory: Path) -> None:
    deadline = time.monotonic() + 10
    while _running_in(directory):
        assert time.monotonic() < deadline, f"processes left behind: {_running_in(directory)}"
        time.sleep(0.05)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_killed_while_workers_run_leaves_no_worker(pool_tree, signum):
    """The caller's communicate() returns: no worker outlives celerylint,
    blocked writing its results, with the caller's stdout and stderr open."""
    proc = _start(pool_tree, "--no-cache", "--jobs", "2", ".")
    try:
        _wait_for(lambda: _parsing_worker(proc.pid))
        time.sleep(0.3)
        assert _parsing_worker(proc.pid), "the run ended before the signal: make the tree larger"
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == (-signal.SIGKILL if signum == signal.SIGKILL else 128 + signal.SIGTERM)
    if signum == signal.SIGTERM:
        assert (out, err) == (b"", b"")
    _none_left(pool_tree)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_terminated_process_group_is_quiet(pool_tree):
    """``timeout``, systemd and CI runners signal the whole group: the
    workers die too, and nobody prints a traceback."""
    proc = _start(pool_tree, "--no-cache", "--jobs", "2", ".", start_new_session=True)
    try:
        _wait_for(lambda: _parsing_worker(proc.pid))
        time.sleep(0.3)
        os.killpg(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, out, err) == (128 + signal.SIGTERM, b"", b"")
    _none_left(pool_tree)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("group", [False, True], ids=["process", "process group"])
def test_ctrl_c_exits_130_and_prints_nothing(pool_tree, group):
    """Ctrl-C at a terminal signals the whole group; ``kill -INT`` the process."""
    proc = _start(pool_tree, "--no-cache", "--jobs", "2", ".", start_new_session=True)
    try:
        _wait_for(lambda: _parsing_worker(proc.pid))
        time.sleep(0.3)
        if group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, out, err) == (130, b"", b"")
    _none_left(pool_tree)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_in_one_process_exits_130(tmp_path):
    """No pool: interrupted while libcst parses."""
    for i in range(3):
        (tmp_path / f"big{i}.py").write_text(TASKS)
    proc = _start(tmp_path, "--no-cache", "--jobs", "1", ".")
    try:
        _wait_for(lambda: _loaded(proc.pid, "libcst"))
        time.sleep(0.3)
        assert proc.poll() is None, "the run ended before the signal: make the file larger"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, out, err) == (130, b"", b"")


# -- F16: memory per file is bounded ---------------------------------------------

MEASURE = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)  # kB on Linux
print(done.returncode)
print(done.stdout)
"""
HEAD = "import redis\nr = redis.Redis()\n"
TAIL = "def g(k):\n    with r.lock(k):\n        pass\n"  # a finding with a fix: positions for every node


def _worst_shape(tokens: int) -> str:
    """The shape that costs libcst the most memory per word or symbol:
    ``x = [a[:], a[:], ...]`` (about 3 kB each)."""
    from celerylint.engine.guard import _TOKEN

    fixed = len(_TOKEN.findall(HEAD + "x = [\n]\n" + TAIL))
    return HEAD + "x = [" + "a[:]," * ((tokens - fixed) // 5) + "]\n" + TAIL


def _peak(tmp_path: Path, text: str) -> tuple[int, str]:
    (tmp_path / "big.py").write_text(text)
    lines = subprocess.run([sys.executable, "-c", MEASURE, *CMD, "--no-cache", "--jobs", "1", "big.py"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=300, env=ENV).stdout.split("\n", 2)
    return int(lines[0]) // 1024, lines[2]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in kB")
def test_largest_file_libcst_parses_stays_under_300_mb(tmp_path):
    from celerylint.engine.guard import _TOKEN, MAX_PARSE_TOKENS

    text = _worst_shape(MAX_PARSE_TOKENS - 20)
    assert MAX_PARSE_TOKENS - 30 < len(_TOKEN.findall(text)) <= MAX_PARSE_TOKENS
    peak, out = _peak(tmp_path, text)
    assert "CL203" in out and "CL001" not in out, out[-500:]  # it was analysed
    assert peak <= 300, f"{peak} MB"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in kB")
def test_a_million_characters_of_few_tokens_stays_under_300_mb(tmp_path):
    """Just under the character limit, with long lines (string constants):
    accepted, and cheap."""
    from celerylint.engine.guard import MAX_PARSE_CHARS

    line = "s = '" + "x" * 2000 + "'  # " + "y" * 2000 + "\n"
    text = HEAD + line * ((MAX_PARSE_CHARS - 200) // len(line)) + TAIL
    assert MAX_PARSE_CHARS - 5000 < len(text) <= MAX_PARSE_CHARS
    peak, out = _peak(tmp_path, text)
    assert "CL203" in out and "CL001" not in out, out[-500:]
    assert peak <= 300, f"{peak} MB"


def test_a_file_over_the_token_limit_is_cl001_too_large(tmp_path):
    from celerylint.engine.guard import MAX_PARSE_TOKENS

    (tmp_path / "big.py").write_text(_worst_shape(MAX_PARSE_TOKENS + 100))
    done = run("--no-cache", "--format", "json", "big.py", cwd=tmp_path, timeout=60)
    import json

    [finding] = json.loads(done.stdout)
    assert finding["code"] == "CL001" and finding["message"].startswith("too large to analyse: 70,"), finding
    assert "words and symbols (the limit is 70,000)" in finding["message"]


# -- F17: valid Python is not reported as invalid ---------------------------------

def _json(tmp_path: Path, *args: str) -> list[dict]:
    import json

    done = run("--no-cache", "--format", "json", *args, ".", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


LOCKED = "import redis\nr = redis.Redis()\n"


@pytest.mark.parametrize("count, analysed", [(300, True), (10_000, False), (100_000, False)])
def test_implicitly_concatenated_strings(tmp_path, count, analysed):
    """libcst nests ``'a' 'a' ...`` one level per string: its parser gives up
    past a few thousand (a "syntax error" before), and 100,000 are over the
    size limit.  Either way the message says celerylint cannot analyse the
    file, not that the file is wrong."""
    text = LOCKED + "S = (" + "'a' " * count + ")\nwith r.lock('k'):\n    pass\n"
    compile(text, "big.py", "exec")  # valid Python
    (tmp_path / "big.py").write_text(text)
    findings = _json(tmp_path)
    codes = [f["code"] for f in findings]
    if analysed:
        assert codes == ["CL203"], findings
        return
    [finding] = findings
    assert finding["code"] == "CL001"
    assert "syntax error" not in finding["message"] and "analyse" in finding["message"], finding
    assert finding["hint"].startswith("a limit of celerylint, not necessarily an error in the file")
    if count == 10_000:
        assert finding["message"].startswith("celerylint cannot analyse this file: its parser (libcst) rejects "
                                             "this valid Python"), finding


FORM_FEEDS = {
    # the shape of the report: a form feed before the indentation of a block
    "before_indent": ("def f():\n\x0c    return 1\ndef g(k):\n\x0c    with r.lock(k):\n        pass\n", (6, 10)),
    "each_line": ("def g(k):\n\x0c    with r.lock(k):\n\x0c        pass\n", (4, 10)),
    "top_level": ("\x0cwith r.lock('k'):\n    pass\n", (3, 6)),
    "blanks_before": ("def g(k):\n  \t\x0c    with r.lock(k):\n        pass\n", (4, 13)),
    "string_too": ('S = """\n\x0cpage two\n"""\ndef g(k):\n\x0c    with r.lock(k):\n        pass\n', (7, 10)),
    "crlf": ("def g(k):\r\n\x0c    with r.lock(k):\r\n        pass\r\n", (4, 10)),
    "cr_only": ("def g(k):\r\x0c    with r.lock(k):\r        pass\r", (4, 10)),
}


@pytest.mark.parametrize("case", sorted(FORM_FEEDS))
def test_form_feed_in_indentation_is_analysed_at_the_right_column(tmp_path, case):
    body, (line, col) = FORM_FEEDS[case]
    text = LOCKED.replace("\n", "\r\n" if case == "crlf" else "\r" if case == "cr_only" else "\n") + body
    compile(text, "ff.py", "exec")
    (tmp_path / "ff.py").write_bytes(text.encode())
    findings = _json(tmp_path)
    assert [(f["code"], f["line"], f["column"] - 1) for f in findings] == [("CL203", line, col)], findings

    done = run("--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    fixed = (tmp_path / "ff.py").read_bytes().decode()
    # the one edit: the TTL after the key; every form feed, the string's too, kept
    assert fixed == text.replace("lock(k)", "lock(k, timeout=60)").replace("lock('k')", "lock('k', timeout=60)")
    compile(fixed, "ff.py", "exec")


def test_form_feed_alone_on_a_line_or_only_in_celery_files(tmp_path):
    """Emacs page breaks on their own lines, and a file only CL001 looks at."""
    (tmp_path / "pages.py").write_text(LOCKED + "\x0c\ndef g(k):\n    with r.lock(k):\n        pass\n\x0c\n# end\n")
    (tmp_path / "plain.py").write_text("import redis\ndef f():\n\x0c    return 1\n")
    findings = _json(tmp_path)
    assert [(f["path"], f["code"], f["line"]) for f in findings] == [("pages.py", "CL203", 5)]


def test_a_large_valid_file_only_cl001_reads_is_not_reported(tmp_path):
    """Over libcst's bound but valid: no rule but CL001 wants the file (it
    mentions Celery, nothing any rule looks at), so its size loses nothing.
    The same file with a syntax error is still reported (as too large for
    libcst, which is asked to word the error)."""
    from celerylint.engine.guard import MAX_PARSE_TOKENS

    body = "from celery import Celery\n" + "x = [" + "a[:]," * ((MAX_PARSE_TOKENS + 500) // 5) + "]\n"
    (tmp_path / "big.py").write_text(body)
    done = run("--no-cache", "--format", "json", "big.py", cwd=tmp_path, timeout=60)
    import json

    assert done.returncode == 0 and json.loads(done.stdout) == [], done.stdout[-500:]
    (tmp_path / "big.py").write_text(body + "def broken(:\n")
    done = run("--no-cache", "--format", "json", "big.py", cwd=tmp_path, timeout=60)
    [finding] = json.loads(done.stdout)
    assert finding["code"] == "CL001", finding
