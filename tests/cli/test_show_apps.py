"""``--show-apps``: the apps, their configuration sources and the settings
the rules read, as the real CLI prints them (text and the JSON interface)."""

from __future__ import annotations

from conftest import REPO, show_apps as apps, write_project as write
from celerylint.api.cases import django_project


def test_sample_project(cli):
    (app,) = apps(cli, REPO / "examples" / "shop")
    assert (app["path"], app["line"], app["variable"], app["main"], app["kind"]) == (
        "examples/shop/shop/celery.py", 3, "app", "shop", "worker")
    assert [s["kind"] for s in app["sources"]] == ["app", "module", "defaults"]
    assert app["sources"][1]["files"] == ["examples/shop/shop/celeryconfig.py"]
    settings = app["settings"]
    assert settings["broker_url"] == {"state": "set", "value": "redis://redis:6379/0", "env": "BROKER_URL",
                                      "path": "examples/shop/shop/celeryconfig.py", "line": 3}
    assert settings["task_acks_late"] == {"state": "default", "value": False}
    assert settings["worker_prefetch_multiplier"] == {"state": "default", "value": 4}
    assert settings["result_expires"] == {"state": "default", "value": 86400.0}


def test_django_settings_with_namespace(cli, tmp_path):
    write(tmp_path, django_project('''
        CELERY_BROKER_URL = "redis://:s3cret@cache.internal:6379/0"
        CELERY_TASK_ACKS_LATE = True
    '''))
    (app,) = apps(cli, tmp_path)
    django = app["sources"][1]
    assert (django["kind"], django["module"], django["namespace"], django["files"]) == (
        "django", "proj.settings", "CELERY", ["proj/settings.py"])
    assert app["settings"]["task_acks_late"] == {"state": "set", "value": True, "path": "proj/settings.py", "line": 2}
    assert app["settings"]["broker_url"]["value"] == "redis://:***@cache.internal:6379/0"
    text = cli("--show-apps", ".", cwd=tmp_path)
    assert text.returncode == 0 and "s3cret" not in text.stdout
    assert "task_acks_late              True  proj/settings.py:2" in text.stdout


def test_unreadable_source_is_unknown_and_send_only_apps_are_named(cli, tmp_path):
    write(tmp_path, '''
        # file: worker.py
        from celery import Celery
        app = Celery("worker")
        app.config_from_object("settings_not_in_this_tree")
        # file: notify.py
        from celery import Celery
        def notify(url):
            client = Celery()
            client.conf.broker_url = url
            client.send_task("remote.ping")
    ''')
    by_path = {a["path"]: a for a in apps(cli, tmp_path)}
    assert by_path["notify.py"]["kind"] == "send-only"
    worker = by_path["worker.py"]
    assert worker["kind"] == "worker"
    assert "unknown" in worker["sources"][1]
    assert worker["settings"]["task_acks_late"] == {"state": "unknown", "value": None}


def test_no_app(cli, tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    proc = cli("--show-apps", ".", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "No Celery app found.\n")


def test_an_item_of_a_dict_setting_that_cannot_be_read_is_not_shown_as_none(cli, tmp_path):
    write(tmp_path, '''
        # file: proj.py
        import os
        from celery import Celery
        app = Celery("proj", broker="redis://localhost")
        app.conf.broker_transport_options = {"visibility_timeout": int(os.environ["VT"]), "region": None}
    ''')
    (app,) = apps(cli, tmp_path)
    assert app["settings"]["broker_transport_options"]["value"] == {"visibility_timeout": None, "region": None}
    text = cli("--show-apps", ".", cwd=tmp_path)
    assert "{'visibility_timeout': <unknown>, 'region': None}  proj.py:4" in text.stdout, text.stdout


def test_text_paths_are_relative_to_where_it_runs_and_json_to_the_project(cli, tmp_path):
    """A subproject of a monorepo, shown from the top and from its parent:
    every path of the text can be opened from there (the app, a setting, a
    worker command line, a process and the script it runs); the JSON
    interface keeps them relative to the subproject's root."""
    api = tmp_path / "svc" / "api"
    write(api, '''
        # file: pyproject.toml
        [tool.celerylint]
        # file: proj/__init__.py
        # file: proj/celery.py
        from celery import Celery
        app = Celery("proj", broker="redis://localhost")
        # file: docker-compose.yml
        services:
          worker:
            command: celery -A proj worker --concurrency 4
          other:
            command: sh scripts/worker.sh
        # file: scripts/worker.sh
        exec celery -A proj worker --concurrency 2
    ''')
    for cwd, prefix in ((tmp_path, "svc/api/"), (tmp_path / "svc", "api/")):
        text = cli("--show-apps", prefix.split("/")[0] if cwd == tmp_path / "svc" else "svc", cwd=cwd)
        assert text.returncode == 0, text.stderr
        lines = text.stdout.splitlines()
        assert lines[0] == f'{prefix}proj/celery.py:2:7: `app` ("proj"), worker app'
        assert f"'redis://localhost'  {prefix}proj/celery.py:2" in text.stdout
        assert f"  worker command line: {prefix}scripts/worker.sh:1: -A proj: concurrency=2" in lines
        assert (f"  worker process: compose `other` {prefix}docker-compose.yml:5 (command line at "
                f"{prefix}scripts/worker.sh:1): replicas 1: concurrency=2") in lines
    (app,) = apps(cli, api)
    assert app["path"] == "proj/celery.py"
    assert {p["via"] for p in app["processes"] if "via" in p} == {"scripts/worker.sh:1"}
    (app,) = show_apps_from(cli, tmp_path, "svc")  # relative to the report root, here the working directory
    assert app["path"] == "svc/api/proj/celery.py"


def show_apps_from(cli, cwd, path):
    import json

    proc = cli("--show-apps", "--format", "json", path, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["apps"]


def test_each_project_is_read_whole_and_shows_the_apps_under_the_paths(cli, tmp_path):
    """As a run judges a file: ``--show-apps`` on a subdirectory or a file
    reads its whole project (the settings module next to the app), shows the
    apps defined under the paths, or every app of the project when none is
    there; a project nested in the tree is shown with its own apps."""
    write(tmp_path, '''
        # file: pyproject.toml
        [tool.celerylint]
        # file: top/__init__.py
        # file: top/celery.py
        from celery import Celery
        app = Celery("top")
        app.config_from_object("top.celeryconfig")
        # file: top/celeryconfig.py
        task_acks_late = True
        # file: top/jobs/tasks.py
        from top.celery import app
        # file: other/__init__.py
        # file: other/celery.py
        from celery import Celery
        other = Celery("other")
        # file: svc/pyproject.toml
        [tool.celerylint]
        # file: svc/api/__init__.py
        # file: svc/api/celery.py
        from celery import Celery
        api = Celery("api")
    ''')
    for path in ("top/jobs", "top/jobs/tasks.py"):
        found = {a["variable"]: a for a in show_apps_from(cli, tmp_path, path)}
        assert set(found) == {"app", "other"}, path
        assert found["app"]["settings"]["task_acks_late"]["value"] is True
    assert [a["variable"] for a in show_apps_from(cli, tmp_path, "top")] == ["app"]
    everything = show_apps_from(cli, tmp_path, ".")
    assert sorted((a["variable"], a["path"]) for a in everything) == [
        ("api", "svc/api/celery.py"), ("app", "top/celery.py"), ("other", "other/celery.py")]
    assert [a["variable"] for a in show_apps_from(cli, tmp_path, "svc")] == ["api"]


def test_a_worker_naming_a_folder_without_init_starts_its_celery_module(cli, tmp_path):
    """``celery -A proj worker`` with ``proj/celery.py`` and no
    ``proj/__init__.py``: Celery imports the namespace package and, finding
    no app on it, takes ``proj.celery``; a command naming a module that
    makes the app by a factory call is that app's command line too."""
    write(tmp_path, '''
        # file: proj/celery.py
        from celery import Celery
        app = Celery("proj", broker="redis://localhost")
        # file: Procfile
        worker: celery -A proj worker --concurrency 3
    ''')
    (app,) = apps(cli, tmp_path)
    assert [(c["path"], c["app"], c["options"]) for c in app["worker_command_lines"]] == [
        ("Procfile", "proj", {"concurrency": "3"})]
    assert [(p["kind"], p["name"], p["options"]) for p in app["processes"]] == [
        ("procfile", "worker", {"concurrency": "3"})]


def test_a_configuration_source_that_cannot_be_read_is_said_so(cli, tmp_path):
    write(tmp_path, '''
        # file: app.py
        import os
        from celery import Celery
        app = Celery("x")
        app.config_from_object(os.environ["CELERY_CONFIG_MODULE"])
    ''')
    text = cli("--show-apps", ".", cwd=tmp_path).stdout
    assert "  source: config_from_object(an expression celerylint cannot read) at app.py:4 (unknown: " in text
