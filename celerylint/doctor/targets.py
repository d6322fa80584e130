"""Which brokers to check, from the project's own configuration: each app's
``broker_url`` (where it is set) and its visibility timeout and key layout.
The files are read with the normal per-file phase (no cache, nothing
written) and the configuration model of the CL1xx rules; nothing linted
is imported or run."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

DEFAULT_VISIBILITY = 3600  # kombu's Redis Channel.visibility_timeout

# The settings ``--workers`` and the RabbitMQ checks compare with what the
# broker and the running workers report
WATCHED = ("task_acks_late", "task_reject_on_worker_lost", "worker_prefetch_multiplier", "worker_pool",
           "worker_concurrency", "task_time_limit", "task_soft_time_limit", "task_default_queue", "control_exchange")


@dataclass
class Where:
    path: str
    line: int
    col: int
    end_line: int
    end_col: int


@dataclass
class AppBroker:
    """What the doctor needs to know about one app."""

    app: str  # module:variable
    url: str | None  # None: not a literal (unknown, or amqp's default)
    where: Where | None  # the assignment of broker_url
    visibility_timeout: float | None  # None: unknown
    explicit_timeout: bool
    transport_options: dict = field(default_factory=dict)
    env: str | None = None  # the environment variable the URL is the default of
    state: str = "set"  # of broker_url: set | default (kombu's amqp) | unknown
    # of each WATCHED setting celerylint can read: (value, where it was read)
    static: dict[str, tuple[object, str]] = field(default_factory=dict)


def watched(app) -> dict[str, tuple[object, str]]:
    """The WATCHED settings of ``app`` whose value is known, with where
    each was read (``path:line``, or Celery's default)."""
    from ..domain.celeryconf.values import NULL

    out = {}
    for name in WATCHED:
        r = app.get(name)
        if r.is_unknown:
            continue
        value = None if r.value is NULL else r.value
        where = f"{r.at.path}:{r.at.line}" if r.is_set and r.at is not None else "Celery's default"
        if r.is_set and r.env:
            where += f" (the default of ${r.env})"
        out[name] = (value, where)
    return out


def app_brokers(paths: list[Path], settings, notices: list[str], files: list | None = None) -> list[AppBroker]:
    """Each app's broker; ``files`` gets the Python files read."""
    from ..run.discovery import discover
    from ..domain.celeryconf.model import model
    from ..domain.celeryconf.values import number
    from ..run.linter import Linter, lint_files
    from ..run.project import Project

    settings = replace(settings, select=("CL104",), ignore=())  # a project rule: its fact collectors run
    linter = Linter(settings, None)
    found = discover(paths, settings)
    python = found.python
    if files is not None:
        files.extend(python)
    results = lint_files(python, linter, 1, notices)
    project = Project(settings=settings, facts=[f for r in results.values() for f in r.facts],
                      python_files=tuple(r.path for r in results.values()))
    m = model(project)
    out = []
    for app in m.relevant_apps():
        if app.send_only:
            continue
        broker = app.get("broker_url")
        url = broker.value if broker.is_set and isinstance(broker.value, str) else None
        where = None
        if broker.at is not None:
            line, col, end_line, end_col = broker.at.value_pos or broker.at.pos
            where = Where(broker.at.path, line, col, end_line, end_col)
        options = app.get("broker_transport_options")
        timeout, explicit, opts = None, False, {}
        if not options.is_unknown and isinstance(options.value, dict):
            opts = options.value
            explicit = "visibility_timeout" in opts
            timeout = number(opts.get("visibility_timeout", DEFAULT_VISIBILITY))
        elif options.is_default:
            timeout = DEFAULT_VISIBILITY
        env = broker.env
        if env and os.environ.get(env):  # the process Celery runs in would read it; so do we
            url = os.environ[env]
        static = watched(app)
        if url and url.split("://", 1)[0].lower() in ("amqp", "amqps", "pyamqp", "librabbitmq"):
            static.update(_consumer_timeout(m))
            from ..domain.unacked import longest_duration

            held = longest_duration(m, app)  # a countdown/eta anywhere, or a time limit under acks_late
            if held is not None:
                static["longest_unacked"] = held
        out.append(AppBroker(app.key, url, where, timeout, explicit, opts, env, broker.state, static))
    return out


def _consumer_timeout(m) -> dict[str, tuple[object, str]]:
    """RabbitMQ's node-wide ``consumer_timeout`` as the project's deployment
    files set it (CL124's reading: rabbitmq.conf, advanced.config,
    ``-rabbit consumer_timeout``): ``{"consumer_timeout": (ms or None for
    off, where)}``, or nothing when no file sets one or they disagree."""
    from ..domain.deploy.model import deployment

    found = deployment(m).consumer_timeouts
    if not found or len({t.ms for t in found}) != 1:
        return {}
    first = found[0]
    return {"consumer_timeout": (first.ms, f"{first.path}:{first.line}")}
