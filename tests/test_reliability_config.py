"""Hostile values in the code and in the configuration end in a finding, no
finding, or a one-line configuration error (exit 2), in bounded time: never
a traceback.  Each test is built from a repro of issue 34 (items 12-15)."""

from __future__ import annotations

import json

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


DJANGO_APP = '''
    # file: proj/__init__.py
    # file: proj/settings/__init__.py
    # file: proj/celery.py
    import os
    from celery import Celery
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings.m0")
    app = Celery("proj")
    app.config_from_object("django.conf:settings", namespace="CELERY")
'''
DEEPEST = 'CELERY_BROKER_URL = "redis://redis:6379/0"\nCELERY_TASK_ACKS_LATE = True\n'


def settings_tree(root, modules: dict[str, str]) -> None:
    write_project(root, DJANGO_APP)
    for name, text in modules.items():
        (root / "proj" / "settings" / f"{name}.py").write_text(text)


def read_whole_chain(cli, root, count: int, broker_in: str) -> None:
    """The rules and ``--show-apps`` read every module of the chain: the
    settings of the last one decide the findings, no traceback."""
    proc = cli("--select", "CL1", "--format", "json", ".", cwd=root)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ""
    codes = {f["code"] for f in json.loads(proc.stdout)}
    assert "CL102" in codes and "CL101" not in codes  # acks_late, set in the deepest module, was read
    for args in (("--format", "json"), ()):
        proc = cli("--show-apps", *args, ".", cwd=root)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    app, = json.loads(cli("--show-apps", "--format", "json", ".", cwd=root).stdout)["apps"]
    assert len(app["sources"][1]["files"]) == count
    assert app["settings"]["broker_url"]["path"] == broker_in


def test_a_chain_of_500_settings_modules(cli, tmp_path):
    n = 500
    settings_tree(tmp_path, {f"m{i}": f"from .m{i + 1} import *\nX{i} = {i}\n" for i in range(n - 1)}
                  | {f"m{n - 1}": DEEPEST})
    read_whole_chain(cli, tmp_path, n, f"proj/settings/m{n - 1}.py")


def test_a_cycle_of_1000_settings_modules_all_importing_one_base(cli, tmp_path):
    n = 1000
    settings_tree(tmp_path, {f"m{i}": f"from .base import *\nfrom .m{(i + 1) % n} import *\nX{i} = {i}\n" for i in range(n)}
                  | {"base": DEEPEST})
    read_whole_chain(cli, tmp_path, n + 1, "proj/settings/base.py")
