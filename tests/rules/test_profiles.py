"""Settings profiles and ways of writing settings, each built from the shape
of a public project, checked through the real CLI (``--show-apps --format
json`` for the model, the JSON report for findings)."""

from __future__ import annotations

import json

from conftest import lint_json, show_apps as show, write_project as write

CELERY_APP = '''
    # file: proj/__init__.py
    # file: proj/celery.py
    import os
    from celery import Celery
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings.local")
    app = Celery("proj")
    app.config_from_object("django.conf:settings", namespace="CELERY")
    # file: proj/settings/__init__.py
'''


def by_profile(apps):
    return {a["profile"]["name"]: a for a in apps}


def codes(root, *args):
    _, findings, _ = lint_json(root, "--no-cache", "--select", "CL1", *args)
    return findings


def cookiecutter_shape(tmp_path, production: str = ""):
    write(tmp_path, CELERY_APP, '''
        # file: proj/settings/base.py
        CELERY_BROKER_URL = "redis://redis:6379/0"
        CELERY_TASK_TIME_LIMIT = 1800
        # file: proj/settings/local.py
        from .base import *
        CELERY_TASK_ALWAYS_EAGER = True
        # file: proj/settings/test.py
        from .base import *
        # file: proj/settings/production.py
        from .base import *
    ''', production)


def test_every_leaf_is_a_profile_and_the_deployed_one_is_checked(cli, tmp_path):
    cookiecutter_shape(tmp_path)
    (tmp_path / ".env").write_text("DJANGO_SETTINGS_MODULE=proj.settings.production\n")
    profiles = by_profile(show(cli, tmp_path))
    assert sorted(profiles) == ["proj.settings.local", "proj.settings.production", "proj.settings.test"]
    assert {n: p["profile"]["checked"] for n, p in profiles.items()} == {
        "proj.settings.local": False, "proj.settings.production": True, "proj.settings.test": False}
    assert profiles["proj.settings.production"]["profile"]["named_by"] == [".env"]
    assert profiles["proj.settings.local"]["settings"]["task_always_eager"]["value"] is True
    production = profiles["proj.settings.production"]
    assert production["sources"][1]["files"] == ["proj/settings/production.py", "proj/settings/base.py"]
    assert production["settings"]["broker_url"] == {"state": "set", "value": "redis://redis:6379/0",
                                                    "path": "proj/settings/base.py", "line": 1}
    text = cli("--show-apps", ".", cwd=tmp_path).stdout
    assert "  settings profile: proj.settings.production (proj/settings/production.py), checked; " \
           "DJANGO_SETTINGS_MODULE in .env\n" in text
    assert "  settings profile: proj.settings.local (proj/settings/local.py), not checked" in text
    findings = codes(tmp_path)
    # CL113 would fire on local's CELERY_TASK_ALWAYS_EAGER if local were checked
    assert sorted(f["code"] for f in findings) == ["CL101", "CL103"]
    cl101 = next(f for f in findings if f["code"] == "CL101")
    assert cl101["message"].endswith("(settings profile `proj.settings.production`)")
    # the missing setting is reported where the profile's settings should say it
    assert (cl101["path"], cl101["line"]) == ("proj/settings/base.py", 2)
    assert cl101["fix"]["path"] == "proj/settings/base.py"


def test_a_missing_setting_sits_where_a_last_setting_over_two_lines_starts(cli, tmp_path):
    """The finding sits on the last setting of the shared file: when its
    value spans two lines, on the line the statement starts, where a noqa
    comment goes; the fix still writes after the whole statement."""
    cookiecutter_shape(tmp_path)
    base = tmp_path / "proj" / "settings" / "base.py"
    base.write_text(base.read_text() + 'CELERY_TASK_SOFT_TIME_LIMIT = int(\n    "240")\n')
    (tmp_path / ".env").write_text("DJANGO_SETTINGS_MODULE=proj.settings.production\n")
    cl101 = next(f for f in codes(tmp_path) if f["code"] == "CL101")
    assert (cl101["path"], cl101["line"], cl101["end_line"]) == ("proj/settings/base.py", 3, 3)
    base.write_text(base.read_text().replace("int(\n", "int(  # noqa: CL101\n"))
    assert "CL101" not in [f["code"] for f in codes(tmp_path)]
    cli("--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    text = base.read_text()
    compile(text, "base.py", "exec")
    assert '    "240")\nCELERY_' in text, text  # a setting added after the statement, not inside it


def test_one_finding_for_profiles_sharing_a_file(tmp_path):
    cookiecutter_shape(tmp_path)
    write(tmp_path, '''
        # file: proj/settings/staging.py
        from .base import *
    ''')
    (tmp_path / "celerylint.toml").write_text('settings-profiles = ["production", "staging", "local"]\n')
    findings = [f for f in codes(tmp_path) if f["code"] == "CL101"]
    assert len(findings) == 1
    # local runs tasks eagerly: no worker, so no worker setting is checked there
    assert findings[0]["message"].endswith("(settings profiles `proj.settings.production`, `proj.settings.staging`)")


def test_a_profile_that_runs_tasks_eagerly_gets_no_worker_findings(cli, tmp_path):
    cookiecutter_shape(tmp_path)
    (tmp_path / "celerylint.toml").write_text('settings-profiles = ["local"]\n')
    findings = codes(tmp_path)
    # CL113 says the queue is bypassed; acks_late and prefetch do not apply there
    assert [f["code"] for f in findings] == []  # local is a development profile: CL113 stays quiet too
    write(tmp_path, '''
        # file: proj/settings/staging.py
        from .base import *
        CELERY_TASK_ALWAYS_EAGER = True
    ''')
    (tmp_path / "celerylint.toml").write_text('settings-profiles = ["staging"]\n')
    assert [f["code"] for f in codes(tmp_path)] == ["CL113"]
    profiles = by_profile(show(cli, tmp_path))
    assert profiles["proj.settings.staging"]["kind"] == "eager"
    assert profiles["proj.settings.production"]["kind"] == "worker"


def test_a_value_set_in_the_profile_is_reported_there(tmp_path):
    cookiecutter_shape(tmp_path, '''
        CELERY_TASK_ACKS_LATE = False
        CELERY_WORKER_PREFETCH_MULTIPLIER = 1
    ''')
    (cl101,) = [f for f in codes(tmp_path) if f["code"] == "CL101"]
    assert (cl101["path"], cl101["line"]) == ("proj/settings/production.py", 2)
    assert "CL103" not in {f["code"] for f in codes(tmp_path)}


def test_only_development_profiles_fall_back_to_the_default_one(cli, tmp_path):
    write(tmp_path, CELERY_APP, '''
        # file: proj/settings/base.py
        CELERY_BROKER_URL = "redis://redis:6379/0"
        # file: proj/settings/local.py
        from .base import *
        CELERY_TASK_ACKS_LATE = True
        # file: proj/settings/test.py
        from .base import *
    ''')
    checked = [n for n, a in by_profile(show(cli, tmp_path)).items() if a["profile"]["checked"]]
    assert checked == ["proj.settings.local"]
    assert "CL101" not in {f["code"] for f in codes(tmp_path)}


def test_if_else_values(cli, tmp_path):
    write(tmp_path, '''
        # file: celeryconfig.py
        import os
        timezone = "UTC"
        if os.environ.get("FAST"):
            task_acks_late = True
            worker_prefetch_multiplier = 4
        else:
            task_acks_late = True
            worker_prefetch_multiplier = 1
        broker_url, result_backend = "redis://redis:6379/0", "redis://redis:6379/1"
        # file: proj.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("celeryconfig")
    ''')
    (app,) = show(cli, tmp_path)
    settings = app["settings"]
    assert settings["task_acks_late"] == {"state": "set", "value": True, "path": "celeryconfig.py", "line": 7}
    assert settings["worker_prefetch_multiplier"] == {"state": "unknown", "value": None, "path": "celeryconfig.py",
                                                      "line": 8, "values": [4, 1]}
    assert settings["result_backend"]["value"] == "redis://redis:6379/1"
    found = {f["code"] for f in codes(tmp_path)}
    assert "CL101" not in found and "CL103" not in found


def test_environment_defaults(cli, tmp_path):
    # the shapes of wger (env.str with a positional default), DefectDojo
    # (environ.Env schema defaults) and kitsune (python-decouple)
    write(tmp_path, '''
        # file: settings.py
        import environ
        from decouple import config
        env = environ.Env(DD_ACKS_LATE=(bool, False), DD_PREFETCH=(int, 1))
        CELERY_BROKER_URL = env.str("CELERY_BROKER", "redis://cache:6379/2")
        CELERY_TASK_ACKS_LATE = env("DD_ACKS_LATE")
        CELERY_WORKER_PREFETCH_MULTIPLIER = env("DD_PREFETCH")
        CELERY_RESULT_BACKEND = config("RESULTS", default="redis://cache:6379/3")
        # file: proj.py
        import os
        from celery import Celery
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")
        app = Celery("proj")
        app.config_from_object("django.conf:settings", namespace="CELERY")
    ''')
    (app,) = show(cli, tmp_path)
    s = app["settings"]
    assert (s["broker_url"]["value"], s["broker_url"]["env"]) == ("redis://cache:6379/2", "CELERY_BROKER")
    assert (s["task_acks_late"]["value"], s["task_acks_late"]["env"]) == (False, "DD_ACKS_LATE")
    assert (s["worker_prefetch_multiplier"]["value"], s["worker_prefetch_multiplier"]["env"]) == (1, "DD_PREFETCH")
    assert (s["result_backend"]["value"], s["result_backend"]["env"]) == ("redis://cache:6379/3", "RESULTS")


def test_class_based_settings_with_a_loader(cli, tmp_path):
    # readthedocs: settings classes exported into the module by a loader
    write(tmp_path, '''
        # file: proj/__init__.py
        # file: proj/core/__init__.py
        # file: proj/core/settings.py
        class Settings:
            @classmethod
            def load_settings(cls, module_name):
                pass
        # file: proj/worker.py
        import os
        from celery import Celery
        def create_application():
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings.docker_compose")
            application = Celery("proj")
            application.config_from_object("django.conf:settings", namespace="CELERY")
            return application
        app = create_application()
        # file: proj/settings/__init__.py
        # file: proj/settings/base.py
        from proj.core.settings import Settings
        class CommunityBaseSettings(Settings):
            CELERY_TASK_ACKS_LATE = True
            CELERY_WORKER_PREFETCH_MULTIPLIER = 1
            CELERY_TASK_ALWAYS_EAGER = True
            @property
            def CELERY_RESULT_BACKEND(self):
                return "redis://"
        # file: proj/settings/docker_compose.py
        from .base import CommunityBaseSettings
        class DockerBaseSettings(CommunityBaseSettings):
            CELERY_BROKER_URL = "redis://cache:6379/0"
            CELERY_TASK_ALWAYS_EAGER = False
        DockerBaseSettings.load_settings(__name__)
        # file: proj/settings/test.py
        from .base import CommunityBaseSettings
        class CommunityTestSettings(CommunityBaseSettings):
            pass
        CommunityTestSettings.load_settings(__name__)
    ''')
    profiles = by_profile(show(cli, tmp_path))
    assert sorted(profiles) == ["proj.settings.docker_compose", "proj.settings.test"]
    s = profiles["proj.settings.docker_compose"]["settings"]
    assert s["task_acks_late"] == {"state": "set", "value": True, "path": "proj/settings/base.py", "line": 3}
    assert s["task_always_eager"]["value"] is False
    assert s["broker_url"]["value"] == "redis://cache:6379/0"
    assert s["result_backend"]["state"] == "unknown"  # a property
    findings = codes(tmp_path)
    (cl102,) = [f for f in findings if f["code"] == "CL102"]
    assert cl102["path"] == "proj/settings/base.py"
    assert "`proj.settings.docker_compose`" in cl102["message"]
    assert cl102["fix"]["edits"][0]["content"].startswith("    CELERY_TASK_REJECT_ON_WORKER_LOST = True")


# django-configurations: a base class and a development class extending it
CONFIGURATIONS = '''
        # file: proj/__init__.py
        # file: proj/settings.py
        from configurations import Configuration
        class Common(Configuration):
            CELERY_BROKER_URL = "redis://redis:6379/0"
        class Dev(Common):
            CELERY_TASK_ACKS_LATE = True
'''


def test_django_configurations_classes(cli, tmp_path):
    write(tmp_path, CONFIGURATIONS, '''
        class Prod(Common):
            CELERY_WORKER_PREFETCH_MULTIPLIER = 1
        # file: proj/celery.py
        import os
        from celery import Celery
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
        app = Celery("proj")
        app.config_from_object("django.conf:settings", namespace="CELERY")
    ''')
    profiles = by_profile(show(cli, tmp_path))
    assert sorted(profiles) == ["proj.settings:Dev", "proj.settings:Prod"]
    assert profiles["proj.settings:Prod"]["profile"]["checked"] is True
    assert profiles["proj.settings:Dev"]["settings"]["task_acks_late"]["value"] is True
    prod = profiles["proj.settings:Prod"]["settings"]
    assert prod["broker_url"]["value"] == "redis://redis:6379/0" and prod["worker_prefetch_multiplier"]["value"] == 1
    (cl101,) = [f for f in codes(tmp_path) if f["code"] == "CL101"]
    assert cl101["message"].endswith("(settings profile `proj.settings:Prod`)")


def test_a_django_configurations_class_named_by_the_deployment_is_checked(cli, tmp_path):
    """``ENV DJANGO_CONFIGURATION=Prod`` names a class that ``Build`` (the
    image's build step) extends: ``Prod`` is a profile of its own, not only
    the leaves; ``Dev``, extended by nothing, stays one, unchecked."""
    write(tmp_path, CONFIGURATIONS, '''
        class Prod(Common):
            CELERY_TASK_ACKS_LATE = False
        class Build(Prod):
            CELERY_TASK_ACKS_LATE = True
        # file: proj/celery.py
        import os
        from celery import Celery
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
        os.environ.setdefault("DJANGO_CONFIGURATION", "Dev")
        app = Celery("proj")
        app.config_from_object("django.conf:settings", namespace="CELERY")
        # file: Dockerfile
        FROM python:3.12
        ENV DJANGO_SETTINGS_MODULE=proj.settings \\
            DJANGO_CONFIGURATION=Prod
        RUN DJANGO_CONFIGURATION=Build python manage.py collectstatic --noinput
        CMD ["celery", "-A", "proj", "worker"]
    ''')
    profiles = by_profile(show(cli, tmp_path))
    assert sorted(profiles) == ["proj.settings:Build", "proj.settings:Dev", "proj.settings:Prod"]
    prod = profiles["proj.settings:Prod"]["profile"]
    assert prod["checked"] is True and prod["named_by"] == ["Dockerfile"]
    assert profiles["proj.settings:Dev"]["profile"]["named_by"] == ["proj/celery.py"]
    (cl101,) = [f for f in codes(tmp_path) if f["code"] == "CL101"]
    assert cl101["message"].endswith("(settings profile `proj.settings:Prod`)")
    text = cli("--show-apps", ".", cwd=tmp_path).stdout
    assert "proj.settings:Prod (proj/settings.py), checked; DJANGO_SETTINGS_MODULE/DJANGO_CONFIGURATION in Dockerfile" in text


def test_split_settings_include(cli, tmp_path):
    # DefectDojo: settings.py includes settings.dist.py and an optional local file
    write(tmp_path, '''
        # file: dojo/__init__.py
        # file: dojo/settings/__init__.py
        # file: dojo/settings/settings.py
        from split_settings.tools import include, optional
        include(
            "settings.dist.py",
            optional("local_settings.py"),
        )
        # file: dojo/settings/settings.dist.py
        CELERY_BROKER_URL = "redis://redis:6379/0"
        CELERY_TASK_SERIALIZER = "json"
        # file: dojo/celery.py
        import os
        from celery import Celery
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dojo.settings.settings")
        app = Celery("dojo")
        app.config_from_object("django.conf:settings", namespace="CELERY")
    ''')
    (app,) = show(cli, tmp_path)
    assert app["sources"][1]["files"] == ["dojo/settings/settings.py", "dojo/settings/settings.dist.py"]
    assert "unknown" not in app["sources"][1]
    assert app["settings"]["broker_url"]["path"] == "dojo/settings/settings.dist.py"
    (cl101,) = [f for f in codes(tmp_path) if f["code"] == "CL101"]
    assert cl101["fix"]["path"] == "dojo/settings/settings.dist.py"


def test_an_include_that_cannot_be_read_makes_settings_unknown(cli, tmp_path):
    write(tmp_path, '''
        # file: dojo/__init__.py
        # file: dojo/settings/__init__.py
        # file: dojo/settings/settings.py
        from split_settings.tools import include
        CELERY_BROKER_URL = "redis://redis:6379/0"
        include("components/*.py")
        # file: dojo/celery.py
        import os
        from celery import Celery
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dojo.settings.settings")
        app = Celery("dojo")
        app.config_from_object("django.conf:settings", namespace="CELERY")
    ''')
    (app,) = show(cli, tmp_path)
    assert app["settings"]["task_acks_late"]["state"] == "unknown"
    assert not {"CL101", "CL103"} & {f["code"] for f in codes(tmp_path)}


def test_task_cls_options_follow_its_task_classes(tmp_path):
    # DefectDojo: Celery("dojo", task_cls=PgHistoryTask), PgHistoryTask extends
    # two task classes of the same file; none sets acks_late
    app = '''
        # file: dojo/__init__.py
        # file: dojo/celeryconfig.py
        broker_url = "redis://redis:6379/0"
        # file: dojo/celery.py
        from celery import Celery, Task
        class DojoAsyncTask(Task):
            {option}
        class PluggableContextTask(DojoAsyncTask):
            pass
        class PgHistoryTask(PluggableContextTask):
            pass
        app = Celery("dojo", task_cls=PgHistoryTask)
        app.config_from_object("dojo.celeryconfig")
    '''
    write(tmp_path, app.replace("{option}", "pass"))
    assert "CL101" in {f["code"] for f in codes(tmp_path)}
    write(tmp_path, app.replace("{option}", "acks_late = True"))
    assert "CL101" not in {f["code"] for f in codes(tmp_path)}


def test_helper_function_returning_a_literal(cli, tmp_path):
    write(tmp_path, '''
        # file: celeryconfig.py
        import os
        HOST = "redis"
        def redis_url():
            """The broker."""
            return f"redis://{HOST}:6379/0"
        def from_env(name):
            return os.environ[name]
        broker_url = redis_url()
        result_backend = from_env("x")
        # file: proj.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("celeryconfig")
    ''')
    (app,) = show(cli, tmp_path)
    assert app["settings"]["broker_url"]["value"] == "redis://redis:6379/0"
    assert app["settings"]["result_backend"]["state"] == "unknown"


def test_modules_that_are_not_settings_are_no_profiles(cli, tmp_path):
    write(tmp_path, '''
        # file: proj/__init__.py
        # file: proj/models.py
        X = 1
        # file: proj/views.py
        from .models import *
        # file: proj/settings.py
        CELERY_BROKER_URL = "redis://redis:6379/0"
        # file: proj/settings_prod.py
        from .settings import *
        CELERY_TASK_ACKS_LATE = True
        # file: proj/celery.py
        import os
        from celery import Celery
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
        app = Celery("proj")
        app.config_from_object("django.conf:settings", namespace="CELERY")
    ''')
    profiles = by_profile(show(cli, tmp_path))
    assert sorted(profiles) == ["proj.settings", "proj.settings_prod"]
    assert all(p["profile"]["checked"] for p in profiles.values())
    (cl101,) = [f for f in codes(tmp_path) if f["code"] == "CL101"]
    assert cl101["message"].endswith("(settings profile `proj.settings`)")


def test_profiles_in_a_folder_not_named_like_settings(cli, tmp_path):
    """HackSoftware's styleguide: ``config/django/base.py`` is the settings
    module, ``production.py`` and ``test.py`` beside it build on it; a module
    of that folder building on something else is no profile."""
    write(tmp_path, '''
        # file: config/__init__.py
        # file: config/django/__init__.py
        # file: config/django/base.py
        CELERY_BROKER_URL = "redis://redis:6379/0"
        # file: config/django/production.py
        from .base import *
        CELERY_TASK_ACKS_LATE = True
        # file: config/django/test.py
        from .base import *
        # file: config/django/models.py
        X = 1
        # file: config/django/views.py
        from .models import *
        # file: proj/__init__.py
        # file: proj/celery.py
        import os
        from celery import Celery
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.django.base")
        app = Celery("proj")
        app.config_from_object("django.conf:settings", namespace="CELERY")
    ''')
    profiles = by_profile(show(cli, tmp_path))
    assert sorted(profiles) == ["config.django.base", "config.django.production", "config.django.test"]
    assert profiles["config.django.production"]["settings"]["task_acks_late"]["value"] is True
    cl102 = [f for f in codes(tmp_path) if f["code"] == "CL102"]
    assert [f["message"].endswith("(settings profile `config.django.production`)") for f in cl102] == [True]


def test_a_profile_that_does_not_parse_is_listed_with_unknown_settings(cli, tmp_path):
    # cookiecutter-django: the settings are Jinja templates
    write(tmp_path, CELERY_APP, '''
        # file: proj/settings/base.py
        CELERY_BROKER_URL = "redis://redis:6379/0"
        # file: proj/settings/local.py
        from .base import *
        # file: proj/settings/production.py
        from .base import *  # noqa: F403
        {%- if cookiecutter.use_sentry == "y" %}
        SENTRY = 1
        {%- endif %}
    ''')
    (tmp_path / ".envs" / ".production").mkdir(parents=True)
    (tmp_path / ".envs" / ".production" / ".django").write_text("DJANGO_SETTINGS_MODULE=proj.settings.production\n")
    profiles = by_profile(show(cli, tmp_path))
    production = profiles["proj.settings.production"]
    assert production["profile"]["checked"] and production["profile"]["named_by"] == [".envs/.production/.django"]
    assert production["settings"]["task_acks_late"]["state"] == "unknown"
    assert not {"CL101", "CL103"} & {f["code"] for f in codes(tmp_path)}


TAIGA = '''
    # file: taiga/__init__.py
    # file: taiga/celery.py
    import os
    from celery import Celery
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings.common")
    app = Celery("taiga")
    app.config_from_object("django.conf:settings", namespace="CELERY")
    # file: settings/__init__.py
    # file: settings/common.py
    CELERY_BROKER_URL = "amqp://guest:guest@localhost:5672//"
    CELERY_TASK_ACKS_LATE = True
    CELERY_TASK_REJECT_ON_WORKER_LOST = True
    CELERY_WORKER_PREFETCH_MULTIPLIER = 1
    CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
    # file: docker/config.py
    from .common import *
    CELERY_TASK_SERIALIZER = "pickle"
'''


def test_a_deployed_profile_a_dockerfile_copies_into_place_is_read(cli, tmp_path):
    """taiga's shape: its Dockerfile copies ``docker/config.py`` to
    ``settings/config.py`` and names ``settings.config``; the copied file's
    ``from .common import *`` is resolved from ``settings/``."""
    write(tmp_path, TAIGA, '''
        # file: docker/Dockerfile
        WORKDIR /taiga-back
        COPY . .
        RUN set -eux; \\
            cp docker/config.py settings/config.py
        ENV DJANGO_SETTINGS_MODULE=settings.config
    ''')
    apps = {a["profile"]["name"]: a for a in show(cli, tmp_path)}
    config = apps["settings.config"]
    assert (config["profile"]["path"], config["profile"]["why"], config["profile"]["checked"]) == (
        "docker/config.py", "copied to settings/config.py by docker/Dockerfile", True)
    assert config["missing_profiles"] == []
    assert config["settings"]["task_acks_late"] == {"state": "set", "value": True, "path": "settings/common.py", "line": 2}
    assert config["settings"]["task_serializer"]["path"] == "docker/config.py"
    assert [(f["code"], f["path"], f["line"]) for f in codes(tmp_path)] == [("CL111", "docker/config.py", 2)]
    text = cli("--show-apps", ".", cwd=tmp_path).stdout
    assert ("settings profile: settings.config (docker/config.py, copied to settings/config.py by docker/Dockerfile), "
            "checked; DJANGO_SETTINGS_MODULE in docker/Dockerfile") in text


def test_a_deployed_profile_not_in_the_tree_is_listed_as_unknown(cli, tmp_path):
    """The same Dockerfile without the copy: the tree has only
    ``settings/common.py``, so ``settings.config`` is unknown."""
    write(tmp_path, TAIGA, '''
        # file: docker/Dockerfile
        ENV DJANGO_SETTINGS_MODULE=settings.config
    ''')
    (app,) = show(cli, tmp_path)
    assert app["missing_profiles"] == [{"name": "settings.config", "named_by": ["docker/Dockerfile"],
                                        "why": "not in the linted files"}]
    assert app["profile"] is None or app["profile"]["name"] == "settings.common"
    assert codes(tmp_path) == []
    text = cli("--show-apps", ".", cwd=tmp_path).stdout
    assert "settings profile: settings.config, not in the linted files: unknown, not checked; " \
           "DJANGO_SETTINGS_MODULE in docker/Dockerfile" in text


def test_a_test_settings_module_named_by_ci_is_said_to_be_one(cli, tmp_path):
    """onadata: CI names ``settings.github_actions_test``, a test file whose
    settings are not read: not "not in the linted files"."""
    write(tmp_path, TAIGA, '''
        # file: settings/github_actions_test.py
        from .common import *
        # file: .github/workflows/ci.yml
        env:
          DJANGO_SETTINGS_MODULE: settings.github_actions_test
    ''')
    (app,) = show(cli, tmp_path)
    assert app["missing_profiles"] == [{
        "name": "settings.github_actions_test", "named_by": [".github/workflows/ci.yml"],
        "why": "a test settings module (settings/github_actions_test.py), not read"}]


def test_launch_files_of_another_project_beside_it_are_not_read(cli, tmp_path):
    """A directory of checkouts (or a monorepo): linting one project from
    the parent must not take another's DJANGO_SETTINGS_MODULE for its own."""
    write(tmp_path, '''
        # file: one/pyproject.toml
        [project]
        name = "one"
        # file: one/taiga/__init__.py
        # file: one/taiga/celery.py
        import os
        from celery import Celery
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings.common")
        app = Celery("taiga")
        app.config_from_object("django.conf:settings", namespace="CELERY")
        # file: one/settings/__init__.py
        # file: one/settings/common.py
        CELERY_BROKER_URL = "amqp://localhost//"
        # file: other/pyproject.toml
        [project]
        name = "other"
        # file: other/Dockerfile
        ENV DJANGO_SETTINGS_MODULE=settings.main
    ''')
    def missing():
        proc = cli("--show-apps", "--format", "json", "one", cwd=tmp_path)
        (app,) = json.loads(proc.stdout)["apps"]
        return app["missing_profiles"]

    assert missing() == []
    (tmp_path / "one" / "Dockerfile").write_text("ENV DJANGO_SETTINGS_MODULE=settings.main\n")
    assert missing() == [{"name": "settings.main", "named_by": ["one/Dockerfile"], "why": "not in the linted files"}]


def test_settings_a_registry_sets_at_run_time_are_unknown(cli, tmp_path):
    """Mayan-EDMS' shape: ``base.py`` hands its ``globals()`` to a settings
    registry, and the apps' ``settings.py`` register the names it sets
    (``global_name=``): those are unknown where assigned before it, others
    (``task_acks_late``) keep what the files say, so CL101 still fires."""
    write(tmp_path, '''
        # file: mayan/__init__.py
        # file: mayan/celery.py
        import os
        from celery import Celery
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mayan.settings")
        app = Celery("mayan")
        app.config_from_object("django.conf:settings", namespace="CELERY")
        # file: mayan/settings/__init__.py
        from .base import *
        # file: mayan/settings/base.py
        from mayan.apps.smart_settings.utils import SettingNamespaceSingleton
        CELERY_RESULT_BACKEND = "redis://localhost:6379/1"
        setting_namespace = SettingNamespaceSingleton(global_symbol_table=globals())
        setting_namespace.update_globals()
        CELERY_TASK_SERIALIZER = "json"
        # file: mayan/apps/task_manager/settings.py
        from mayan.apps.smart_settings.classes import SettingNamespace
        namespace = SettingNamespace(label="Celery", name="celery")
        setting_broker = namespace.add_setting(default="memory://", global_name="CELERY_BROKER_URL")
        setting_backend = namespace.add_setting(default=None, global_name="CELERY_RESULT_BACKEND")
        setting_serializer = namespace.add_setting(default="json", global_name="CELERY_TASK_SERIALIZER")
    ''')
    (app,) = show(cli, tmp_path)
    settings = app["settings"]
    assert settings["broker_url"] == {"state": "unknown", "value": None}
    assert settings["result_backend"] == {"state": "unknown", "value": None}  # assigned before: set again at run time
    assert settings["task_serializer"]["value"] == "json"  # assigned after: what the file says
    assert settings["task_acks_late"] == {"state": "default", "value": False}
    assert "CL101" in {f["code"] for f in codes(tmp_path)}


def test_a_profile_made_to_build_the_docs_is_not_checked(cli, tmp_path):
    # course-discovery's shape: settings/docs_settings.py builds on base for Sphinx
    cookiecutter_shape(tmp_path)
    write(tmp_path, '''
        # file: proj/settings/docs_settings.py
        from .base import *
        CELERY_TASK_ALWAYS_EAGER = True
    ''')
    (tmp_path / ".env").write_text("DJANGO_SETTINGS_MODULE=proj.settings.production\n")
    profiles = by_profile(show(cli, tmp_path))
    assert profiles["proj.settings.docs_settings"]["profile"]["checked"] is False
    assert profiles["proj.settings.production"]["profile"]["checked"] is True
    findings = codes(tmp_path)
    assert sorted(f["code"] for f in findings) == ["CL101", "CL103"]  # no CL113 for the docs profile
    assert all(f["message"].endswith("(settings profile `proj.settings.production`)") for f in findings)


def test_the_env_reader_a_profile_takes_from_the_base_settings(cli, tmp_path):
    """cookiecutter-django: ``env = environ.Env()`` in ``base.py``; the
    production profile takes it by ``from .base import *`` (and often
    ``from .base import env``) and reads with keyword defaults."""
    write(tmp_path, '''
        # file: proj/__init__.py
        # file: proj/celery.py
        import os
        from celery import Celery
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
        app = Celery("proj")
        app.config_from_object("django.conf:settings", namespace="CELERY")
        # file: config/__init__.py
        # file: config/settings/__init__.py
        # file: config/settings/base.py
        import environ
        env = environ.Env()
        CELERY_BROKER_URL = env("CELERY_BROKER_URL", default="redis://redis:6379/0")
        # file: config/settings/production.py
        from .base import *  # noqa
        from .base import env
        CELERY_TASK_ACKS_LATE = env.bool("CELERY_ACKS_LATE", default=False)
        CELERY_WORKER_PREFETCH_MULTIPLIER = env.int("CELERY_PREFETCH", default=1)
        CELERY_TASK_TIME_LIMIT = env.int("CELERY_TIME_LIMIT", 300)
    ''')
    (app,) = [a for a in show(cli, tmp_path) if a["profile"]["name"] == "config.settings.production"]
    settings = app["settings"]
    assert settings["task_acks_late"]["value"] is False and settings["task_acks_late"]["env"] == "CELERY_ACKS_LATE"
    assert settings["worker_prefetch_multiplier"]["value"] == 1
    assert settings["task_time_limit"]["state"] == "unknown"  # a positional second argument: a cast or a default
    (tmp_path / "config/settings/production.py").write_text(
        (tmp_path / "config/settings/production.py").read_text().replace("from .base import env\n", ""))
    (app,) = [a for a in show(cli, tmp_path) if a["profile"]["name"] == "config.settings.production"]
    assert app["settings"]["task_acks_late"]["value"] is False  # the star import alone binds it


def test_a_configurations_class_for_ci_or_derived_from_a_test_class_is_not_checked(cli, tmp_path):
    """django-configurations classes are named in CamelCase
    (``ContinuousIntegration``), and a class derived from a test class
    (``Review(Test)``) runs tasks as the tests do: neither is checked, so
    their eager flag and acks_late off raise nothing; ``Production`` is."""
    write(tmp_path, '''
        # file: proj/__init__.py
        # file: proj/settings.py
        from configurations import Configuration
        class Base(Configuration):
            CELERY_BROKER_URL = "redis://redis:6379/0"
            CELERY_TASK_ACKS_LATE = True
            CELERY_TASK_REJECT_ON_WORKER_LOST = True
            CELERY_WORKER_PREFETCH_MULTIPLIER = 1
        class Test(Base):
            CELERY_TASK_ALWAYS_EAGER = True
            CELERY_TASK_ACKS_LATE = False
        class ContinuousIntegration(Test):
            """CI settings."""
        class Review(Test):
            """A review app's settings."""
        class Production(Base):
            pass
        # file: proj/celery.py
        import os
        from celery import Celery
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
        os.environ.setdefault("DJANGO_CONFIGURATION", "Production")
        app = Celery("proj")
        app.config_from_object("django.conf:settings", namespace="CELERY")
    ''')
    profiles = by_profile(show(cli, tmp_path))
    assert sorted(profiles) == ["proj.settings:ContinuousIntegration", "proj.settings:Production",
                                "proj.settings:Review"]
    assert {name: p["profile"]["checked"] for name, p in profiles.items()} == {
        "proj.settings:ContinuousIntegration": False, "proj.settings:Production": True,
        "proj.settings:Review": False}
    assert [(f["code"], f["message"].rpartition("(")[2]) for f in codes(tmp_path)] == [
        ("CL125", "settings profile `proj.settings:Production`)")]


def test_configurations_classes_under_a_folder_that_is_a_package_too(cli, tmp_path):
    """suitenumerique/drive: ``src/backend/__init__.py`` makes ``backend`` a
    package, while ``DJANGO_SETTINGS_MODULE`` says ``proj.settings`` (the
    worker runs in ``backend/``): the classes of ``backend/proj/settings.py``
    are still its profiles, and their settings are read."""
    write(tmp_path / "backend", '''
        # file: __init__.py
        # file: proj/__init__.py
        # file: proj/settings.py
        from configurations import Configuration
        class Base(Configuration):
            CELERY_BROKER_URL = "redis://redis:6379/0"
            CELERY_TASK_ACKS_LATE = True
        class Production(Base):
            CELERY_TASK_ACKS_LATE = False
        # file: proj/celery_app.py
        import os
        from celery import Celery
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
        os.environ.setdefault("DJANGO_CONFIGURATION", "Production")
        app = Celery("proj")
        app.config_from_object("django.conf:settings", namespace="CELERY")
    ''')
    (app,) = show(cli, tmp_path)
    assert app["profile"]["name"] == "proj.settings:Production"
    assert app["settings"]["task_acks_late"] == {"state": "set", "value": False,
                                                 "path": "backend/proj/settings.py", "line": 6}


def test_circleci_and_github_action_profiles_are_not_checked(cli, tmp_path):
    """ministryofjustice/cla_backend: ``settings/circle.py`` (CircleCI), and
    a profile only a composite GitHub action names, are CI profiles."""
    cookiecutter_shape(tmp_path, '''
        # file: proj/settings/circle.py
        from .base import *
        # file: proj/settings/unit.py
        from .base import *
        # file: .github/actions/unit-tests/action.yml
        runs:
          steps:
            - run: python manage.py test
              env:
                DJANGO_SETTINGS_MODULE: proj.settings.unit
    ''')
    (tmp_path / ".env").write_text("DJANGO_SETTINGS_MODULE=proj.settings.production\n")
    profiles = by_profile(show(cli, tmp_path))
    assert {n: p["profile"]["checked"] for n, p in profiles.items()} == {
        "proj.settings.circle": False, "proj.settings.local": False, "proj.settings.production": True,
        "proj.settings.test": False, "proj.settings.unit": False}


def test_a_missing_settings_module_falls_back_to_its_own_package_not_another_projects(cli, tmp_path):
    """ministryofjustice/manchester_traffic_offences_pleas' shape: the module
    the app names (a git-ignored ``local.py``) is not in the tree, and a
    second Django project of the repository names its own settings: the
    app's profiles are those of its own package."""
    write(tmp_path, '''
        # file: web/__init__.py
        # file: web/celery.py
        import os
        from celery import Celery
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "web.settings.local")
        app = Celery("web")
        app.config_from_object("django.conf:settings", namespace="CELERY")
        # file: web/settings/__init__.py
        from .base import *
        # file: web/settings/base.py
        CELERY_BROKER_URL = "sqs://"
        # file: web/settings/production.py
        from .base import *
        DEBUG = False
        # file: api/__init__.py
        # file: api/wsgi.py
        import os
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "api.settings")
        # file: api/settings/__init__.py
        from .base import *
        # file: api/settings/base.py
        CELERY_BROKER_URL = "redis://"
        # file: manage.py
        import os
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "web.settings")
    ''')
    profiles = {a["profile"]["name"] for a in show(cli, tmp_path) if a.get("profile")}
    assert profiles and all(name.startswith("web.") for name in profiles), profiles
    assert all(f["path"].startswith("web/") for f in codes(tmp_path))
