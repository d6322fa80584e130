"""Hostile values in the code and in the configuration end in a finding, no
finding, or a one-line configuration error (exit 2), in bounded time: never
a traceback.  Each test is built from a repro of issue 34 (items 12-15)."""

from __future__ import annotations

from conftest import write_project

NON_FINITE_DELAYS = '''
    # file: proj.py
    import math
    from datetime import timedelta
    from django.utils import timezone
    import redis
    from celery import Celery, shared_task
    app = Celery("proj", broker="redis://localhost", task_acks_late=True)
    r = redis.Redis()
    @shared_task(acks_late=True, time_limit=float("inf"))
    def t(x):
        with r.lock("a", timeout=10):
            pass
        with r.lock("b", timeout=float("inf")):
            pass
    def later():
        t.apply_async((1,), countdown=float("inf"))
        t.apply_async((1,), countdown=math.inf)
        t.apply_async((1,), countdown=-math.inf)
        t.apply_async((1,), countdown=float("nan"))
        t.apply_async((1,), countdown=1e308 * 10)
        t.apply_async((1,), eta=timezone.now() + timedelta(seconds=1e308))
'''


def test_non_finite_delays_are_unknown(cli, tmp_path):
    write_project(tmp_path, NON_FINITE_DELAYS)
    before = (tmp_path / "proj.py").read_text()
    for args in ((), ("--add-noqa",), ("--fix", "--unsafe-fixes")):
        proc = cli("--select", "CL104,CL205,CL206", "--output-format", "concise", *args, ".")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
        assert "CL104" not in proc.stdout and "CL206" not in proc.stdout
        assert (tmp_path / "proj.py").read_text() == before
