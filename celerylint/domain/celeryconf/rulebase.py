"""What the CL1xx rules share: the model of the run, where a finding about
an app goes, and the sources whose setting names are checked."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from ...core.model import Finding, Fix
from ...api.rule import ProjectRule
from .model import App, Assignment, Model, Pos, Resolved, Source, model
from .settings import _resolved, find_all
from .settings_table import table
from .values import NULL
from .worlds import in_every_world


class ConfigRule(ProjectRule):
    def check(self, project) -> Iterable[Finding]:
        m = model(project)
        if not m.apps and not m.by_kind["setting"]:
            return []
        return in_every_world(m, self._check, self.HINT)

    def _check(self, m: Model) -> list[Finding]:
        if not any(app.profile for app in m.apps.values()):
            return list(self.check_model(m))
        return per_profile(m, self.check_model)

    def check_model(self, m: Model) -> Iterable[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError

    def at(self, message: str, path: str, pos: Pos, fix: Fix | None = None) -> Finding:
        line, col, end_line, end_col = pos
        return self.finding(message, path, line, col, end_line, end_col, fix)

    def at_app(self, app: App, message: str, fix: Fix | None = None) -> Finding:
        """A missing setting: reported where the app loads its configuration
        (``config_from_object``), else where it is created."""
        if app.profile and fix is not None and fix.path and fix.edits:
            # a settings profile: where its settings should say it (the line
            # the fix writes after), so that profiles sharing it meet there
            edit = min(fix.edits)
            line = _statement_start(app, fix.path, max(1, edit.line - 1) if edit.col == 0 else edit.line)
            return self.at(message, fix.path, (line, 0, line, 0), fix)
        if app.config is not None:
            c = app.config
            return self.at(message, c["path"], (c["line"], c["col"], c["end_line"], c["end_col"]), fix)
        return self.at(message, app.path, app.pos, fix)

    def at_assignment(self, a: Assignment, message: str, fix: Fix | None = None) -> Finding:
        return self.at(message, a.path, a.value_pos or a.pos, fix)

    def not_enabled(self, m: Model, app: App, setting: str, why: str, missing: str) -> Finding:
        """A boolean setting that should be True: at its false value (fixed in
        place unless it comes from the environment, or a comment beside it
        gives a reason the fix would contradict), or, when it is not set,
        where the app loads its configuration (fixed by adding it)."""
        value = app.get(setting)
        if value.is_set:
            explained = _commented(m, value.at)
            fix = None if value.env or value.at.alternatives or explained else value.at.fix_replacing(
                "True", f"set `{setting}` to True")
            found = self.at_assignment(value.at, f"`{setting}` is {value.shown()}: {why}", fix)
            if explained:
                found = replace(found, hint="a comment beside the value gives a reason: change it (and the comment) "
                                            "only if the reason no longer holds, or add `# noqa`")
            return found
        tried = _commented_out(m, app, setting)
        if tried is not None:  # set once and turned off again: the reason is the user's to weigh
            return replace(self.at_app(app, f"{missing}: {why}"),
                           hint=f"{tried} sets it in a line that is commented out: it was turned off on purpose; set "
                                "it only if that reason no longer holds, or add `# noqa`")
        return self.at_app(app, f"{missing}: {why}", m.fix_adding(app, setting, "True"))


def _commented(m: Model, a: Assignment) -> bool:
    """A comment ends the assignment's first line or is the line above it
    (``# Don't reject tasks ...`` then ``..._REJECT_ON_WORKER_LOST = False``)."""
    from .texts import read

    text = read(m, a.path) if a.pos else None
    if text is None:
        return False
    lines = text.splitlines()
    line = a.pos[0]
    own = lines[line - 1] if 0 < line <= len(lines) else ""
    above = lines[line - 2].strip() if 1 < line <= len(lines) + 1 else ""
    return above.startswith("#") or _trailing_comment(own)


def _commented_out(m: Model, app: App, setting: str) -> str | None:
    """``path:line`` of a comment line in the app's module or its
    configuration files that sets the setting to True, by any of its names
    (``# celery.conf.task_acks_late = True``, ``#    CELERY_TASK_ACKS_LATE=True,``)."""
    import re

    from .texts import read

    key = setting.removeprefix("task_")
    pattern = re.compile(r"^[ \t]*#[ \t]*[\w.\[\]\"']*?" + re.escape(key) + r"\W{0,2}[ \t]*[=:][ \t]*True\b",
                         re.IGNORECASE | re.MULTILINE)
    paths = [app.path, *(app.source.files if app.source is not None else ())]
    for path in dict.fromkeys(paths):
        text = read(m, path)
        found = pattern.search(text) if text else None
        if found is not None:
            return f"{path}:{text.count(chr(10), 0, found.start()) + 1}"
    return None


def _trailing_comment(line: str) -> bool:
    """A ``#`` outside quotes ends the line."""
    quote = None
    for ch in line:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return True
    return False


def _statement_start(app: App, path: str, line: int) -> int:
    """The first line of the setting whose value ends on ``line`` (a value
    written over several lines: the finding and its noqa comment belong
    where the statement starts); ``line`` when no setting ends there."""
    assignments = app.source.assignments if app.source is not None else ()
    starts = [a.pos[0] for a in assignments if a.path == path and a.value_pos and a.value_pos[2] == line and a.pos]
    return min(starts, default=line)


def where(app: App) -> str:
    """Words for where the app's configuration lives."""
    shape = getattr(app.source, "shape", None)  # domain/celeryconf/shapes.py
    if shape == "dict":
        # "dict at proj/celery.py:5" (written in the call), "dict `CELERY` of proj.settings" (another module's)
        return f"the dict given to `config_from_object` ({app.source.module.removeprefix('dict at ').removeprefix('dict ')})"
    if shape == "class":
        return f"configuration class `{app.source.module}`"
    if app.source is not None and app.profile:
        return "the Django settings"  # the profile is named at the end of the message (per_profile)
    if app.source is not None:
        return f"{'Django settings' if app.source.django else 'configuration module'} `{app.source.module}`"
    return f"the configuration of `{app.var}`"


def per_profile(m: Model, check: Callable[[Model], Iterable[Finding]]) -> list[Finding]:
    """Findings of a project with settings profiles: the apps without
    profiles once, then each checked profile with them; a finding a profile
    adds names it, and one that several profiles add at one place is
    reported once, naming them all."""
    import copy

    def run(apps: dict[str, App]) -> list[Finding]:
        v = copy.copy(m)
        v.apps = apps
        found = list(check(v))
        for key, value in v.__dict__.items():  # what a rule cached (a scan of launch files) serves every view
            if key.startswith("_") and key not in m.__dict__:
                m.__dict__[key] = value
        return found

    plain_apps = {k: a for k, a in m.apps.items() if not a.profile}
    base = run(plain_apps)
    seen = set(base)
    names = sorted({a.profile for a in m.apps.values() if a.profile})
    merged: dict[tuple, tuple[Finding, list[str]]] = {}
    for name in names:
        apps = {**plain_apps, **{k: a for k, a in m.apps.items() if a.profile == name}}
        for f in run(apps):
            if f in seen:
                continue
            key = (f.code, f.path, f.line, f.col, f.message)
            merged.setdefault(key, (f, []))[1].append(name)
    out = list(base)
    for f, profiles in merged.values():
        label = "settings profile" + ("s " if len(profiles) > 1 else " ") + ", ".join(f"`{p}`" for p in profiles)
        out.append(replace(f, message=f"{f.message} ({label})"))
    return out


def sources(m: Model) -> list[Source]:
    """Every settings source of the run: the apps' sources and
    ``celeryconfig`` modules no app is known to load, neither by name nor
    through the star imports of an app's source, in any settings profile (a
    Django settings fragment: its names are judged as the Django settings
    they are)."""
    seen: dict[tuple[str, str | None], Source] = {}
    for app in m.relevant_apps():
        if app.source is not None:
            seen.setdefault((app.source.module, app.source.namespace), app.source)
    loaded = {module for module, _ in seen}
    read = {path for app in m.every_app.values() if app.source is not None for path in app.source.files}
    for module, path in sorted(m.module_paths.items()):
        stem = module.rsplit(".", 1)[-1]
        if module not in loaded and ((stem == "celeryconfig" and path not in read)
                                     or module in m.project.settings.settings_modules):
            source = m.source(module, False, None)
            if source is not None:
                seen[(module, None)] = source
    return list(seen.values())


def tasks_opt_in(m: Model, option: str) -> bool:
    """Every task of the project sets ``option`` (or may, through a base
    class celerylint cannot read); False when there are no tasks."""
    if not m.tasks:
        return False
    for task in m.tasks:
        value, state = m.task_option(task, option)
        if state == "unset" or (state == "set" and value is not True):
            return False
    return True


def app_task_class_decides(m: Model, app: App, option: str) -> bool:
    """The app's ``task_cls`` sets ``option``, to any value, or might: a
    task class's attribute wins over the app's setting (``Task.bind`` takes
    the setting only for an attribute left ``None``), so the setting does
    not decide for the app's tasks (``acks_late = False`` with a comment
    that says why: an explicit choice, which the app's setting would not
    change)."""
    _, state = m.task_cls_option(app, option)
    return state in ("unknown", "set")


@dataclass(frozen=True)
class Configuration:
    """One configuration of the run: call it with a new-style setting name for
    its effective value; ``path`` is the file that holds it (the settings
    module the app loads, else the app's own file)."""

    get: Callable[[str], Resolved]
    path: str

    def __call__(self, name: str) -> Resolved:
        return self.get(name)


def configurations(m: Model) -> list[Configuration]:
    """Every app of the run (``App.get``), then every settings source no app
    loads (``celeryconfig``, ``settings-modules``)."""
    apps = m.relevant_apps()
    out = [Configuration(app.get, app.source.path if app.source is not None else app.path) for app in apps]
    loaded = {app.source.module for app in apps if app.source is not None}
    t = table()

    def reader(source: Source) -> Callable[[str], Resolved]:
        def get(name: str) -> Resolved:
            assigned = find_all(source, name, t)
            if assigned:
                return _resolved(assigned[-1], assigned)
            if source.open:
                return Resolved("unknown")
            default = t.defaults.get(name)
            return Resolved("default", NULL if default is None else default)

        return get

    out += [Configuration(reader(source), source.path) for source in sources(m) if source.module not in loaded]
    return out


def settings_everywhere(m: Model, name: str) -> list[tuple[Configuration, Resolved]]:
    """``(configuration, value)`` of setting ``name`` in each of
    ``configurations(m)``: the configuration reads its other settings."""
    return [(c, c(name)) for c in configurations(m)]


def assignments_once(pairs: Iterable[tuple[Any, Resolved]]) -> list[tuple[Any, Resolved]]:
    """Pairs whose value is set, each assignment once (apps sharing a
    configuration module find the same one)."""
    seen: set[tuple[str, Pos]] = set()
    out = []
    for app, resolved in pairs:
        a = resolved.at
        if not resolved.is_set or a is None or (a.path, a.pos) in seen:
            continue
        seen.add((a.path, a.pos))
        out.append((app, resolved))
    return out
