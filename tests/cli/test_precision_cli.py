"""What celerylint reads of code written without it in mind (docs/precision.md),
through the real CLI: values changed after binding, apps that run no tasks,
``--show-apps`` values."""

from __future__ import annotations

import json

from conftest import show_apps as apps, write_project as write


def test_show_apps_shows_the_values_of_dict_items_not_their_encoding(cli, tmp_path):
    write(tmp_path, '''
        # file: proj.py
        from celery import Celery
        app = Celery("proj", broker="redis://localhost")
        opts = {"max_connections": 20}
        opts["visibility_timeout"] = 9000
        app.conf.broker_transport_options = opts
        app.conf.beat_schedule = {
            "poll-inventory-of-every-warehouse": {"task": "proj.tasks.poll_inventory_of_every_warehouse", "schedule": 30},
            "refresh-exchange-rates-from-the-bank": {"task": "proj.tasks.refresh_exchange_rates", "schedule": 300},
            "nightly": {"task": "proj.nightly", "schedule": 86400, "options": {"expires": 3600}},
        }
    ''')
    (app,) = apps(cli, tmp_path)
    options = app["settings"]["broker_transport_options"]
    assert options["value"] == {"max_connections": 20, "visibility_timeout": 9000}
    beat = app["settings"]["beat_schedule"]["value"]
    assert beat["nightly"] == {"task": "proj.nightly", "schedule": 86400, "options": {"expires": 3600}}
    text = cli("--show-apps", ".", cwd=tmp_path).stdout
    assert "'const'" not in text and "'dict'" not in text
    assert "{'max_connections': 20, 'visibility_timeout': 9000}" in text
    beat_line = next(line for line in text.splitlines() if line.strip().startswith("beat_schedule"))
    assert len(beat_line) < 300 and "characters; --format json shows all" in beat_line


def test_a_dict_filled_in_a_loop_is_unknown(cli, tmp_path):
    write(tmp_path, '''
        # file: proj.py
        from celery import Celery
        from proj_env import PAIRS
        app = Celery("proj", broker="redis://localhost")
        opts = {}
        for key, value in PAIRS:
            opts[key] = value
        app.conf.broker_transport_options = opts
    ''')
    (app,) = apps(cli, tmp_path)
    assert app["settings"]["broker_transport_options"] == {"state": "unknown", "value": None,
                                                           "path": "proj.py", "line": 7}


def test_a_monitoring_app_runs_no_tasks(cli, tmp_path):
    write(tmp_path, '''
        # file: proj/__init__.py
        # file: proj/celery.py
        from celery import Celery
        app = Celery("proj", broker="redis://localhost:6379/0")
        app.autodiscover_tasks()
        # file: ops/monitor.py
        from celery import Celery
        monitor = Celery(broker="redis://localhost:6379/0")
        def stats():
            return monitor.control.inspect().stats()
    ''')
    by_path = {a["path"]: a for a in apps(cli, tmp_path)}
    assert by_path["ops/monitor.py"]["kind"] == "send-only"
    assert by_path["proj/celery.py"]["kind"] == "worker"
    proc = cli("--select", "CL101,CL103", "--output-format", "concise", ".", cwd=tmp_path)
    assert "ops/monitor.py" not in proc.stdout and "proj/celery.py" in proc.stdout


_BACKEND_LOCK = '''
    # file: proj/__init__.py
    # file: proj/celery.py
    from celery import Celery
    app = Celery("proj", broker="redis://localhost:6379/0", backend="{backend}")
    # file: proj/tasks.py
    from proj.celery import app
    @app.task(bind=True)
    def sync(self, account_id):
        if self.app.backend.client.set(f"lock:sync:{{account_id}}", 1, nx=True):{noqa}
            work(account_id)
'''


def test_a_lock_on_the_result_backends_client_is_judged_with_the_apps_backend(cli, tmp_path):
    """The finding is made by the file phase and stands only if the app's
    result backend is Redis, which the project phase reads: with the rule
    selected alone, through the cache, with its fix."""
    redis, rpc = tmp_path / "redis", tmp_path / "rpc"
    write(redis, _BACKEND_LOCK.format(backend="redis://localhost:6379/1", noqa=""))
    write(rpc, _BACKEND_LOCK.format(backend="rpc://", noqa=""))
    for _ in range(2):  # the second run reads the file's result from the cache
        proc = cli("--select", "CL203", "--format", "json", ".", cwd=redis)
        (finding,) = json.loads(proc.stdout)
        assert (finding["code"], finding["path"], finding["line"]) == ("CL203", "proj/tasks.py", 4)
        proc = cli("--select", "CL203", "--format", "json", ".", cwd=rpc)
        assert json.loads(proc.stdout) == []
    proc = cli("--select", "CL203", "--format", "json", "proj/tasks.py", cwd=redis)  # the app's file not named
    assert [f["line"] for f in json.loads(proc.stdout)] == [4]
    proc = cli("--select", "CL203", "--fix", "--unsafe-fixes", ".", cwd=redis)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'nx=True, ex=60)' in (redis / "proj" / "tasks.py").read_text()


def test_a_noqa_comment_silences_a_finding_judged_in_the_project_phase(cli, tmp_path):
    write(tmp_path, _BACKEND_LOCK.format(backend="redis://localhost:6379/1", noqa="  # noqa: CL203"))
    proc = cli("--select", "CL203,CL002", "--format", "json", ".", cwd=tmp_path)
    assert json.loads(proc.stdout) == []  # silenced, and the comment counts as used (no CL002)


def test_a_run_on_another_file_does_not_run_the_lock_rules_on_this_one(tmp_path, monkeypatch):
    """CL203's and CL204's project part judges only their own findings
    (``PROJECT_FACTS = "own"``): a run on some files runs them on those
    files, not on every other file of the project for its facts."""
    from click.testing import CliRunner

    from celerylint.cli.commands import main
    from celerylint.run import jobs

    write(tmp_path, _BACKEND_LOCK.format(backend="redis://localhost:6379/1", noqa="") + '''
    # file: proj/other.py
    from proj.celery import app
    from proj.tasks import sync  # in the closure of this file: read for its facts
    @app.task
    def ping():
        return 1
''')
    analysed: list[tuple[str, set[str]]] = []
    real = jobs.analyze
    monkeypatch.setattr(jobs, "analyze", lambda rel, text, data, settings, entries, active, *rest: (
        analysed.append((rel, {e.code for e in active})) or real(rel, text, data, settings, entries, active, *rest)))
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["--no-cache", "--jobs", "1", "--format", "json", "proj/other.py"])
    assert done.exit_code in (0, 1), done.output
    assert analysed and not [rel for rel, codes in analysed if codes & {"CL203", "CL204"}]
    done = CliRunner().invoke(main, ["--no-cache", "--jobs", "1", "--format", "json", "--select", "CL203",
                                     "proj/tasks.py"])
    assert [f["line"] for f in json.loads(done.stdout)] == [4]
