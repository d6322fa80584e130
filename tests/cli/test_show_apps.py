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
