"""The temporary file of a ``--fix`` killed while writing: the next run
removes it, however young, and never one a live writer holds (issue 34
item 16).  The writers here are real ``write_atomic`` calls in a child
process, stopped before their rename and killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")

BEFORE = 'import redis\nr = redis.Redis()\ndef f(key):\n    r.set("lock:" + key, 1, nx=True)\n'

# write_atomic with its rename held back: the child stops with its temporary
# file written and locked, as a run does at the moment it is killed
_WRITER = """
import os, sys, time
from pathlib import Path
from celerylint.run import writer
def stuck(*args):
    print("written", flush=True)
    time.sleep(600)
writer.os.replace = stuck
path = Path(sys.argv[1])
old = path.read_bytes()
writer.write_atomic(path, old + b"# half\\n", old)
"""


def _stuck_writer(path: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "written\n"
    return proc


def _leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.endswith(".celerylint.tmp"))


def _fix(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "celerylint", "--fix", "--unsafe-fixes", "--no-cache",
                           "--select", "CL203", "."], cwd=root, capture_output=True, text=True, timeout=120)


def test_a_killed_writers_fresh_temporary_file_is_removed_by_the_next_fix(tmp_path):
    (tmp_path / "a.py").write_text(BEFORE)
    proc = _stuck_writer(tmp_path / "a.py")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    left = _leftovers(tmp_path)
    assert len(left) == 1 and left[0].startswith(".a.py."), left  # the kill left it, seconds old
    assert (tmp_path / "a.py").read_text() == BEFORE  # never half-written
    done = _fix(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "ex=60" in (tmp_path / "a.py").read_text()
    assert _leftovers(tmp_path) == []


def test_a_live_writers_temporary_file_is_left_alone(tmp_path):
    (tmp_path / "a.py").write_text(BEFORE)
    proc = _stuck_writer(tmp_path / "a.py")
    try:
        held = _leftovers(tmp_path)
        old = time.time() - 600  # older than any grace: only its lock says it is in use
        os.utime(tmp_path / held[0], (old, old))
        done = _fix(tmp_path)
        assert done.returncode == 0, done.stderr
        assert "ex=60" in (tmp_path / "a.py").read_text()
        assert _leftovers(tmp_path) == held
    finally:
        proc.kill()
        proc.wait(timeout=30)
