"""``celerylint --watch`` as a user runs it: a real process on a temporary
tree, edited while it runs, then interrupted."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from conftest import default_sigint

TASKS = "from celery import shared_task\n\n@shared_task\ndef ok():\n    return 1\n"
LATER = "\n@shared_task\ndef later():\n    ok.apply_async(countdown=86400 * 3)\n"


def _start(cwd: Path, *args: str) -> tuple[subprocess.Popen, queue.Queue]:
    proc = subprocess.Popen([sys.executable, "-m", "celerylint", "--watch", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=default_sigint)
    lines: queue.Queue = queue.Queue()

    def pump() -> None:
        for line in proc.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return proc, lines


def _until(lines: queue.Queue, text: str, timeout: float = 60.0) -> list[str]:
    """The lines read until one holds ``text``; fails after ``timeout``."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        seen.append(line)
        if text in line:
            return seen
    raise AssertionError(f"{text!r} never came; read:\n{''.join(seen)}")


def _edit(path: Path, text: str) -> None:
    time.sleep(0.05)  # a new modification time even on a coarse clock
    path.write_text(text)


def test_watch_reruns_on_each_change_and_ctrl_c_exits_0(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.celerylint]\n")
    tasks = tmp_path / "proj" / "tasks.py"
    tasks.parent.mkdir()
    tasks.write_text(TASKS)
    proc, lines = _start(tmp_path, "proj/tasks.py")
    try:
        assert any("Starting linter in watch mode" in line for line in _until(lines, "No findings"))
        _edit(tasks, TASKS + LATER)
        seen = _until(lines, "CL206")
        assert any("File change detected" in line for line in seen)
        _edit(tasks, TASKS + "def broken(:\n")  # mid-typing: a finding, and the watch goes on
        _until(lines, "CL001")
        _edit(tasks, TASKS + LATER)
        _until(lines, "CL206")
        # the project's configuration is watched too, though only the file was named
        _edit(tmp_path / "pyproject.toml", '[tool.celerylint]\nignore = ["CL206"]\n')
        _until(lines, "No findings")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_watch_refuses_standard_input(tmp_path):
    done = subprocess.run([sys.executable, "-m", "celerylint", "--watch", "-"], cwd=tmp_path, input="x = 1\n",
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--watch cannot be used with standard input" in done.stderr
