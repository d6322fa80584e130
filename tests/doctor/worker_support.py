"""Real Celery workers for the doctor's ``--workers`` tests: the test
project's app (``test_doctor.project``) run by ``celery worker`` in its own
process group, stopped by that group's id."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


class Worker:
    def __init__(self, root: Path, name: str, *args: str, broker: str | None = None) -> None:
        self.name = name
        command = [sys.executable, "-m", "celery", "-A", "proj", *(("-b", broker) if broker else ()), "worker",
                   "-n", name, "--without-heartbeat", "--without-gossip", "--without-mingle", "--loglevel=WARNING",
                   *args]
        self.log = open(root / f"{name.split('@')[0]}.log", "wb")
        self.proc = subprocess.Popen(command, cwd=root, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=20)
        self.log.close()


def wait_until(check, what: str, seconds: float = 40, workers=()):
    """``check()`` until it returns something true; fails saying ``what``."""
    deadline = time.monotonic() + seconds
    while True:
        got = check()
        if got:
            return got
        for w in workers:
            assert w.proc.poll() is None, f"worker {w.name} exited"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.3)


def inspector(url: str):
    """The test's own view of the workers (the same remote control the
    doctor uses), to wait until they are up and holding what was planted."""
    from celery import Celery

    app = Celery("doctor-tests", broker=url, set_as_current=False)
    return app.control.inspect(timeout=1.0)
