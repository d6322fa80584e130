"""Every input ends in bounded time and memory (issue 34, items 4, 6, 8, 9):
the real command on each repro, with a timeout, an address-space limit, and
``ru_maxrss`` of the process for the memory bound of the README (300 MB)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

CMD = [sys.executable, "-m", "celerylint"]
ENV = {**os.environ, "NO_COLOR": "1"}
MEMORY_LIMIT = 1 << 30  # what reads ``/dev/zero`` fails here fast instead of taking the machine
FAST = 15  # seconds: each run here takes about one; the repros took minutes, or never ended


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def lint(cwd: Path, *args: str, stdin=None, input: bytes | None = None) -> tuple[int, list[dict] | bytes, bytes, float]:
    """(exit status, JSON findings or raw stdout, stderr, seconds) of one run."""
    start = time.monotonic()
    done = subprocess.run([*CMD, "--no-cache", "--jobs", "1", *args], cwd=cwd, capture_output=True, env=ENV,
                          stdin=stdin, input=input, timeout=FAST * 2, preexec_fn=_limit_memory)
    took = time.monotonic() - start
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")[-2000:]
    out = json.loads(done.stdout) if "json" in args and done.stdout else done.stdout
    return done.returncode, out, done.stderr, took


def only_cl001(found: list[dict]) -> str:
    [finding] = found
    assert finding["code"] == "CL001", finding
    return finding["message"]


# -- item 4: the chain guard is linear on long runs of word characters --------

@pytest.mark.parametrize("text", [
    "from celery import Celery\nx = 1 " + "x" * 50_000 + "\n",
    # a Python 2 module with a hex blob
    'from celery import task\nprint "loaded"\nBLOB = "' + "0123456789abcdef" * 3_000 + '"\n',
], ids=["word-run", "python2-hex-blob"])
def test_an_invalid_file_with_a_long_word_is_reported_in_bounded_time(tmp_path, text):
    (tmp_path / "m.py").write_text(text)
    status, found, _, took = lint(tmp_path, "--format", "json", "m.py")
    assert status == 1 and only_cl001(found).startswith("syntax error"), found
    assert took < FAST, f"{took:.1f} s"


# -- item 6: chains of any operand shape are refused before libcst -------------

@pytest.mark.parametrize("operand", ['"a"', "f()", "a[0]", "(a)", "a.b()", "'a' 'b'"])
def test_an_invalid_file_with_a_long_chain_of_any_operands_is_refused_in_bounded_time(tmp_path, operand):
    text = "from celery import Celery\nx = " + " + ".join([operand] * 8_000) + "\ndef f(:\n    pass\n"
    (tmp_path / "m.py").write_text(text)
    status, found, _, took = lint(tmp_path, "--format", "json", "m.py")
    message = only_cl001(found)
    assert status == 1 and message.startswith("syntax error"), message
    assert took < FAST, f"{took:.1f} s"


def test_a_long_shallow_statement_in_an_invalid_file_still_goes_to_libcst(tmp_path):
    """A long list of short chains is not a chain: the guard lets the file
    through to libcst, and the error is reported as for any invalid file,
    at CPython's line with CPython's message."""
    from celerylint.engine.guard import refuse

    text = "from celery import Celery\nx = [" + "a.b + f(c)[0], " * 2_000 + "]\ndef f(:\n    pass\n"
    assert refuse(text) is None
    (tmp_path / "m.py").write_text(text)
    status, found, _, _ = lint(tmp_path, "--format", "json", "m.py")
    assert status == 1 and only_cl001(found) == "syntax error: invalid syntax", found
    assert found[0]["line"] == 3, found


# -- item 8: standard input is read no further than a file may be ------------

def test_endless_standard_input_is_a_too_large_finding(tmp_path):
    from celerylint.core.source import MAX_PARSE_BYTES

    with open("/dev/zero", "rb") as zero:
        status, out, err, took = lint(tmp_path, "-", "--stdin-filename", "x.py", "--format", "json", stdin=zero)
    message = only_cl001(out)
    assert status == 1 and message.startswith(f"too large to analyse: more than {MAX_PARSE_BYTES:,} bytes"), message
    assert took < FAST, f"{took:.1f} s"


def test_endless_standard_input_with_fix_is_an_error_and_writes_nothing(tmp_path):
    """What was not read cannot be written back: an editor must not get a truncated buffer."""
    with open("/dev/zero", "rb") as zero:
        status, out, err, _ = lint(tmp_path, "-", "--stdin-filename", "x.py", "--fix", stdin=zero)
    assert (status, out) == (2, b""), (status, out[:200])
    assert b"--fix cannot write it back" in err, err


def test_standard_input_over_the_character_limit_is_the_files_finding(tmp_path):
    from celerylint.engine.guard import MAX_PARSE_CHARS

    data = b"import celery\n" + b"#" * MAX_PARSE_CHARS + b"\n"
    status, out, _, _ = lint(tmp_path, "-", "--stdin-filename", "x.py", "--format", "json", input=data)
    (tmp_path / "x.py").write_bytes(data)
    as_file, found = lint(tmp_path, "--format", "json", "x.py")[:2]
    assert status == as_file and only_cl001(out) == only_cl001(found)
    assert only_cl001(out).startswith(f"too large to analyse: {len(data):,} characters"), out


# -- item 9: a file over the token limit is refused before any parser --------

MEASURE = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)  # kB on Linux
print(done.returncode)
print(done.stdout)
"""
HEAD = "from celery import Celery, shared_task\napp = Celery('p', broker='redis://')\n"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in kB")
@pytest.mark.parametrize("text", [
    HEAD + "x=1\n" * 249_000,  # a 996k-character file of short statements
    HEAD + "x = [" + "a," * 330_000 + "]\n",  # a 660 KB list literal
], ids=["996k-characters", "660kb-list"])
def test_a_file_over_the_token_limit_stays_under_300_mb(tmp_path, text):
    (tmp_path / "big.py").write_text(text)
    lines = subprocess.run([sys.executable, "-c", MEASURE, *CMD, "--no-cache", "--jobs", "1", "--format", "json",
                            "big.py"], cwd=tmp_path, capture_output=True, text=True, timeout=FAST * 4,
                           env=ENV).stdout.split("\n", 2)
    peak, status, found = int(lines[0]) // 1024, int(lines[1]), json.loads(lines[2])
    assert status == 1 and only_cl001(found).startswith("too large to analyse"), found
    assert peak <= 300, f"{peak} MB"
