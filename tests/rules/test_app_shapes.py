"""Apps not made by a module-level ``app = Celery(...)``, configuration
sources that are dicts or classes, and worker options outside Python, as
the real CLI shows them (``--show-apps --format json``) and reports them.
Each project below has the shape of a public project (indico, warehouse,
hypothesis/h, DefectDojo), written anew."""

from __future__ import annotations

import textwrap

from conftest import lint_json, show_apps as apps, write_project as write


def codes(root, *select):
    _, findings, _ = lint_json(root, "--no-cache", "--select", ",".join(select) or "CL101,CL102,CL103")
    return sorted((f["code"], f["path"], f["line"]) for f in findings)


SUBCLASS = '''
    # file: proj/core/celery/core.py
    from celery import Celery
    from proj.core.config import config

    class ProjCelery(Celery):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)

        def init_app(self, app):
            self.conf['broker_url'] = config.CELERY_BROKER
            if config.CELERY_BROKER.startswith('redis://'):
                self.conf['broker_transport_options'] = {'visibility_timeout': 172800}
            self.conf['task_serializer'] = 'json'
            self.conf.worker_prefetch_multiplier = 1
    # file: proj/core/celery/__init__.py
    from proj.core.celery.core import ProjCelery
    celery = ProjCelery('proj')
'''


def test_celery_subclass_configured_in_a_method(cli, tmp_path):
    write(tmp_path, SUBCLASS)
    (app,) = apps(cli, tmp_path)
    assert (app["path"], app["variable"], app["main"], app["kind"]) == (
        "proj/core/celery/__init__.py", "celery", "proj", "worker")
    settings = app["settings"]
    assert settings["task_serializer"] == {"state": "set", "value": "json", "path": "proj/core/celery/core.py", "line": 12}
    assert settings["worker_prefetch_multiplier"]["value"] == 1
    assert settings["broker_url"]["state"] == "unknown"  # config.CELERY_BROKER
    assert settings["broker_transport_options"]["state"] == "unknown"  # set only under an `if`
    assert settings["task_acks_late"] == {"state": "default", "value": False}
    assert codes(tmp_path, "CL101", "CL103") == [("CL101", "proj/core/celery/__init__.py", 2)]


def test_celery_subclass_updated_from_the_deployment_is_unknown(cli, tmp_path):
    write(tmp_path, SUBCLASS.replace("self.conf.worker_prefetch_multiplier = 1",
                                     "self.conf.update(config.CELERY_CONFIG)"))
    (app,) = apps(cli, tmp_path)
    assert app["settings"]["task_acks_late"]["state"] == "unknown"
    assert any("conf.update" in why for why in app["unknown"])
    assert codes(tmp_path, "CL101", "CL103") == []


def test_deployment_settings_with_an_empty_default_are_judged_by_it(cli, tmp_path):
    """indico: ``self.conf.update(config.CELERY_CONFIG)``, whose default in the
    project's ``DEFAULTS`` is ``{}``; a task class made in a method."""
    write(tmp_path, SUBCLASS.replace("self.conf.worker_prefetch_multiplier = 1", """self.conf.update(config.CELERY_CONFIG)
            self._patch_task()

        def _patch_task(self):
            class ProjTask(self.Task):
                abstract = True
            self.Task = ProjTask""") + """
    # file: proj/core/config.py
    DEFAULTS = {
        'CELERY_BROKER': None,
        'CELERY_CONFIG': {},
    }
    """)
    (app,) = apps(cli, tmp_path)
    assert app["unknown"] == [] and "proj/core/config.py:3" in app["notes"][0]
    assert app["settings"]["task_acks_late"] == {"state": "default", "value": False}
    assert codes(tmp_path, "CL101", "CL103") == [("CL101", "proj/core/celery/__init__.py", 2),
                                                 ("CL103", "proj/core/celery/__init__.py", 2)]
    # the task class sets acks_late: no CL101
    (tmp_path / "proj/core/celery/core.py").write_text(
        (tmp_path / "proj/core/celery/core.py").read_text().replace("abstract = True", "acks_late = True"))
    assert codes(tmp_path, "CL101") == []


def test_a_call_named_like_celery_is_not_an_app(cli, tmp_path):
    write(tmp_path, '''
        # file: proj.py
        from flower import FakeCelery
        app = FakeCelery("proj")
    ''')
    assert apps(cli, tmp_path) == []
    # but one that loads a configuration is an app, whatever its class
    write(tmp_path, '''
        # file: proj.py
        from flower import FakeCelery
        app = FakeCelery("proj")
        app.config_from_object("celeryconfig")
        # file: celeryconfig.py
        task_acks_late = True
    ''')
    (app,) = apps(cli, tmp_path)
    assert app["settings"]["task_acks_late"] == {"state": "set", "value": True, "path": "celeryconfig.py", "line": 1}


PYRAMID = '''
    # file: proj/tasks.py
    import celery

    class ProjTask(celery.Task):
        pass

    def task(**kwargs):
        def deco(wrapped):
            return wrapped
        return deco

    def includeme(config):
        s = config.registry.settings
        config.registry["celery.app"] = celery.Celery("proj", autofinalize=False, set_as_current=False)
        config.registry["celery.app"].conf.update(
            accept_content=["json", "msgpack"],
            broker_url=s["celery.broker_url"],
            task_serializer="json",
        )
        config.registry["celery.app"].Task = ProjTask
    # file: proj/jobs.py
    from proj import tasks

    @tasks.task(ignore_result=True, acks_late=True)
    def one(request): ...

    @tasks.task(bind=True, acks_late=True)
    def two(self, request): ...
'''


def test_app_made_in_includeme_and_stored_in_the_registry(cli, tmp_path):
    write(tmp_path, PYRAMID)
    (app,) = apps(cli, tmp_path)
    assert (app["path"], app["line"], app["variable"], app["main"], app["kind"]) == (
        "proj/tasks.py", 13, 'config.registry["celery.app"]', "proj", "worker")
    settings = app["settings"]
    assert settings["accept_content"]["value"] == ["json", "msgpack"]
    assert settings["broker_url"]["state"] == "unknown"
    # every task opts in to acks_late: not CL101; each one lacks reject_on_worker_lost: CL102 at its option
    assert codes(tmp_path) == [("CL102", "proj/jobs.py", 3), ("CL102", "proj/jobs.py", 6),
                               ("CL103", "proj/tasks.py", 13)]


def test_task_class_set_on_the_app_is_read(cli, tmp_path):
    write(tmp_path, PYRAMID.replace("    class ProjTask(celery.Task):\n        pass",
                                    "    class ProjTask(celery.Task):\n        reject_on_worker_lost = True"))
    assert [c for c in codes(tmp_path) if c[0] == "CL102"] == []
    write(tmp_path, PYRAMID.replace("].Task = ProjTask", "].Task = make_task_class()"))
    assert [c for c in codes(tmp_path) if c[0] == "CL102"] == []  # a class celerylint cannot read


def test_per_task_fix_adds_reject_on_worker_lost(cli, tmp_path):
    write(tmp_path, PYRAMID)
    proc = cli("--select", "CL102", "--fix", "--unsafe-fixes", "--no-cache", ".", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (tmp_path / "proj" / "jobs.py").read_text()
    assert "@tasks.task(ignore_result=True, acks_late=True, reject_on_worker_lost=True)" in text
    assert "@tasks.task(bind=True, acks_late=True, reject_on_worker_lost=True)" in text


def test_send_only_client_made_in_a_method(cli, tmp_path):
    write(tmp_path, '''
        # file: proj/celery.py
        from celery import Celery
        celery = Celery("proj")
        celery.conf.update(broker_url="redis://localhost:6379/0")
        # file: proj/services/authority_queue.py
        from celery import Celery

        class AuthorityQueueService:
            def publish(self, config, annotation):
                authority_celery = Celery(annotation.authority)
                authority_celery.conf.broker_url = config.broker_url
                authority_celery.send_task(config.task_name, queue=config.queue_name, kwargs={})
    ''')
    by_path = {a["path"]: a for a in apps(cli, tmp_path)}
    assert by_path["proj/services/authority_queue.py"]["kind"] == "send-only"
    assert by_path["proj/celery.py"]["kind"] == "worker"
    assert codes(tmp_path, "CL101", "CL102", "CL103") == [("CL101", "proj/celery.py", 2), ("CL103", "proj/celery.py", 2)]


def test_a_celery_subclass_in_a_module_named_celery_of_a_folder_without_init(cli, tmp_path):
    # ``worker/celery.py`` without ``worker/__init__.py``: its module is named ``celery``,
    # and its own class is not the library's
    write(tmp_path, '''
        # file: worker/celery.py
        from celery import Celery

        class MyCelery(Celery):
            def gen_task_name(self, name, module):
                return name

        app = MyCelery("x", broker="redis://r:6379/0")
        app.conf.task_acks_late = False
    ''')
    [app] = apps(cli, tmp_path)
    assert (app["path"], app["variable"], app["kind"]) == ("worker/celery.py", "app", "worker")
    assert codes(tmp_path, "CL101") == [("CL101", "worker/celery.py", 8)]


def test_an_app_made_to_check_the_broker_runs_no_tasks(cli, tmp_path):
    # a health check: an app in a function, configured and connected, nothing more
    write(tmp_path, '''
        # file: proj/celery.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("django.conf:settings", namespace="CELERY")
        # file: proj/settings.py
        CELERY_TASK_ACKS_LATE = True
        CELERY_TASK_REJECT_ON_WORKER_LOST = True
        CELERY_WORKER_PREFETCH_MULTIPLIER = 1
        # file: proj/checks.py
        from celery import Celery
        from django.conf import settings

        def check_celery():
            celery = Celery()
            celery.config_from_object(settings)
            conn = celery.connection()
            return conn.connected
    ''')
    by_path = {a["path"]: a for a in apps(cli, tmp_path)}
    assert by_path["proj/checks.py"]["kind"] == "send-only"
    assert codes(tmp_path, "CL101", "CL102", "CL103") == []
    # the check still connects with the settings it ignores: CL110 says so
    assert [c[:2] for c in codes(tmp_path, "CL110")] == [("CL110", "proj/checks.py")]


def test_dict_sources(cli, tmp_path):
    write(tmp_path, '''
        # file: proj.py
        from celery import Celery
        CONFIG = {"task_acks_late": True, "broker_url": "redis://localhost:6379/0"}
        app = Celery("proj")
        app.config_from_object(CONFIG)
        other = Celery("other")
        other.config_from_object({"worker_prefetch_multiplier": 1}, namespace=None)
        extra = {"task_serializer": "json"}
        third = Celery("third")
        third.conf.update(extra)
        changed = {"task_acks_late": False}
        changed["task_acks_late"] = True
        fourth = Celery("fourth")
        fourth.config_from_object(changed)
        looped = {"task_acks_late": False}
        for key in ("task_acks_late",):
            looped[key] = True
        fifth = Celery("fifth")
        fifth.config_from_object(looped)
    ''')
    by_var = {a["variable"]: a for a in apps(cli, tmp_path)}
    app = by_var["app"]
    assert app["sources"][1]["kind"] == "dict"
    assert app["settings"]["task_acks_late"] == {"state": "set", "value": True, "path": "proj.py", "line": 2}
    assert by_var["other"]["settings"]["worker_prefetch_multiplier"]["value"] == 1
    assert by_var["third"]["settings"]["task_serializer"] == {"state": "set", "value": "json", "path": "proj.py", "line": 7}
    # changed in straight-line code: folded into the binding; in a loop: unknown
    assert by_var["fourth"]["settings"]["task_acks_late"]["value"] is True
    assert by_var["fifth"]["settings"]["task_acks_late"]["state"] == "unknown"


def test_class_sources_with_inheritance(cli, tmp_path):
    write(tmp_path, '''
        # file: proj/conf.py
        class Base:
            task_acks_late = True
            worker_prefetch_multiplier = 4

        class Config(Base):
            worker_prefetch_multiplier = 1
        # file: proj/app.py
        from celery import Celery
        from somewhere import Remote
        app = Celery("proj")
        app.config_from_object("proj.conf:Config")

        class Local(Remote):
            task_acks_late = True
        local = Celery("local")
        local.config_from_object(Local)
    ''')
    by_var = {a["variable"]: a for a in apps(cli, tmp_path)}
    app = by_var["app"]
    assert app["sources"][1]["kind"] == "class" and app["sources"][1]["module"].endswith("conf.Config")
    assert app["settings"]["task_acks_late"] == {"state": "set", "value": True, "path": "proj/conf.py", "line": 2}
    assert app["settings"]["worker_prefetch_multiplier"] == {"state": "set", "value": 1, "path": "proj/conf.py", "line": 6}
    local = by_var["local"]
    assert "Remote" in local["sources"][1]["unknown"]
    assert local["settings"]["worker_prefetch_multiplier"]["state"] == "unknown"


LAUNCH = {
    "Procfile": "web: gunicorn proj.wsgi\nworker: celery -A proj worker --concurrency=${CELERY_CONCURRENCY:-1} -O fair -l info\n",
    "docker-compose.yml": textwrap.dedent("""\
        services:
          worker:
            command: ["celery", "-A", "proj.celery:app", "worker", "--time-limit", "300"]
            environment:
              - CELERY_BROKER_URL=redis://:secret@redis:6379/0
              DJANGO_SETTINGS_MODULE: proj.settings
          other:
            environment:
              CELERY_RESULT_BACKEND: "redis://redis:6379/1"
    """),
    "deploy/worker.service": "[Service]\nExecStart=/srv/venv/bin/celery \\\n    --app=proj worker --soft-time-limit=60\n",
    "deploy/supervisor.conf": "[program:worker]\ncommand=celery -A other worker -c 2\n",
    "Dockerfile": 'FROM python\nCMD ["celery", "--app", "proj", "worker", "--prefetch-multiplier", "1"]\n',
    "bin/worker.sh": 'exec celery --app=proj \\\n    worker \\\n  --concurrency="${N:-2}" \\\n  "${EXTRA[@]}"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\nenv = ["CELERY_BROKER_URL=memory://"]\n[tool.taskipy]\nworker.cmd = "celery --app proj worker -E"\n',
    "helm/values.schema.json": '{"description": "Performance improved celery worker config for many findings"}\n',
    # prose and printed text (ibutsu-server): "The celery worker of ...", ``echo -n "Adding celery worker"``
    "ocp/worker.yaml": 'metadata:\n  annotations:\n    description: "The celery worker of the server"\n',
    "scripts/pod.sh": 'echo -n "Adding celery worker to the pod: "\nprintf "%s celery worker\\n" started\n',
}


def test_worker_command_lines_and_environment(cli, tmp_path):
    write(tmp_path, '''
        # file: proj/__init__.py
        # file: proj/celery.py
        from celery import Celery
        app = Celery("proj", task_acks_late=True, task_reject_on_worker_lost=True)
    ''')
    for rel, text in LAUNCH.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (app,) = apps(cli, tmp_path)
    workers = {(w["path"], w["line"]): (w["app"], w["options"]) for w in app["worker_command_lines"]}
    assert workers == {  # not deploy/supervisor.conf: it starts the app `other`
        ("Dockerfile", 2): ("proj", {"prefetch_multiplier": "1"}),
        ("Procfile", 2): ("proj", {"concurrency": "${CELERY_CONCURRENCY:-1}", "optimization": "fair"}),
        ("bin/worker.sh", 1): ("proj", {"concurrency": "${N:-2}"}),
        ("pyproject.toml", 4): ("proj", {}),
        ("deploy/worker.service", 2): ("proj", {"soft_time_limit": "60"}),
        ("docker-compose.yml", 3): ("proj.celery:app", {"time_limit": "300"}),
    }
    env = [(e["path"], e["line"], e["setting"], e["value"]) for e in app["environment_overrides"]]
    assert env == [("docker-compose.yml", 5, "broker_url", "redis://:***@redis:6379/0"),
                   ("docker-compose.yml", 9, "result_backend", "redis://redis:6379/1")]
    text = cli("--show-apps", ".", cwd=tmp_path).stdout
    assert "worker command line: Procfile:2: -A proj: concurrency=${CELERY_CONCURRENCY:-1} optimization=fair" in text
    assert "secret" not in text
    # the prefetch is set on a worker's command line (DefectDojo): no CL103
    assert codes(tmp_path, "CL103") == []
    (tmp_path / "Dockerfile").write_text('FROM python\nCMD ["celery", "--app", "proj", "worker"]\n')
    assert codes(tmp_path, "CL103") == [("CL103", "proj/celery.py", 2)]


def test_app_made_in_a_factory_function(cli, tmp_path):
    write(tmp_path, '''
        # file: factory.py
        from celery import Celery

        def make_celery(name):
            app = Celery(name)
            app.conf.update(task_acks_late=True, broker_url="redis://localhost:6379/0")
            app.conf.worker_prefetch_multiplier = 1
            return app

        celery_app = make_celery("proj")
    ''')
    (app,) = apps(cli, tmp_path)
    assert (app["line"], app["variable"], app["kind"]) == (4, "app", "worker")
    assert app["settings"]["task_acks_late"] == {"state": "set", "value": True, "path": "factory.py", "line": 5}
    assert codes(tmp_path) == [("CL102", "factory.py", 4)]
    proc = cli("--select", "CL102", "--fix", "--unsafe-fixes", "--no-cache", ".", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ("app.conf.update(task_acks_late=True, broker_url=\"redis://localhost:6379/0\", task_reject_on_worker_lost=True)"
            in (tmp_path / "factory.py").read_text())


def test_subclass_of_a_project_celery_subclass(cli, tmp_path):
    write(tmp_path, '''
        # file: proj/base.py
        from celery import Celery
        class BaseCelery(Celery):
            pass
        # file: proj/core.py
        from proj.base import BaseCelery
        class ProjCelery(BaseCelery):
            def setup(self):
                self.conf.task_acks_late = True
        class LooksLikeCelery(object):
            pass
        # file: proj/__init__.py
        from proj.core import LooksLikeCelery, ProjCelery
        app = ProjCelery("proj")
        other = LooksLikeCelery()
    ''')
    (app,) = apps(cli, tmp_path)
    assert app["variable"] == "app"
    assert app["settings"]["task_acks_late"] == {"state": "set", "value": True, "path": "proj/core.py", "line": 4}


def test_an_app_configured_by_a_function_it_is_passed_to(cli, tmp_path):
    """mozilla/ichnaea's shape: ``configure_celery(celery_app)``, the
    function in another module loading the settings module on its
    parameter; the app has that source, as if it loaded it itself.  A
    function no app is passed to configures nothing, and one that updates
    its parameter with what cannot be read makes the app's settings unknown."""
    write(tmp_path, '''
        # file: proj/__init__.py
        # file: proj/settings.py
        broker_url = "redis://localhost:6379/0"
        task_acks_late = True
        task_reject_on_worker_lost = True
        worker_prefetch_multiplier = 8
        # file: proj/config.py
        def configure_celery(app):
            app.config_from_object("proj.settings")
        def configure_other(app):
            app.config_from_object("proj.other_settings")
        # file: proj/app.py
        from celery import Celery
        from proj.config import configure_celery
        celery_app = Celery("proj")
        configure_celery(celery_app)
    ''')
    (app,) = apps(cli, tmp_path)
    assert [s.get("module") for s in app["sources"]] == [None, "proj.settings", None]
    assert app["settings"]["worker_prefetch_multiplier"]["value"] == 8
    assert codes(tmp_path) == [("CL103", "proj/settings.py", 4)]  # at the 8 read, not "not set" at the app
    (tmp_path / "proj" / "flaskish.py").write_text(textwrap.dedent('''
        from celery import Celery
        def init_celery(celery, flask_app):
            celery.conf.update(flask_app.config)
        other_app = Celery("other")
        init_celery(other_app, object())
    '''))
    by_var = {a["variable"]: a for a in apps(cli, tmp_path)}
    assert by_var["other_app"]["unknown"] and by_var["celery_app"]["settings"]["task_acks_late"]["value"] is True
    assert codes(tmp_path) == [("CL103", "proj/settings.py", 4)]  # nothing on other_app, whose settings are unknown
