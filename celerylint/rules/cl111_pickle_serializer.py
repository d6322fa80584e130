from __future__ import annotations

from ..domain.celeryconf.fixes import value_text
from ..domain.celeryconf.model import Model
from ..domain.celeryconf.rulebase import ConfigRule, assignments_once, settings_everywhere
from ..rule import Invalid, Valid, django_project

SERIALIZERS = ("task_serializer", "result_serializer", "event_serializer")
ACCEPTS = ("accept_content", "result_accept_content")
# kombu's name of the pickle serializer and its content type
PICKLE = {"pickle": "json", "application/x-python-serialize": "application/json"}
JSON = frozenset({"json", "application/json"})


def _quote(text: str | None) -> str:
    """The quote character the value is written with (double by default)."""
    if text:
        for ch in text:
            if ch in "'\"":
                return ch
    return '"'


def _pickled(value) -> list[str] | None:
    """The entries of an accept list that let pickle in, or None when the
    value is not a readable list of content types."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items):
        return None
    return [i for i in items if i.strip().lower() in PICKLE]


def accept_without_pickle(items: list[str]) -> list[str]:
    """What a person writes instead: each pickle entry becomes JSON (by the
    same kind of name), and JSON is listed once."""
    out: list[str] = []
    for item in items:
        new = PICKLE.get(item.strip().lower(), item)
        if new.lower() in JSON and any(o.lower() in JSON for o in out):
            continue
        if new not in out:
            out.append(new)
    return out


class PickleSerializer(ConfigRule):
    """
    ## What it does
    Checks that no Celery app serializes with pickle or accepts pickled
    messages: `task_serializer`, `result_serializer` or `event_serializer`
    set to `"pickle"`, or `accept_content`/`result_accept_content` that lists
    `"pickle"` (or its content type `application/x-python-serialize`). Old
    and Django names count (`CELERY_TASK_SERIALIZER`, `CELERY_ACCEPT_CONTENT`).

    ## Why is this bad?
    A worker that accepts pickle runs whatever a message tells `pickle.loads`
    to run. Anyone who can write to the broker (a Redis without a password,
    a leaked broker URL, another service on the same RabbitMQ vhost) then runs
    code as the worker, in every worker; a result backend read with pickle
    does the same to every process that calls `.get()`. JSON cannot carry
    code. Celery switched its default to JSON in 4.0 for this reason.

    It does not report `signed-pickle` or Celery's `auth` serializer (message
    signing): a message without the right signature is rejected before it is
    unpickled. It does not report a task's own `serializer="pickle"` option,
    values celerylint cannot read (a setting computed at run time,
    `self.conf[...]` inside a `Celery` subclass, an environment variable
    without a default), or settings in test paths.

    ## Example
    ```python
    # celeryconfig.py
    broker_url = "redis://localhost:6379/0"
    task_serializer = "pickle"
    accept_content = ["pickle", "json"]
    ```

    Use instead:
    ```python
    # celeryconfig.py
    broker_url = "redis://localhost:6379/0"
    task_serializer = "json"
    accept_content = ["json"]
    ```

    ## Fix safety
    The fix sets the serializer to `"json"`, and in an accept list writes
    JSON where pickle was (`["pickle", "json"]` becomes `["json"]`,
    `["pickle", "yaml"]` becomes `["json", "yaml"]`). It is unsafe: task
    arguments and results that JSON cannot carry (datetimes, sets, model
    instances, exceptions) then fail to serialize, and messages already queued
    as pickle are rejected once pickle is no longer accepted; deploy it after
    the queues drain, and pass ids instead of objects. A value that is the
    default of an environment variable is reported without a fix; so is a
    serializer while an accept list is unread or keeps pickle (a set display
    such as `{"pickle"}` is reported, not rewritten): JSON messages would
    then be refused; and so is an accept list while a task of the project declares
    `serializer="pickle"`: once pickle is refused, its messages are.

    ## References
    - [Celery: security, serializers](https://docs.celeryq.dev/en/stable/userguide/security.html#serializers)
    - [Celery: task_serializer](https://docs.celeryq.dev/en/stable/userguide/configuration.html#task-serializer)
    - [Celery: accept_content](https://docs.celeryq.dev/en/stable/userguide/configuration.html#accept-content)
    - [Python: pickle is not secure](https://docs.python.org/3/library/pickle.html)
    """

    CODE = "CL111"
    NAME = "pickle-serializer"
    SEVERITY = "error"
    SUMMARY = "Pickle as a serializer or accepted content type: anyone who can write to the broker runs code in the workers"
    FIX = "unsafe"
    TAGS = ("configuration", "security")

    VALID = (
        # an unpacked dict of another module that changes it: unknown
        Valid("""
            # file: proj/__init__.py
            # file: proj/config.py
            CONF = {"task_serializer": "pickle"}
            CONF["task_serializer"] = "json"
            # file: proj/worker.py
            from celery import Celery
            from proj.config import CONF
            app = Celery("proj", **CONF)
            """),
        Valid(django_project("""
            CELERY_TASK_SERIALIZER = "signed-pickle"
            CELERY_RESULT_SERIALIZER = "signed-pickle"
            CELERY_ACCEPT_CONTENT = ["application/json", "application/x-signed-pickle"]
        """)),
        Valid("""
            # file: celeryconfig.py
            task_serializer = "auth"
            accept_content = ["auth", "json"]
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.task_serializer = SERIALIZER
            app.conf.accept_content = load_accepted()
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            @app.task(serializer="pickle")
            def legacy(obj): ...
        """),
        Valid("""
            # file: proj.py
            import pickle
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            PICKLE_PROTOCOL = pickle.HIGHEST_PROTOCOL
            cache_serializer = "pickle"
        """),
        Valid("""
            # file: tests/celeryconfig.py
            task_serializer = "pickle"
            accept_content = ["pickle"]
            # file: tests/test_app.py
            from celery import Celery
            app = Celery("t")
            app.config_from_object("tests.celeryconfig")
        """),
        Valid(django_project("""
            CELERY_TASK_SERIALIZER = "json"
            CACHE_SERIALIZER = "pickle"
            SESSION_SERIALIZER = "django.contrib.sessions.serializers.PickleSerializer"
        """)),
    )
    INVALID = (
        # settings split into a package of fragments, star-imported by its __init__
        # (unicef/hope-payment-gateway): ``from .celery import *`` names a module, not Celery
        Invalid(django_project("""
            DEBUG = False
            from proj.fragments import *  # noqa
        """, extra="""
            # file: proj/fragments/__init__.py
            from .celery import *  # noqa
            from .other import *  # noqa
            # file: proj/fragments/other.py
            SECRET = "x"
            # file: proj/fragments/celery.py
            CELERY_BROKER_URL = "redis://localhost:6379/0"
            CELERY_ACCEPT_CONTENT = ["pickle", "json"]
        """), count=1, message="`CELERY_ACCEPT_CONTENT` allows pickle"),
        # a dict of another module unpacked into Celery(...): reported at the
        # dict, with no fix (its items have no positions of their own)
        Invalid("""
            # file: proj/__init__.py
            # file: proj/settings.py
            CELERY_TIMEZONE = "UTC"
            CONF = {"broker_url": "redis://localhost:6379/0", "task_serializer": "pickle"}
            # file: proj/worker.py
            from celery import Celery
            from proj.settings import CONF
            app = Celery("proj", **CONF)
            """, fixed=None, message="`task_serializer` is 'pickle'", at="2:1"),
        # the same from a module holding nothing else (read from its text)
        Invalid("""
            # file: proj/__init__.py
            # file: proj/config.py
            CONF = {
                "broker_url": "redis://localhost:6379/0",
                "task_serializer": "pickle",
            }
            # file: proj/worker.py
            from celery import Celery
            from proj.config import CONF
            app = Celery("proj")
            app.conf.update(**CONF)
            """, fixed=None, message="`task_serializer` is 'pickle'", at="1:1"),
        # a settings module one folder below `config/` that only star-imports
        # the base module, which star-imports the settings package
        Invalid("""
            # file: config/__init__.py
            # file: config/settings/__init__.py
            # file: config/settings/celery.py
            CELERY_BROKER_URL = "redis://localhost:6379/0"
            CELERY_TASK_SERIALIZER = "pickle"
            # file: config/django/__init__.py
            # file: config/django/base.py
            from config.settings.celery import *  # noqa
            # file: config/django/production.py
            from .base import *  # noqa
            DEBUG = False
            # file: config/celery.py
            import os
            from celery import Celery
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.django.production")
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            """, message="`CELERY_TASK_SERIALIZER` is 'pickle'", at="2:26"),
        Invalid(
            django_project("""
                CELERY_BROKER_URL = "redis://redis:6379/0"
                CELERY_TASK_SERIALIZER = "pickle"
            """),
            fixed="""
                # file: proj/settings.py
                CELERY_BROKER_URL = "redis://redis:6379/0"
                CELERY_TASK_SERIALIZER = "json"
            """,
            at="2:26", message="`CELERY_TASK_SERIALIZER` is 'pickle'",
        ),
        Invalid(
            django_project("""
                BROKER_URL = 'redis://redis:6379/0'
                CELERY_ACCEPT_CONTENT = ['pickle', 'json']
                CELERY_RESULT_SERIALIZER = 'pickle'
            """, celery=(
                "from celery import Celery\n"
                "import os\n"
                "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'proj.settings')\n"
                "app = Celery('proj')\n"
                "app.config_from_object('django.conf:settings')\n"
            )),
            fixed="""
                # file: proj/settings.py
                BROKER_URL = 'redis://redis:6379/0'
                CELERY_ACCEPT_CONTENT = ['json']
                CELERY_RESULT_SERIALIZER = 'json'
            """,
            count=2,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.update(
                accept_content=("application/x-python-serialize",),
                event_serializer="pickle",
            )
            """,
            fixed="""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.update(
                accept_content=("application/json",),
                event_serializer="json",
            )
            """,
            count=2,
        ),
        Invalid(
            """
            # file: celeryconfig.py
            accept_content = ["json", "pickle", "yaml"]
            result_accept_content = ["pickle"]
            """,
            fixed="""
            # file: celeryconfig.py
            accept_content = ["json", "yaml"]
            result_accept_content = ["json"]
            """,
            count=2, message="allows pickle",
        ),
        Invalid(
            """
            # file: proj.py
            import os
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.task_serializer = os.environ.get("TASK_SERIALIZER", "pickle")
            """,
            fixed=None, message="environment variable TASK_SERIALIZER",
        ),
        Invalid(
            """
            # file: celeryconfig.py
            accept_content = ('pickle', 'json')
            result_accept_content = 'json', 'application/x-python-serialize'
            """,
            fixed="""
            # file: celeryconfig.py
            accept_content = ('json',)
            result_accept_content = 'json',
            """,
            count=2,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery as C
            app = C("proj", broker="redis://localhost", task_serializer="pickle")
            """,
            fixed="""
            # file: proj.py
            from celery import Celery as C
            app = C("proj", broker="redis://localhost", task_serializer="json")
            """,
        ),
    )

    def check_model(self, m: Model):
        accepts = list(self._accepts(m))
        # JSON must be accepted once the serializers write it: not while an accept list is unread or
        # keeps pickle unfixed (``{"pickle"}``, a set: ocf/ocfweb's results could no longer be read)
        accepted = all(f.fix is not None for f in accepts) and all(
            _pickled(value.value) is not None for name in ACCEPTS
            for _, value in assignments_once(settings_everywhere(m, name)))
        yield from accepts
        for name in SERIALIZERS:
            for _, value in assignments_once(settings_everywhere(m, name)):
                if not isinstance(value.value, str) or value.value.strip().lower() != "pickle":
                    continue
                a = value.at
                fix = None
                if not value.env and accepted:
                    q = _quote(value_text(m, a))
                    fix = a.fix_replacing(f"{q}json{q}", f"serialize with JSON: set `{a.name}` to \"json\"")
                yield self.at_assignment(a, f"`{a.name}` is {value.shown()}: anyone who can write to the broker "
                                            "runs code in every process that deserializes these messages", fix)
    def _accepts(self, m: Model):
        pickling = [t["name"] for t in m.tasks if _pickled(m.task_option(t, "serializer")[0])]
        for name in ACCEPTS:
            for _, value in assignments_once(settings_everywhere(m, name)):
                bad = _pickled(value.value)
                if not bad:
                    continue
                a = value.at
                fix = None
                text = value_text(m, a)
                first = text.lstrip()[:1] if text else ""
                if not value.env and first and first in "[('\"" and isinstance(value.value, (list, tuple)):
                    q = _quote(text)
                    items = ", ".join(f"{q}{i}{q}" for i in accept_without_pickle(list(value.value)))
                    if first == "[":
                        new = f"[{items}]"
                    else:  # a tuple: its parentheses, when it has them, are outside the value's range
                        one = "," if "," not in items else ""
                        new = f"({items}{one})" if first == "(" else items + one
                    fix = a.fix_replacing(new, f"accept JSON instead of pickle in `{a.name}`")
                shown = ", ".join(repr(b) for b in bad)
                origin = f" (default of the environment variable {value.env})" if value.env else ""
                why = ""
                if pickling:  # their messages would be rejected: the tasks move to JSON first
                    fix = None
                    if len(pickling) == 1:
                        why = f"; task `{pickling[0]}` declares `serializer=\"pickle\"`: move it"
                    else:
                        why = f"; tasks `{pickling[0]}` and {len(pickling) - 1} more declare `serializer=\"pickle\"`: move them"
                    why += " to JSON before pickle is refused"
                yield self.at_assignment(a, f"`{a.name}`{origin} allows pickle ({shown}): anyone who can write to "
                                            f"the broker runs code in every worker that accepts it{why}", fix)
