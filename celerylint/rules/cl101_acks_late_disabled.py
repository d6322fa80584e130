from __future__ import annotations

from ..domain.celeryconf.model import Model
from ..domain.celeryconf.rulebase import ConfigRule, app_task_class_decides, tasks_opt_in, where
from ..domain.deploy.model import worker_apps
from ..rule import Invalid, Valid, django_project


class AcksLateDisabled(ConfigRule):
    """
    ## What it does
    Checks that every Celery app enables `task_acks_late`, unless every task
    of the project opts in with `acks_late=True`, or the app's task class
    (`task_cls=`) sets `acks_late` itself, to any value: a task class's
    attribute wins over the setting, so the class decides (learningequality/studio's
    `acks_late = False`, "acknowledged just before they start executing").
    The app's configuration is
    read from everywhere Celery reads it: `Celery(...)` keywords,
    `app.conf.update(...)`, `app.conf.X = ...`, and the module or Django
    settings given to `config_from_object`.

    With settings profiles (`settings/production.py`, ...), each profile the
    rules check is read (docs/show-apps.md: "Settings profiles"); the message names it.

    ## Why is this bad?
    With `task_acks_late` off (Celery's default), the message is acknowledged
    when the task *starts*. A worker that is killed mid-task (deploy, OOM,
    autoscaling) loses the task silently: the broker has already forgotten
    it. With late acknowledgement the message is acknowledged only after the
    task returns, so an interrupted task is delivered again; the tasks must
    then be safe to run twice.

    ## Example
    ```python
    # celeryconfig.py
    broker_url = "redis://localhost:6379/0"
    ```

    Use instead:
    ```python
    # celeryconfig.py
    broker_url = "redis://localhost:6379/0"
    task_acks_late = True
    ```

    ## Fix safety
    The fix adds `task_acks_late = True` where the app's configuration lives
    (the configuration module, the Django settings as `CELERY_TASK_ACKS_LATE`,
    a new keyword of `app.conf.update(...)`, or `app.conf.task_acks_late =
    True` after the app is created), or turns an explicit `False` into
    `True`, unless a comment on its line or the line above gives a reason
    (the finding then says to revisit it, or add `# noqa`). There is no
    fix either when the app's module or its configuration files hold a
    commented-out line that sets it to `True` (`# celery.conf.task_acks_late
    = True`): it was turned on once and off again, for a reason the fix
    cannot weigh (long tasks that outlive the broker's redelivery
    timeout). A misspelt setting (`task_ack_late`, which CL107 renames) is
    renamed and set to `True`, so the setting is written once. It is
    unsafe: it changes delivery semantics, and tasks that are not
    idempotent then run twice after a crash.

    ## References
    - [Celery: task_acks_late](https://docs.celeryq.dev/en/stable/userguide/configuration.html#task-acks-late)
    - [Celery FAQ: should I use retry or acks_late?](https://docs.celeryq.dev/en/stable/faq.html#faq-acks-late-vs-retry)
    """

    CODE = "CL101"
    NAME = "acks-late-disabled"
    SEVERITY = "warning"
    SUMMARY = "`task_acks_late` is not enabled: a worker killed mid-task loses the message"
    FIX = "unsafe"
    TAGS = ("configuration", "delivery")

    VALID = (
        # the app is configured under another name (getsentry/zeus's Flask extension copies it
        # into ``self.celery``, whose conf takes the Flask config): unknown, and a fix writing
        # new names beside the config's old ones would stop Celery from starting
        Valid("""
            import celery
            class Celery:
                def __init__(self):
                    self.celery = celery.Celery(__name__)
                def init_app(self, app):
                    new_celery = celery.Celery(app.import_name, broker="redis://localhost:6379/0")
                    self.celery.__dict__.update(vars(new_celery))
                    self.celery.conf.update(app.config)
        """),
        # configured through another name for the app
        Valid("""
            # file: proj/worker.py
            from celery import Celery
            app = Celery("proj")
            alias = app
            alias.conf.update(task_acks_late=True)
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/conf.py
            CELERY_CONFIG = {"broker_url": "redis://localhost:6379/0", "task_acks_late": True}
            # file: proj/app.py
            from celery import Celery
            from proj import conf
            app = Celery("proj")
            app.config_from_object(conf.CELERY_CONFIG)
        """),
        Valid("""
            # file: proj/conf.py
            class Base:
                task_acks_late = True
            class Config(Base):
                broker_url = "redis://localhost:6379/0"
            # file: proj/app.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("proj.conf:Config")
        """),
        Valid("""
            # file: celeryconfig.py
            broker_url = "redis://localhost:6379/0"
            task_acks_late = (True
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/settings.py
            broker_url = "redis://localhost:6379/0"
            # file: proj/cfg.py
            from proj.settings import *
            task_acks_late = True
            # file: proj/app.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("proj.cfg")
        """),
        Valid(django_project("""
            CELERY_TASK_ACKS_LATE = True
        """)),
        Valid(django_project("""
            # a plugin's settings, unread: any setting may come from them
            CELERY_BROKER_URL = "redis://localhost:6379/0"
            vars().update(load_plugin_settings())
        """)),
        Valid("""
            # file: proj.py
            from celery import Celery as C
            app = C("proj", broker="redis://", task_acks_late=True)
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("settings_not_in_this_tree")
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.update(**load_settings())
        """),
        Valid("""
            # file: proj.py
            import os
            from celery import Celery
            app = Celery("proj")
            app.conf.task_acks_late = os.environ.get("ACKS_LATE", "1") == "1"
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            @app.task(acks_late=True)
            def a(): ...
            @app.task(acks_late=True)
            def b(): ...
        """),
        Valid("""
            # file: proj/queue.py
            from celery import Celery
            def publish(url, payload):
                client = Celery("other")
                client.conf.broker_url = url
                client.send_task("other.handle", kwargs=payload)
        """),
    )
    INVALID = (
        # tasks on a base made from the app's own Task (cnr-ibba/IMAGE-InjectTool,
        # venueless): Celery's Task, which sets nothing
        Invalid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0")
            # file: proj/tasks.py
            from proj.celery import app as celery_app
            class BaseTask(celery_app.Task):
                abstract = True
            @celery_app.task(base=BaseTask)
            def work(x):
                return x
        """, count=1, message="`task_acks_late` is not enabled"),
        # set once, then commented out again (hotosm/raw-data-api, whose exports outlive the
        # visibility timeout): reported, but the fix would undo a decision it cannot weigh
        Invalid("""
            from celery import Celery
            celery = Celery("w", broker="redis://localhost:6379/0")
            celery.conf.result_extended = True
            # celery.conf.task_reject_on_worker_lost = True
            # celery.conf.task_acks_late = True
        """, fixed=None, message="`task_acks_late` is not enabled"),
        # notification-api: init_app makes the app again, so a setting written
        # where it is made would be lost: no fix
        Invalid("""
            # file: app/__init__.py
            # file: app/celery.py
            from celery import Celery
            class NotifyCelery(Celery):
                def init_app(self, flask_app):
                    super().__init__(flask_app.import_name, broker=flask_app.config["BROKER_URL"])
                    self.conf.update({"task_serializer": "json"})
            notify_celery = NotifyCelery()
        """, fixed=None),
        # learningequality/studio: a dict of the Django settings given to config_from_object
        Invalid(django_project("""
            CELERY = {"broker_url": "redis://localhost:6379/0", "task_serializer": "json"}
        """, celery=(
            "import os\nfrom celery import Celery\nfrom django.conf import settings\n"
            'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")\n'
            'app = Celery("proj")\napp.config_from_object(settings.CELERY)\n'
        )), message="the dict given to `config_from_object` (`CELERY` of proj.settings)", fixed=None),
        # an e-mail configuration sets only EMAIL_* names; keys of a dict display are known
        Invalid(django_project("""
            import environ
            env = environ.Env()
            CELERY_BROKER_URL = "redis://localhost:6379/0"
            EMAIL_CONFIG = env.email_url("EMAIL_URL", default="smtp://localhost:25")
            vars().update(EMAIL_CONFIG)
            globals().update(config("MAIL", cast=dj_email_url.parse), {"DEBUG": False})
        """), message="`task_acks_late` is not enabled"),
        # a broker in one branch, tasks run eagerly in the other (pretalx):
        # the eager branch runs no worker and says nothing either way
        Invalid(django_project("""
            import os
            if os.environ.get("BROKER"):
                CELERY_BROKER_URL = os.environ["BROKER"]
                CELERY_TASK_ALWAYS_EAGER = False
            else:
                CELERY_TASK_ALWAYS_EAGER = True
        """), message="`task_acks_late` is not enabled"),
        Invalid(
            """
            # file: proj/core.py
            from celery import Celery
            class ProjCelery(Celery):
                def init_app(self, flask_app):
                    self.conf["broker_url"] = "redis://localhost:6379/0"
            # file: proj/__init__.py
            from proj.core import ProjCelery
            celery = ProjCelery("proj")
            """,
            at="2:10",
            fixed="""
            # file: proj/__init__.py
            from proj.core import ProjCelery
            celery = ProjCelery("proj")
            celery.conf.task_acks_late = True
            """,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object({"broker_url": "redis://localhost:6379/0", "task_acks_late": False})
            """,
            message="`task_acks_late` is False",
            fixed="""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object({"broker_url": "redis://localhost:6379/0", "task_acks_late": True})
            """,
        ),
        Invalid(
            """
            # file: proj/conf.py
            class Base:
                task_acks_late = True
            class Config(Base):
                task_acks_late = False
            # file: proj/app.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("proj.conf:Config")
            """,
            at="4:22",
            fixed="""
            # file: proj/conf.py
            class Base:
                task_acks_late = True
            class Config(Base):
                task_acks_late = True
            """,
        ),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/runtime.py
            from django.utils.module_loading import import_string
            celery_class = import_string("celery.Celery")
            # file: proj/celery.py
            import os
            from .runtime import celery_class
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
            app = celery_class("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            # file: proj/settings.py
            CELERY_BROKER_URL = "redis://localhost:6379/0"
            """,
            fixed="""
            # file: proj/settings.py
            CELERY_BROKER_URL = "redis://localhost:6379/0"
            CELERY_TASK_ACKS_LATE = True
            """,
        ),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/cfg.py
            broker_url = "redis://localhost:6379/0"
            task_acks_late = False
            # file: proj/app.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("proj.cfg")
            """,
            fixed="""
            # file: proj/cfg.py
            broker_url = "redis://localhost:6379/0"
            task_acks_late = True
            """,
            at="2:18",
        ),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/celery.py
            import os
            from celery import Celery
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings.production")
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            # file: proj/settings/__init__.py
            # file: proj/settings/base.py
            DEBUG = False
            CELERY_BROKER_URL = "redis://localhost:6379/0"
            CELERY_TASK_SERIALIZER = "json"
            # file: proj/settings/production.py
            from .base import *
            DEBUG = False
            """,
            fixed="""
            # file: proj/settings/base.py
            DEBUG = False
            CELERY_BROKER_URL = "redis://localhost:6379/0"
            CELERY_TASK_SERIALIZER = "json"
            CELERY_TASK_ACKS_LATE = True
            """,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery as make_app
            app = make_app("proj", broker="redis://localhost")
            app.conf.update(
                task_serializer="json",
                result_expires=3600,
            )
            """,
            fixed="""
            # file: proj.py
            from celery import Celery as make_app
            app = make_app("proj", broker="redis://localhost")
            app.conf.update(
                task_serializer="json",
                result_expires=3600,
                task_acks_late=True,
            )
            """,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.update(accept_content=["json"], task_queues=[1,],)
            """,
            fixed="""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.update(accept_content=["json"], task_queues=[1,], task_acks_late=True,)
            """,
        ),
        Invalid(
            """
            # file: proj.py
            import celery
            app = celery.Celery("proj")
            app.conf.task_acks_late = False
            """,
            fixed="""
            # file: proj.py
            import celery
            app = celery.Celery("proj")
            app.conf.task_acks_late = True
            """,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.broker_connection_retry_on_startup = True
            @app.task(acks_late=True)
            def a(): ...
            @app.task
            def b(): ...
            """,
            fixed="""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.broker_connection_retry_on_startup = True
            app.conf.task_acks_late = True
            @app.task(acks_late=True)
            def a(): ...
            @app.task
            def b(): ...
            """,
        ),
        Invalid(
            """
            # file: celeryconfig.py
            BROKER_URL = "redis://localhost:6379/0"
            CELERY_ACKS_LATE = False
            # file: proj.py
            from celery import Celery
            app = Celery("proj", config_source="celeryconfig")
            """,
            fixed="""
            # file: celeryconfig.py
            BROKER_URL = "redis://localhost:6379/0"
            CELERY_ACKS_LATE = True
            """,
        ),
        Invalid(
            """
            # file: celeryconfig.py
            broker_url = "redis://localhost:6379/0"
            imports = (
                "proj.tasks",
            )
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
            """,
            fixed="""
            # file: celeryconfig.py
            broker_url = "redis://localhost:6379/0"
            imports = (
                "proj.tasks",
            )
            task_acks_late = True
            """,
        ),
        Invalid(
            """
            # file: celeryconfig.py
            broker_url = "redis://localhost:6379/0"
            task_ack_late = False
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
            """,
            fixed="""
            # file: celeryconfig.py
            broker_url = "redis://localhost:6379/0"
            task_acks_late = True
            """,
        ),
    )

    def check_model(self, m: Model):
        for app in worker_apps(m):
            acks = app.get("task_acks_late")
            if acks.is_unknown or acks.truthy:
                continue
            if not app.get("task_annotations").is_default or app_task_class_decides(m, app, "acks_late"):
                continue
            if tasks_opt_in(m, "acks_late"):
                continue
            why = ("a worker killed mid-task (deploy, OOM, scale-down) loses the message, because it was "
                   "acknowledged when the task started")
            yield self.not_enabled(m, app, "task_acks_late", why,
                                   f"`task_acks_late` is not enabled in {where(app)} (Celery's default is False)")
