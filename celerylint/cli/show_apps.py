"""``--show-apps``: every Celery app celerylint found, where its configuration
comes from, and the value and origin of each setting the rules read.

The JSON form is a stable interface (fields are only added): see
docs/show-apps.md.  URLs are shown with their passwords
masked.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from ..domain.celeryconf.model import App, Model, runs_eagerly
from ..domain.celeryconf.profiles import missing_profiles
from ..domain.celeryconf.settings import Resolved
from ..domain.celeryconf.values import NULL, plain
from ..domain.celeryconf.worker_cli import commands_for, env_overrides
from ..domain.deploy.model import deployment, processes_for, worker_apps
from ..domain.deploy.rabbitmq import effective
from ..domain.deploy.routes import routed_queues
from ..reporters.secrets import masked

# The settings the configuration rules read, in the order they are shown.
SHOWN = (
    "broker_url", "result_backend", "task_acks_late", "task_reject_on_worker_lost",
    "worker_prefetch_multiplier", "broker_transport_options", "task_time_limit", "task_soft_time_limit",
    "task_serializer", "result_serializer", "accept_content", "result_expires", "task_always_eager",
    "beat_schedule",
)


def mask(text: str) -> str:
    """``redis://user:secret@host`` as ``redis://user:***@host`` (the whole
    password, up to the authority's last ``@``)."""
    return masked(text, "***")


class _Unknown:
    """An item of a dict setting celerylint cannot read: ``null`` in JSON,
    ``<unknown>`` in text (never ``None``, which a literal ``None`` shows)."""

    def __repr__(self) -> str:
        return "<unknown>"

    def __deepcopy__(self, memo) -> _Unknown:  # one sentinel, which ``_unknown_as_null`` knows
        return self


UNKNOWN_ITEM = _Unknown()


def _value(value: Any) -> Any:
    """A setting's value as JSON data, passwords masked."""
    if value is NULL:
        return None
    if value is UNKNOWN_ITEM:
        return value
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, dict):
        return {str(k): _value(_decoded(v)) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_value(v) for v in value]
    return mask(repr(value))


_ENCODED = ({"const"}, {"env", "default"}, {"dict"}, {"call", "args", "kwargs", "item"})


def _decoded(value: Any) -> Any:
    """The items of a dict setting keep the model's encoding
    (``{"const": 9000}``): shown as the values they stand for (an unknown
    one, held as ``None``, as ``UNKNOWN_ITEM``)."""
    if value is None:
        return UNKNOWN_ITEM
    if isinstance(value, dict) and set(value) in _ENCODED:
        shown = plain(value)[0]
        return UNKNOWN_ITEM if shown is None else shown
    return value


# A value longer than this is cut in the text output (a beat schedule can be
# kilobytes on one line); ``--format json`` keeps it whole.
_TEXT_WIDTH = 160


def _shown(value: Any) -> str:
    text = repr(value)
    if len(text) <= _TEXT_WIDTH:
        return text
    return f"{text[:_TEXT_WIDTH]}... ({len(text):,} characters; --format json shows all)"


def _setting(resolved: Resolved) -> dict[str, Any]:
    out: dict[str, Any] = {"state": resolved.state, "value": _value(resolved.value) if not resolved.is_unknown else None}
    if resolved.env:
        out["env"] = resolved.env
    if resolved.at is not None:
        out["path"], out["line"] = resolved.at.path, resolved.at.line
    if resolved.values is not None:
        out["values"] = [_value(v) for v in resolved.values]  # one of these (if/else branches)
    return out


def _kind(app: App, listed: App, configured: list[App], workers: list[App]) -> str:
    """``listed``: the app as first listed, ``app``: its copy for one settings profile."""
    if listed.send_only:
        return "send-only"
    if runs_eagerly(app):
        return "eager"
    if listed in configured and listed not in workers:
        return "beat"
    return "worker" if listed in configured or runs_eagerly(listed) else "client"


def _sources(app: App) -> list[dict[str, Any]]:
    """Celery's precedence: the app's own (constructor, ``app.conf``), then
    the ``config_from_object`` source, then Celery's defaults."""
    out: list[dict[str, Any]] = [{"kind": "app", "description": "Celery(...) keywords and app.conf"}]
    if app.config is not None:
        entry: dict[str, Any] = {"kind": "config_from_object", "target": _value(app.config.get("target")),
                                 "path": app.config["path"], "line": app.config["line"]}
        if app.source is not None:
            entry.update(kind=_source_kind(app), module=app.source.module,
                         namespace=app.source.namespace, files=list(app.source.files))
            if app.source.open:
                entry["unknown"] = app.source.open
        else:
            entry["unknown"] = app.source_problem or "the module is not among the linted files"
        out.append(entry)
    out.append({"kind": "defaults", "description": "Celery's defaults"})
    return out


def _every_profile(m: Model, app: App) -> list[tuple[App, dict[str, Any] | None]]:
    """The app once per settings profile found (checked by the rules or
    not), or once when it has none."""
    import copy

    if len(app.profiles) <= 1 and not app.profile:
        return [(app, app.profiles[0] if app.profiles else None)]
    out = []
    for p in app.profiles:
        clone = copy.copy(app)
        clone.source = m.source(p["module"], True, app.source.namespace if app.source else app.namespace, p.get("class"))
        clone.profile = p["name"]
        out.append((clone, p))
    return out


def _source_kind(app: App) -> str:
    if app.source.django:
        return "django"
    return getattr(app.source, "shape", None) or "module"  # dict | class (domain/celeryconf/shapes.py)


def _launch(m: Model, app: App) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The worker command lines that may start the app, and the environment
    overrides of its broker and result backend (launch files)."""
    workers = [{"path": c.path, "line": c.line, "app": c.app, "options": dict(c.options)} for c in commands_for(m, app)]
    env = [{"path": e.path, "line": e.line, "name": e.name, "setting": e.setting, "value": mask(e.value)}
           for e in env_overrides(m)]
    return workers, env


PROCESS_OPTIONS = ("pool", "concurrency", "autoscale", "queues", "exclude_queues", "prefetch_multiplier",
                   "optimization", "max_tasks_per_child", "max_memory_per_child", "time_limit", "soft_time_limit")


def _processes(m: Model, app: App) -> list[dict[str, Any]]:
    """The worker and beat processes that start the app (domain/deploy)."""
    out = []
    for p in processes_for(m, app):
        entry: dict[str, Any] = {"role": p.role, "name": p.name, "kind": p.kind, "path": p.path, "line": p.line,
                                 "app": p.command.app, "replicas": p.replicas, "nodes": p.command.nodes,
                                 "options": {k: p.command.options[k] for k in PROCESS_OPTIONS if k in p.command.options}}
        if p.via:
            entry["via"] = p.via
        if p.conditional:
            entry["conditional"] = True
        out.append(entry)
    return out


def _rabbitmq(m: Model) -> dict[str, Any]:
    timeouts = deployment(m).consumer_timeouts
    ms, where = effective(timeouts)
    return {"consumer_timeout_ms": ms, "source": where or None,
            "read": [{"path": t.path, "line": t.line, "ms": t.ms} for t in timeouts]}


def describe(m: Model) -> dict[str, Any]:
    configured, runners = m.configured_apps(), worker_apps(m)
    apps = []
    done: set[tuple[str, Any]] = set()
    for listed in m.relevant_apps():
        if (listed.path, listed.pos) in done:
            continue  # the other profiles of an app already shown
        done.add((listed.path, listed.pos))
        workers, env = _launch(m, listed)
        missing = missing_profiles(m, listed)
        for app, profile in _every_profile(m, listed):
            line, col = app.pos[0], app.pos[1]
            apps.append({
                "path": app.path, "line": line, "column": col + 1, "variable": app.var, "main": app.main,
                "kind": _kind(app, listed, configured, runners), "profile": profile, "missing_profiles": missing,
                "sources": _sources(app),
                "unknown": list(app.open), "notes": list(app.notes),
                "settings": {name: _setting(app.get(name)) for name in SHOWN},
                "worker_command_lines": workers, "environment_overrides": env,
                "processes": _processes(m, listed), "routed_queues": sorted(routed_queues(m, app)),
            })
    return {"apps": apps, "rabbitmq": _rabbitmq(m), "notices": list(deployment(m).notices)}


def as_json(described: dict[str, Any]) -> str:
    return json.dumps(described, indent=2, sort_keys=False, default=_unknown_as_null) + "\n"


def _unknown_as_null(value: Any) -> None:
    if value is UNKNOWN_ITEM:
        return None
    raise TypeError(f"not JSON data: {value!r}")


def defined_in(apps: list[dict[str, Any]], paths: list, root) -> list[dict[str, Any]]:
    """The ``apps`` (of ``describe``, paths relative to ``root``) defined
    under one of ``paths``; all of them when none is."""
    import os

    tops = [os.path.abspath(p) for p in paths]
    under = [a for a in apps
             if any(os.path.join(str(root), a["path"]) == t or os.path.join(str(root), a["path"]).startswith(
                 t.rstrip(os.sep) + os.sep) for t in tops)]
    return under or apps


def moved(described: dict[str, Any], move) -> dict[str, Any]:
    """``described`` with the project's paths passed through ``move``: to
    the working directory for the text (reporters/sources.py ``mover``),
    to the report root for JSON, as the findings' paths are."""
    import copy

    out = copy.deepcopy(described)
    for app in out["apps"]:
        items = [app, *app["settings"].values(), *app["worker_command_lines"], *app["environment_overrides"],
                 *app["processes"], *app["sources"]]
        for item in items:
            if isinstance(item.get("path"), str):
                item["path"] = move(item["path"])
            if "files" in item:
                item["files"] = [move(f) for f in item["files"]]
            if "via" in item:
                path, _, line = item["via"].rpartition(":")
                item["via"] = f"{move(path)}:{line}" if path else move(line)
        for profile in [app["profile"] or {}, *app["missing_profiles"]]:
            if "named_by" in profile:
                profile["named_by"] = [move(f) for f in profile["named_by"]]
            if isinstance(profile.get("path"), str):
                profile["path"] = move(profile["path"])
            if profile.get("why", "").startswith("copied to "):
                copied, _, dockerfile = profile["why"].rpartition(" by ")
                profile["why"] = f"{copied} by {move(dockerfile)}"
    rabbitmq = out.get("rabbitmq") or {"read": []}
    for item in rabbitmq["read"]:
        item["path"] = move(item["path"])
    if rabbitmq["read"] and rabbitmq.get("source"):
        path, _, line = rabbitmq["source"].rpartition(":")
        rabbitmq["source"] = f"{move(path)}:{line}"
    return out


def as_text(described: dict[str, Any]) -> str:
    if not described["apps"]:
        return "No Celery app found.\n"
    lines: list[str] = []
    for app in described["apps"]:
        main = f' ("{app["main"]}")' if app["main"] else ""
        lines.append(f"{app['path']}:{app['line']}:{app['column']}: `{app['variable']}`{main}, {app['kind']} app")
        profile = app.get("profile")
        if profile:
            checked = "checked" if profile["checked"] else (
                "not checked (a test, CI, development or local profile, or not in `settings-profiles`)")
            variable = "DJANGO_SETTINGS_MODULE" + ("/DJANGO_CONFIGURATION" if profile.get("class") else "")
            named = f"; {variable} in {', '.join(profile['named_by'])}" if profile.get("named_by") else ""
            copied = f", {profile['why']}" if profile["why"].startswith("copied to ") else ""
            lines.append(f"  settings profile: {profile['name']} ({profile['path']}{copied}), {checked}{named}")
        for missing in app["missing_profiles"]:
            lines.append(f"  settings profile: {missing['name']}, {missing['why']}: unknown, not checked; "
                         f"DJANGO_SETTINGS_MODULE in {', '.join(missing['named_by'])}")
        for source in app["sources"]:
            lines.append(f"  source: {_source_text(source)}")
        for why in app["unknown"]:
            lines.append(f"  unknown: {why}")
        for note in app["notes"]:
            lines.append(f"  note: {note}")
        width = max(len(n) for n in app["settings"])
        for name, s in app["settings"].items():
            shown = "unknown" if s["state"] == "unknown" else _shown(s["value"])
            if "values" in s:
                shown += " (one of " + ", ".join(_shown(v) for v in s["values"]) + ")"
            if s["state"] == "default":
                shown = f"default ({shown})"
            where = f"  {s['path']}:{s['line']}" if "path" in s else ""
            env = f"  (default of ${s['env']})" if "env" in s else ""
            lines.append(f"  {name:<{width}}  {shown}{env}{where}")
        for c in app["worker_command_lines"]:
            options = " ".join(f"{k}={v}" for k, v in c["options"].items()) or "no options read"
            lines.append(f"  worker command line: {c['path']}:{c['line']}: -A {c['app'] or '(none)'}: {options}")
        for e in app["environment_overrides"]:
            lines.append(f"  environment: {e['path']}:{e['line']}: {e['name']}={e['value']} (overrides {e['setting']})")
        for p in app["processes"]:
            lines.append(f"  {_process_text(p)}")
        if app["routed_queues"]:
            lines.append(f"  routed queues: {', '.join(app['routed_queues'])}")
        lines.append("")
    return "\n".join(lines)


def _process_text(p: dict[str, Any]) -> str:
    replicas = "replicas unknown" if p["replicas"] is None else f"replicas {p['replicas']}"
    if p["nodes"] != 1:
        replicas += f", {p['nodes'] or 'unknown'} nodes"
    options = " ".join(f"{k}={v}" for k, v in p["options"].items()) or "no options"
    via = f" (command line at {p['via']})" if "via" in p else ""
    conditional = ", one branch of a script" if p.get("conditional") else ""
    return f"{p['role']} process: {p['kind']} `{p['name']}` {p['path']}:{p['line']}{via}: {replicas}{conditional}: {options}"


def _source_text(source: dict[str, Any]) -> str:
    if source["kind"] in ("app", "defaults"):
        return source["description"]
    if source["kind"] == "config_from_object":
        target = "an expression celerylint cannot read" if source["target"] is None else repr(source["target"])
        text = f"config_from_object({target}) at {source['path']}:{source['line']}"
    else:
        what = {"django": "Django settings", "class": "configuration class"}.get(source["kind"], "module")
        namespace = f", namespace {source['namespace']!r}" if source.get("namespace") else ""
        text = f"{what} `{source['module']}`{namespace}: {', '.join(source['files'])}"
        if source["kind"] == "dict":
            text = f"the {source['module']}{namespace}"
    if "unknown" in source:
        text += f" (unknown: {source['unknown']})"
    return text
