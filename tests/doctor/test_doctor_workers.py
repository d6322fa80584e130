"""``celerylint doctor --workers`` against a real Redis and real Celery
workers (prefork and solo pools): each planted condition is found, with
both values and where each was read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from test_doctor import doctor, free_port, publish, redis, server  # noqa: F401 - fixtures
from worker_support import Worker, inspector, wait_until

pytestmark = pytest.mark.skipif(redis is None, reason="redis-py is not installed (pip install -e '.[test]')")


def project(tmp_path: Path, url: str, name: str = "proj") -> Path:
    """Acks late, a prefetch multiplier of 1, tasks that sleep."""
    root = tmp_path / name
    root.mkdir()
    (root / "proj.py").write_text(textwrap.dedent(f"""\
        import time
        from celery import Celery

        app = Celery("proj")
        app.conf.broker_url = {url!r}
        app.conf.task_acks_late = True
        app.conf.worker_prefetch_multiplier = 1
        app.conf.worker_hijack_root_logger = False

        @app.task
        def slow(seconds):
            time.sleep(seconds)

        @app.task
        def later():
            return 1
        """))
    return root


def by_code(found: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for f in found:
        out.setdefault(f["code"], []).append(f)
    return out


def test_prefork_worker_holding_an_eta_with_another_prefetch_and_an_unrouted_queue(server, tmp_path):
    server.admin.config_set("maxmemory-policy", "noeviction")
    root = project(tmp_path, server.url())
    publish(root, """
        later.apply_async(eta=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=2))
        later.apply_async(queue="orphans")  # declared and bound, consumed by nobody
    """)
    worker = Worker(root, "pf@doctor", "--pool=prefork", "--concurrency=1", "--prefetch-multiplier=3",
                    "-Q", "celery,ghost")
    try:
        look = inspector(server.url())
        wait_until(lambda: (look.scheduled() or {}).get("pf@doctor"), "the worker to hold the ETA task",
                   workers=[worker])
        done = doctor(root, "--workers", "--format", "json")
        assert done.returncode == 1, done.stderr
        found = by_code(json.loads(done.stdout))

        [eta] = found["CL156"]
        assert eta["severity"] == "warning"
        assert "worker `pf@doctor` holds 1 ETA/countdown task in memory (`proj.later`" in eta["message"]
        assert "the furthest due in 48 h, at 20" in eta["message"]

        [orphans, ghost] = sorted(found["CL158"], key=lambda f: f["severity"] != "warning")
        assert "queue `orphans` has 1 message waiting and none of the 1 running worker (`pf@doctor`)" \
            in orphans["message"]
        assert ghost["severity"] == "note" and "queue `ghost`, which nothing in the project routes to" \
            in ghost["message"]

        [prefetch] = found["CL159"]
        assert ("`worker_prefetch_multiplier` is 3 in the running worker `pf@doctor` (read with `inspect stats` "
                "(prefetch_count 4 over 1 process)) but 1 in the project (proj.py:7)") in prefetch["message"], \
            prefetch["message"]
        assert (prefetch["path"], prefetch["line"]) == ("proj.py", 5)  # placed at the broker URL
        assert "worker(s) answered: pf@doctor" in done.stderr
        assert "CL157" not in found  # one worker: nobody idles beside it
    finally:
        worker.stop()


def test_solo_workers_hoarding_on_another_broker_than_the_project_names(server, tmp_path):
    server.admin.config_set("maxmemory-policy", "noeviction")
    elsewhere = f"redis://127.0.0.1:{free_port()}/0"  # the project's broker_url: not where the workers are
    root = project(tmp_path, elsewhere)
    env_url = {"CELERY_BROKER_URL": server.url()}
    # prefork: a solo worker running a task cannot answer remote control until it ends
    busy = Worker(root, "busy@doctor", "--pool=prefork", "--concurrency=1", "--prefetch-multiplier=4",
                  broker=server.url())
    workers = [busy]
    try:
        look = inspector(server.url())
        wait_until(lambda: (look.ping() or {}).get("busy@doctor"), "the first worker", workers=workers)
        sent = subprocess.run([sys.executable, "-c", "from proj import slow\nfor _ in range(3): slow.delay(30)"],
                              cwd=root, env={**os.environ, **env_url}, capture_output=True, text=True, timeout=60)
        assert sent.returncode == 0, sent.stderr
        wait_until(lambda: len((look.reserved() or {}).get("busy@doctor", [])) >= 2,
                   "the first worker to run one task and reserve two", workers=workers)
        idle = Worker(root, "idle@doctor", "--pool=solo", broker=server.url())
        workers.append(idle)
        wait_until(lambda: (look.ping() or {}).get("idle@doctor"), "the second worker", workers=workers)

        done = doctor(root, "--workers", "--format", "json", "--broker-url", server.url(), "--timeout", "20")
        assert done.returncode == 1, done.stderr
        found = by_code(json.loads(done.stdout))
        [hoard] = found["CL157"]
        assert "worker `busy@doctor` has all 1 pool slot busy and holds 2 more tasks reserved (prefetched)" \
            in hoard["message"]
        assert "while `idle@doctor`, which consumes the same queue (`celery`), has 1 idle" in hoard["message"]

        messages = [f["message"] for f in found["CL159"]]
        pool = [m for m in messages if m.startswith("`worker_pool`")]
        assert pool == ["`worker_pool` is 'solo' in the running worker `idle@doctor` (read with "
                        "`inspect stats` (pool)) but 'prefork' in the project (Celery's default): the workers do "
                        "not run the configuration the code says (a command-line option, an environment variable "
                        "or an older deploy)"], messages
        [drift] = [m for m in messages if "connected to" in m]
        assert f"connected to localhost:{server.port} database `0` (`inspect stats`)" in drift
        assert f"the project's `broker_url` (proj.py:5) names localhost:{elsewhere.rsplit(':', 1)[1][:-2]}" in drift
        # --workers reads the replies the workers sent: nothing was revoked, the tasks still run
        assert (look.active() or {}).get("busy@doctor")
    finally:
        for w in workers:
            w.stop()


def test_no_worker_answering_is_said_and_nothing_else_is_judged(server, tmp_path):
    server.admin.config_set("maxmemory-policy", "noeviction")
    root = project(tmp_path, server.url())
    done = doctor(root, "--workers", "--format", "json", "--timeout", "8")
    assert done.returncode == 0, done.stderr
    assert "no worker answered `inspect ping`" in done.stderr
    assert [f["code"] for f in json.loads(done.stdout)] == ["CL155"]


def test_workers_without_celery_say_how_to_install_it(server, tmp_path):
    """Celery is a requirement of the doctor extra only: without it the
    broker is still checked, and --workers is one clear error."""
    server.admin.config_set("maxmemory-policy", "noeviction")
    code = ("import sys; sys.modules['celery'] = None; sys.argv = ['celerylint', 'doctor', '--workers', "
            f"'--broker-url', {server.url()!r}]; from celerylint.cli.commands import entry; entry()")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "`celerylint doctor --workers` needs Celery: pip install 'celerylint[doctor]'" in done.stderr
    assert ("checks that ran: eviction policy, memory, keyspace, unacked, queue lengths; not run: workers"
            in done.stderr), done.stderr
    assert "no broker was checked fully" in done.stdout and "broker checked" not in done.stdout
