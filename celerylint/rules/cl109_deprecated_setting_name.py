from __future__ import annotations

import re
from collections import Counter
from collections.abc import Container
from dataclasses import replace

from ..domain.celeryconf.celery_version import unless_below_4
from ..domain.celeryconf.texts import read
from ..facts.conf_reads import CONF_READ
from ..domain.celeryconf.model import Assignment, Model, Source
from ..domain.celeryconf.renames import already_set, rename_edit, where
from ..domain.celeryconf.rulebase import ConfigRule, sources
from ..domain.celeryconf.settings_table import Table, table
from ..rule import Invalid, TextFix, Valid, django_project


def _referenced_elsewhere(m: Model, names: set[str], assignments: list[Assignment]) -> bool:
    """Does any linted file use one of ``names`` besides the assignments?"""
    pattern = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, names))) + r")\b")
    own = {a.path for a in assignments}
    for path in m.project.python_files:
        text = read(m, path)
        if text is None:
            continue
        count = len(pattern.findall(text))
        if count > (sum(1 for a in assignments if a.path == path) if path in own else 0):
            return True
    return False


def _read_where_set(m: Model, a: Assignment) -> bool:
    """The file that sets ``a`` also reads its name (``CELERY_BROKER_URL =
    BROKER_URL``, ``urlsplit(BROKER_URL)``): a variable of the project, which
    neither a rename nor a deletion of the assignment alone leaves working."""
    text = read(m, a.path)
    if text is None:
        return True  # unknown: maybe read
    written = sum(1 for b in m.by_path_assignments.get(a.path, ()) if b.name == a.name)
    counts = m.__dict__.setdefault("_cl109_code_names", {})  # one tokenization per file a run asks about
    if a.path not in counts:
        counts[a.path] = Counter(_names_in_code(text))
    return counts[a.path][a.name] > max(written, 1)


def _names_in_code(text: str) -> list[str]:
    """The names the code of ``text`` writes, outside strings and comments
    (``config("CELERYD_CONCURRENCY")`` reads an environment variable, not the
    name)."""
    import io
    import tokenize

    try:
        return [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.NAME]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return re.findall(r"\b\w+\b", text)  # unreadable: every word counts, so a name may be read


def duplicate(source: Source, a: Assignment, t: Table) -> Assignment | None:
    """An assignment of the new spelling of old name ``a`` in the source."""
    return already_set(source.by_name, t.renamed(a.name, source.namespace), a)


def taken(old: str, new: str, first: Assignment, path: str) -> str:
    """Why renaming ``old`` onto ``new``, set by ``first``, is not offered."""
    return (f"`{old}` is the old name of `{new}`, deprecated and removed in Celery 6; `{new}` is already set at "
            f"{where(first, path)}, so no rename is offered (it would set `{new}` twice and change which value "
            "wins, or repeat a keyword): delete one of them")


def settings_readers(m: Model) -> dict[str, str]:
    """Old-looking names the project reads from Django's settings itself
    (``settings.CELERY_QUEUES``), each with the first file that does."""
    out = m.__dict__.get("_cl109_settings_readers")
    if out is None:
        out = m.__dict__["_cl109_settings_readers"] = {}
        for f in m.project.of_kind(CONF_READ):
            for name in f.get("settings", ()):
                out.setdefault(name, f["path"])
    return out


def _celerys(source: Source, name: str) -> bool:
    """Whether an old name of ``source`` is Celery's to rename: in Django
    settings read under a namespace, only one with Celery's prefix
    (``CELERY_``, ``CELERYD_``, ``BROKER_``); ``S3_REGION`` or ``EMAIL_HOST``
    there is most likely the project's own setting."""
    return not (source.django and source.namespace) or name.startswith(("CELERY", "BROKER"))


def source_fix(m: Model, source: Source, t: Table, kept: Container[str] = ()) -> TextFix | None:
    """Rename every old name of the source at once (but those ``kept``), so
    no mix results; none when one of them cannot be renamed where it is
    written, two old names would become one new name, or the project reads
    one of them from its settings (its readers would break)."""
    olds = [a for a in source.assignments if t.is_old(a.name, source.namespace) and _celerys(source, a.name)
            and not duplicate(source, a, t) and a.name not in kept]
    if not olds or len({a.path for a in olds}) != 1:
        return None
    if source.django and any(a.name in settings_readers(m) for a in olds):
        return None
    renames = {a.name: t.renamed(a.name, source.namespace) for a in olds}
    if len(set(renames.values())) != len(renames):
        return None
    if any(_read_where_set(m, a) for a in olds):
        return None  # renaming the assignment alone would leave a name the file reads undefined
    edits = [rename_edit(m, a, renames[a.name]) for a in olds]
    if None in edits:
        return None
    edits = tuple(sorted(edits))
    # under a namespace, Celery before 5.7 ignores old names: the rename switches them on there
    safe = not source.namespace and not _referenced_elsewhere(m, set(renames), olds)
    shown = ", ".join(f"`{o}` -> `{n}`" for o, n in sorted(renames.items()))
    return TextFix(f"rename {shown}", edits, safe, olds[0].path)


class DeprecatedSettingName(ConfigRule):
    """
    ## What it does
    Finds old upper-case setting names (`CELERYD_PREFETCH_MULTIPLIER`,
    `CELERY_ACKS_LATE`, `BROKER_URL`) in a Celery settings source, using the
    old-to-new mapping of Celery's newest release (`celery.app.defaults`, shipped with celerylint). Under
    `namespace="CELERY"`, the new spelling is `CELERY_` plus the upper-case
    new name (`CELERY_WORKER_PREFETCH_MULTIPLIER`). An old name the project
    hands to Celery itself (`app.conf.task_routes = settings.CELERY_ROUTES`)
    is its own variable, and is left alone: Celery never reads it by that
    name, and a rename would break the line that does.

    A project whose dependency files pin Celery below 4 (`celery==3.1.25`
    in `requirements.txt`, `Pipfile`, `pyproject.toml`, `setup.cfg` or
    `setup.py`) is not judged: Celery 3's names are its names.

    In Django settings read under a namespace, only old names with
    Celery's prefix (`CELERY_`, `CELERYD_`, `BROKER_`) are reported: an
    unprefixed one (`S3_REGION`, `EMAIL_HOST`, Celery 3's names of
    settings every Django project has) is the project's own.

    ## Why is this bad?
    The old names are deprecated and scheduled for removal in Celery 6.0:
    they will stop working without an error, like a misspelt setting. A
    source that gains one new name besides old ones makes Celery refuse to
    start (CL108).

    ## Example
    ```python
    # celeryconfig.py
    CELERYD_PREFETCH_MULTIPLIER = 1
    CELERY_ACKS_LATE = True
    ```

    Use instead:
    ```python
    # celeryconfig.py
    worker_prefetch_multiplier = 1
    task_acks_late = True
    ```

    ## Fix safety
    The fix renames every old name of the source at once, so no mix
    results; it is offered on the source's first old name (the others say
    so in their hint), so one rename is counted and applied once. It is safe when no other code refers to the old names,
    and unsafe otherwise, and always unsafe under a namespace
    (`namespace="CELERY"`): Celery 5.7 reads old names there, earlier
    releases ignore them (`CELERY_QUEUES` is not `task_queues` on 5.5), so
    the rename makes a setting take effect that never did; when the project reads an old name from its Django settings itself
    (`settings.CELERY_QUEUES`, perhaps its own variable that happens to share an old name) there is
    no fix, and the hint names the file that reads it. Each new
    name is written as the old one was: a string key keeps its quotes, a
    keyword stays a keyword, an assignment target stays a name. There is no
    fix when a name is not written plainly (a constant used as a key, a
    concatenation), nor when the file that sets an old name also reads it
    (`result_backend = BROKER_URL`: renaming the assignment alone would
    leave the read undefined), nor for an old name whose new name is already set in
    the same call, dict, module or app configuration: the rename would
    repeat a keyword (a `SyntaxError`) or change which value wins, so the
    finding says where the new name is set and one of them should go. Django
    settings loaded without a namespace get no fix: lower-case names are
    invisible to Django, so the namespace must be added first (CL110).

    ## References
    - [Celery: new lowercase settings](https://docs.celeryq.dev/en/stable/userguide/configuration.html#new-lowercase-settings)
    - [Celery: `celery upgrade settings`](https://docs.celeryq.dev/en/stable/history/whatsnew-4.0.html#lowercase-setting-names)
    """

    CODE = "CL109"
    NAME = "deprecated-setting-name"
    SEVERITY = "warning"
    SUMMARY = "An old upper-case setting name, deprecated and removed in Celery 6"
    FIX = "sometimes"
    HINT = "load Django settings with namespace=\"CELERY\" and use CELERY_<NEW_NAME>"
    TAGS = ("configuration",)

    VALID = (
        # an old name without Celery's prefix in namespaced Django settings (project-koku's
        # AWS region): the project's own setting, which its code reads
        Valid(django_project("""
            CELERY_BROKER_URL = "redis://localhost:6379/0"
            S3_REGION = "us-east-1"
            EMAIL_HOST = "smtp.example.com"
        """)),
        # the old name is the project's variable, which the new name reads:
        # the namespaced name is the setting (codalab/codabench's shape)
        Valid(django_project("""
            import os
            from urllib.parse import urlsplit
            BROKER_URL = os.environ.get("BROKER_URL")
            CELERY_BROKER_URL = BROKER_URL
            RABBIT_HOST = urlsplit(BROKER_URL).hostname
        """)),
        # the project copies its old-named setting into the app itself
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            from django.conf import settings
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            app.conf.task_routes = settings.CELERY_ROUTES
            # file: proj/settings.py
            CELERY_BROKER_URL = "redis://redis:6379/0"
            CELERY_ROUTES = {"proj.tasks.spawn": {"queue": "spawn"}}
        """),
        Valid("""
            # file: celeryconfig.py
            worker_prefetch_multiplier = 1
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            # file: proj/settings.py
            CELERY_WORKER_PREFETCH_MULTIPLIER = 1
            CELERY_RESULT_BACKEND = "redis://"
            CELERY_TIMEZONE = "UTC"
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.update(worker_prefetch_multiplier=1)
        """),
        Valid("""
            # file: settings.py
            CELERYD_PREFETCH_MULTIPLIER = 1
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object(get_config())
            # file: celeryconf_helpers.py
            CELERYD_PREFETCH_MULTIPLIER = 1
        """),
    )
    INVALID = (
        # the project reads the old name from its settings itself (courtlistener's own
        # ``CELERY_QUEUES``, a tuple of queue names): no rename, which would break its readers
        Invalid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            import os
            from celery import Celery
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            # file: proj/settings.py
            CELERY_BROKER_URL = "redis://localhost:6379/0"
            CELERY_QUEUES = ("batch0", "batch1")
            # file: proj/stats.py
            from django.conf import settings
            def lengths(client):
                return {q: client.llen(q) for q in settings.CELERY_QUEUES}
        """, fixed=None, message="`CELERY_QUEUES` is the old name of `CELERY_TASK_QUEUES`"),
        # the old name in a string (an environment variable's) is no read of it
        Invalid(django_project("""
            import os
            CELERY_WORKER_MAX_TASKS_PER_CHILD = 100
            CELERYD_MAX_TASKS_PER_CHILD = int(os.environ.get("CELERYD_MAX_TASKS_PER_CHILD", 500))
        """), fixed=None, message="`CELERY_WORKER_MAX_TASKS_PER_CHILD` is already set"),
        # a name the module reads too: renaming the assignment alone would
        # leave the read undefined, so there is no fix
        Invalid("""
            # file: celeryconfig.py
            BROKER_URL = "redis://localhost:6379/0"
            result_backend = BROKER_URL
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
        """, fixed=None, count=1, message="`BROKER_URL` is the old name of `broker_url`"),
        # a ``celeryconfig`` module the Django settings star-import is Django
        # settings: reported once, as such, never renamed to lower case
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/celery.py
            import os
            from celery import Celery
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings.base")
            app = Celery("proj")
            app.config_from_object("django.conf:settings")
            # file: proj/settings/__init__.py
            # file: proj/settings/base.py
            SECRET_KEY = "x"
            from .celeryconfig import *
            # file: proj/settings/celeryconfig.py
            BROKER_URL = "amqp://guest@rabbit:5672"
            """,
            fixed=None, count=1,
            message="`namespace=\"CELERY\"` and call it `CELERY_BROKER_URL`",
        ),
        # Django settings read without a namespace: old names, one of which
        # keeps its spelling once the namespace is added
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings")
            # file: proj/settings.py
            CELERY_RESULT_BACKEND = "redis://localhost/1"
            """,
            fixed=None,
            message="`namespace=\"CELERY\"`, under which it keeps its name",
        ),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings")
            # file: proj/settings.py
            BROKER_URL = "redis://localhost"
            """,
            fixed=None,
            message="`namespace=\"CELERY\"` and call it `CELERY_BROKER_URL`",
        ),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            # file: proj/settings.py
            CELERY_TASK_SEND_SENT_EVENT = True
            CELERY_SEND_TASK_SENT_EVENT = True
            """,
            fixed=None,
        ),
        Invalid(
            """
            # file: celeryconfig.py
            CELERYD_PREFETCH_MULTIPLIER = 1
            CELERY_ACKS_LATE = True
            BROKER_URL = "redis://localhost"
            """,
            fixed="""
            # file: celeryconfig.py
            worker_prefetch_multiplier = 1
            task_acks_late = True
            broker_url = "redis://localhost"
            """,
            count=3,
        ),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            # file: proj/settings.py
            CELERY_TASK_ACKS_LATE = True
            CELERYD_PREFETCH_MULTIPLIER = 1
            """,
            fixed="""
            # file: proj/settings.py
            CELERY_TASK_ACKS_LATE = True
            CELERY_WORKER_PREFETCH_MULTIPLIER = 1
            """,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery as C
            app = C("proj")
            app.conf.CELERYD_PREFETCH_MULTIPLIER = 1
            """,
            fixed="""
            # file: proj.py
            from celery import Celery as C
            app = C("proj")
            app.conf.worker_prefetch_multiplier = 1
            """,
        ),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings")
            # file: proj/settings.py
            CELERY_ALWAYS_EAGER = False
            """,
            fixed=None,
        ),
        Invalid(
            """
            # file: celeryconfig.py
            CELERYD_PREFETCH_MULTIPLIER = 1
            # file: proj/__init__.py
            # file: proj/tasks.py
            from celeryconfig import CELERYD_PREFETCH_MULTIPLIER
            """,
            fixed="""
            # file: celeryconfig.py
            worker_prefetch_multiplier = 1
            """,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object({'BROKER_URL': 'amqp://h', 'CELERY_RESULT_BACKEND': 'amqp://'})
            """,
            fixed="""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object({'broker_url': 'amqp://h', 'result_backend': 'amqp://'})
            """,
            count=2,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.update({r'''BROKER_URL''': "redis://"})
            """,
            fixed="""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.update({r'''broker_url''': "redis://"})
            """,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            BROKER = "BROKER_URL"
            app = Celery("proj")
            app.config_from_object({BROKER: "redis://", "CELERY_RESULT_BACKEND": "redis://"})
            """,
            fixed=None,
            count=2,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.update(CELERYD_PREFETCH_MULTIPLIER=1, worker_prefetch_multiplier=4)
            """,
            fixed=None,
            message="`worker_prefetch_multiplier` is already set at line 3, so no rename is offered",
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.update({"CELERYD_PREFETCH_MULTIPLIER": 1, "worker_prefetch_multiplier": 4})
            """,
            fixed=None,
            message="`worker_prefetch_multiplier` is already set at line 3",
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object({"CELERY_ACKS_LATE": True, "task_acks_late": False, "BROKER_URL": "redis://"})
            """,
            fixed="""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object({"CELERY_ACKS_LATE": True, "task_acks_late": False, "broker_url": "redis://"})
            """,
            count=2,
        ),
        Invalid(
            """
            # file: celeryconfig.py
            CELERY_ACKS_LATE = x
            task_acks_late = y
            """,
            fixed=None,
            message="`task_acks_late` is already set at line 2, so no rename is offered",
        ),
    )

    def check_model(self, m: Model):
        return unless_below_4(m, self._findings(m))  # Celery 3's names are the project's (celery_version.py)

    def _findings(self, m: Model):
        t = table()
        # names the project hands to Celery itself (``app.conf.task_routes = settings.CELERY_ROUTES``):
        # its own variables, which a rename would break
        read_back = {n for f in m.project.of_kind(CONF_READ) for n in f.get("copied", ())}
        for app in m.relevant_apps():
            for assigned in app.preconf.values():
                for a in assigned:
                    if not t.is_old(a.name, None) or a.name in read_back:
                        continue
                    new = t.to_new[a.name]
                    first = already_set(app.preconf, new, a)
                    if first is not None:
                        yield self.at(taken(a.name, new, first, a.path), a.path, a.pos)
                        continue
                    edit = rename_edit(m, a, new)
                    fix = TextFix(f"rename `{a.name}` to `{new}`", (edit,), True, a.path) if edit else None
                    yield self.at(f"`{a.name}` is the old name of `{new}`, deprecated and removed in Celery 6",
                                  a.path, a.pos, fix)
        for source in sources(m):
            if source.namespace and not source.namespace.isupper():
                continue
            fix = None if source.django and not source.namespace else source_fix(m, source, t, read_back)
            first: Assignment | None = None
            for a in source.assignments:
                if (source.django and not a.name.isupper()) or not t.is_old(a.name, source.namespace) \
                        or a.name in read_back or not _celerys(source, a.name):
                    continue
                if source.django and not source.namespace:
                    spelled = f"CELERY_{t.to_new[a.name].upper()}"
                    then = (", under which it keeps its name" if spelled == a.name else f" and call it `{spelled}`")
                    yield self.at(f"`{a.name}` is an old setting name, deprecated and removed in Celery 6: load the "
                                  f"Django settings with `namespace=\"CELERY\"`{then}", a.path, a.pos)
                    continue
                new = t.renamed(a.name, source.namespace)
                existing = duplicate(source, a, t)
                if existing is not None:
                    if not _read_where_set(m, a):  # else the project's variable, which the new name may read
                        yield self.at(taken(a.name, new, existing, a.path), a.path, a.pos)
                    continue
                message = f"`{a.name}` is the old name of `{new}`, deprecated and removed in Celery 6"
                if source.namespace:
                    message += (f" (Celery before 5.7 ignores it under `namespace=\"{source.namespace}\"`: "
                                "renaming it makes those versions apply it)")
                if first is None or fix is None:
                    first = a
                    found = self.at(message, a.path, a.pos, fix)
                    if fix is None:  # the rule's hint is about Django settings without a namespace
                        reader = settings_readers(m).get(a.name) if source.django else None
                        if reader is not None:
                            hint = (f"the project reads `settings.{a.name}` itself ({reader}): rename it to `{new}` "
                                    "there too, or, if it is the project's own variable, give it a name Celery "
                                    "does not read")
                        else:
                            where_read = " where it is set and where this file reads it" if _read_where_set(m, a) else ""
                            hint = f"rename `{a.name}` to `{new}`{where_read}"
                        found = replace(found, hint=hint)
                    yield found
                else:
                    yield replace(self.at(message, a.path, a.pos), hint=(
                        f"renamed by the fix of `{first.name}` (line {first.line}), which renames every old "
                        "name of this source at once"))
