"""Hostile values in the code and in the configuration end in a finding, no
finding, or a one-line configuration error (exit 2), in bounded time: never
a traceback.  Each test is built from a repro of issue 34 (items 12-15)."""

from __future__ import annotations

import json

import pytest

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


def test_a_configuration_class_with_1000_bases_in_a_chain(cli, tmp_path):
    n = 1000
    classes = "".join(f"class C{i}(C{i + 1}):\n    result_expires = {i + 1}\n" for i in range(n - 2, -1, -1))
    write_project(tmp_path, """
        # file: proj/__init__.py
        # file: proj/celery.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("proj.config:C0")
    """)
    (tmp_path / "proj" / "config.py").write_text(
        f'class C{n - 1}(object):\n    broker_url = "redis://redis:6379/0"\n    task_acks_late = True\n' + classes)
    proc = cli("--select", "CL1", "--format", "json", ".")
    assert proc.returncode in (0, 1) and proc.stderr == "", proc.stderr
    app, = json.loads(cli("--show-apps", "--format", "json", ".").stdout)["apps"]
    settings = app["settings"]
    assert settings["broker_url"]["value"] == "redis://redis:6379/0" and settings["task_acks_late"]["value"] is True
    assert settings["result_expires"] == {"state": "set", "value": 1, "path": "proj/config.py", "line": 2 * n + 1}


def run_bounded(root, *args: str, seconds: float = 20):
    """The real CLI in ``root``, killed (a failed test) past ``seconds``."""
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "celerylint", *args], cwd=root, capture_output=True, text=True,
                          timeout=seconds, env={**os.environ, "NO_COLOR": "1"})


def config_error(proc, *fragments: str) -> None:
    """Exit 2 and one line on stderr: ``celerylint: error: <file>: <key>: ...``."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("celerylint: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


LONG_GLOB = "**/" * 2000 + "x"


@pytest.mark.parametrize("toml, fragments", [
    ('extend = "\\u0000"\n', ("celerylint.toml:1: extend: a path cannot contain a NUL character",)),
    ('cache-dir = "\\u0000"\n', ("celerylint.toml:1: cache-dir: a path cannot contain a NUL character",)),
    (f'extend = "{"a" * 5000}"\n', ("celerylint.toml: extend: ", "(5,", "File name too long")),
    (f'extend = "{"a/" * 3000}"\n', ("celerylint.toml: extend: ", "File name too long")),
    (f'exclude = ["{LONG_GLOB}"]\n', ("celerylint.toml:1: exclude: a glob of 6,001 characters", "at most 4,096")),
    (f'extend-exclude = ["{LONG_GLOB}"]\n', ("extend-exclude: a glob of 6,001 characters",)),
    (f'[per-file-ignores]\n"{LONG_GLOB}" = ["CL1"]\n', ("per-file-ignores: a glob of 6,001 characters",)),
    (f'redis-config-files = ["{LONG_GLOB}"]\n', ("celerylint.toml:1: redis-config-files: a glob of 6,001",)),
], ids=["extend-nul", "cache-dir-nul", "extend-name-too-long", "extend-path-too-long", "exclude-long-glob",
        "extend-exclude-long-glob", "per-file-ignores-long-glob", "redis-config-files-long-glob"])
def test_hostile_configuration_values_are_configuration_errors(tmp_path, toml, fragments):
    (tmp_path / "celerylint.toml").write_text(toml)
    (tmp_path / "tasks.py").write_text("from celery import shared_task\n")
    for args in ((".",), ("--show-settings", "."), ("--config", "celerylint.toml", ".")):
        config_error(run_bounded(tmp_path, *args), *fragments)


def test_a_configuration_file_named_longer_than_the_system_allows(tmp_path):
    config_error(run_bounded(tmp_path, "--config", "a" * 5000, "."), "(5,000 characters): cannot read: File name too long")
    config_error(run_bounded(tmp_path, "--config", "a/" * 3000 + "c.toml", "."), "File name too long")


def test_an_exclude_glob_with_1300_leading_double_stars_works_in_bounded_time(tmp_path):
    (tmp_path / "celerylint.toml").write_text(f'exclude = ["{"**/" * 1300}skip.py"]\n')
    for name in ("keep.py", "skip.py", "a/b/skip.py", "a/b/keep.py"):
        write_project(tmp_path, f"# file: {name}\nimport celery\n")
    proc = run_bounded(tmp_path, "--output-format", "concise", ".", seconds=10)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert "2 files checked" in proc.stdout


LOCKS = '''\
import redis
r = redis.Redis()
def acquire(job):
    with r.lock("import-lock"):
        pass
    if r.set(f"lock:{job}", "1", nx=True):
        r.delete(f"lock:{job}")
'''


@pytest.mark.parametrize("name, table", [("celerylint.toml", ""), ("pyproject.toml", "[tool.celerylint]\n")])
@pytest.mark.parametrize("ttl", ["99999999999999999999999999999", "315360001"])
def test_a_lock_ttl_redis_would_refuse_is_a_configuration_error(tmp_path, name, table, ttl):
    (tmp_path / name).write_text(f"{table}lock-ttl = {ttl}\n")
    (tmp_path / "locks.py").write_text(LOCKS)
    proc = run_bounded(tmp_path, "--select", "CL203", "--fix", "--unsafe-fixes", ".")
    config_error(proc, f"{name}:{1 + bool(table)}: lock-ttl: expected a positive integer of seconds, at most 315,360,000 (10 years)")
    assert (tmp_path / "locks.py").read_text() == LOCKS


def test_the_largest_lock_ttl_is_one_redis_accepts(tmp_path):
    import shutil
    import socket
    import subprocess
    import time

    from celerylint.api.options import MAX_TTL
    from celerylint.registry import options

    assert f"{MAX_TTL:,}" in {o.name: o for o in options()}["lock-ttl"].doc  # the documented bound is the one applied
    (tmp_path / "celerylint.toml").write_text(f"lock-ttl = {MAX_TTL}\n")
    (tmp_path / "locks.py").write_text(LOCKS)
    proc = run_bounded(tmp_path, "--select", "CL203", "--fix", "--unsafe-fixes", ".")
    assert proc.returncode == 0, proc.stderr
    fixed = (tmp_path / "locks.py").read_text()
    assert f'r.lock("import-lock", timeout={MAX_TTL})' in fixed and f"nx=True, ex={MAX_TTL})" in fixed
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed")
    redis = pytest.importorskip("redis")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = redis.Redis(port=port, socket_timeout=5)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                assert time.monotonic() < deadline and proc.poll() is None, "redis-server did not start"
                time.sleep(0.05)
        # what the fixed code sends: SET ... NX EX, and redis-py's Lock (SET ... NX PX, in milliseconds)
        assert client.set("lock:1", "1", nx=True, ex=MAX_TTL)
        assert client.lock("import-lock", timeout=MAX_TTL).acquire(blocking=False)
        assert client.ttl("lock:1") > MAX_TTL - 60 and client.pttl("import-lock") > (MAX_TTL - 60) * 1000
        # what lock-ttl once let through: beyond 64 bits, or seconds whose milliseconds overflow
        with pytest.raises(redis.ResponseError, match="not an integer or out of range"):
            client.set("lock:2", "1", nx=True, ex=99999999999999999999999999999)
        with pytest.raises(redis.ResponseError, match="invalid expire time"):
            client.set("lock:2", "1", nx=True, ex=2 ** 63 // 1000 + 1)
    finally:
        proc.kill()
        proc.wait(timeout=10)
