"""Facts -> Celery apps with their effective configuration and its sources.

Precedence as in Celery (celery-facts.md 2.2): constructor keywords,
``app.conf.update``/``app.conf.X``/``app.conf["X"]`` (the "preconf") win over
the ``config_from_object`` source, which wins over Celery's defaults.  A
source is a module of the linted project, followed through ``from x import
*`` chains; Django's ``django.conf:settings`` is the module named by
``DJANGO_SETTINGS_MODULE``.  Whatever celerylint cannot read makes a value
*unknown*, and rules never report an unknown value.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Container, Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

from ...facts.runtime_settings import GLOBALS_HANDED, GLOBALS_UPDATED, RUNTIME_NAMES
from ...facts.settings_helpers import HELPER_FACT
from ...core.modules import absolute_module
from .helpers import calls_resolver
from .texts import read
from .values_origin import STAR_IMPORT
from .passed_apps import resolve as resolve_passed
from .paths import SETTINGS_PATH
from .source_modules import beside, django_settings
from .profiles import class_settings, included, join_alternatives, with_profiles
from .settings import (
    ANY_NAME, DJANGO_TARGETS, App, Assignment, Pos, Resolved, Source, fact_position, find, is_test_path, union_names,
)
from .shapes import app_class_names, empty_default, is_app_class, object_source, splat
from .values import plain
from .names import resolve_names
from . import task_options

__all__ = ["App", "Assignment", "Model", "Pos", "Resolved", "Source", "find", "is_test_path", "model"]


# what makes a settings file's text worth a collector's reading after all
_CELERYISH = re.compile(r"(?i:celery|broker)|CACHES")


class Model:
    """Every app of the project and the sources they load."""

    def __init__(self, project) -> None:
        self.project = project
        self.root = Path(project.settings.root)
        facts = resolve_passed([f for f in project.facts if not is_test_path(f["path"])])
        self.by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for f in facts:
            self.by_kind[f["kind"]].append(f)
        values = {(f["path"], f["id"]): f for f in self.by_kind["setting_value"]}
        self.module_paths: dict[str, str] = {}
        self.copies: dict[str, str] = {}  # path -> the module it is copied to (``copy_of``)
        for kind in ("module_info", "star_import"):
            for f in self.by_kind[kind]:
                self.module_paths.setdefault(f["module"], f["path"])
        for f in self.by_kind["setting"]:
            if f["source"].startswith("module:"):
                self.module_paths.setdefault(f["source"][7:], f["path"])
        value = calls_resolver(self.by_kind[HELPER_FACT], self.path_of)
        self.assignments: dict[str, list[Assignment]] = defaultdict(list)  # source -> in file order
        by_id: dict[tuple[str, int], Assignment] = {}
        for f in self.by_kind["setting"]:
            a = Assignment(f["name"], value(f["value"]), f["path"], fact_position(f), fact_position(values.get((f["path"], f["id"]))),
                           f["cond"], f["via"], alt=f.get("alt"))
            by_id[(f["path"], f["id"])] = a
            self.assignments[f["source"]].append(a)
        for f in self.by_kind["setting_item"]:
            target = by_id.get((f["path"], f["id"])) if "id" in f else None
            if target is None:
                candidates = [a for a in self.assignments.get(f["source"], ()) if a.name == f["name"]]
                candidates = [a for a in candidates if a.path == f["path"]] or candidates
                target = candidates[-1] if candidates else None
            if target is None:
                continue
            item = None if f.get("cond") else value(f["value"])
            if f.get("nested"):  # ``X["a"]["b"] = v``: the item ``a`` with ``b`` set in it
                held = target.items[f["key"]][0] if f["key"] in target.items else _item_of(target.value, f["key"])
                item = _with_path(held, f["nested"], item)
            target.items[f["key"]] = (item, fact_position(f), f["literal"], f["path"])
        self.unparsable = {f["path"] for f in self.by_kind["unparsable"]}
        self.read_paths = {f["path"] for f in self.project.facts} - self.unparsable
        self.stars: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for f in self.by_kind["star_import"]:
            self.stars[f["module"]].append(f)
        self.module_info = {f["module"]: f for f in self.by_kind["module_info"]}
        self.names_read = {f["path"] for f in self.by_kind["module_info"] if f.get("names")}
        # settings the project's code sets at run time (facts/runtime_settings.py)
        self.runtime_names = frozenset(n for f in self.by_kind[RUNTIME_NAMES] for n in f["names"])
        # path -> [(line, the names set there)]: where a settings file hands
        # its globals to code that sets the registered names, or updates them
        self.globals_handed: dict[str, list[tuple[int, Container[str]]]] = defaultdict(list)
        if self.runtime_names:
            for f in self.by_kind[GLOBALS_HANDED]:
                self.globals_handed[f["path"]].append((f["line"], self.runtime_names))
        for f in self.by_kind[GLOBALS_UPDATED]:
            self.globals_handed[f["path"]].append((f["line"], ANY_NAME if f["names"] is None else frozenset(f["names"])))
        # module names differ with the linted root; module sources are matched by file
        self.by_path_assignments: dict[str, list[Assignment]] = defaultdict(list)
        for source, assigned in self.assignments.items():
            if source.startswith("module:"):
                for a in assigned:
                    self.by_path_assignments[a.path].append(a)
        self.by_path_stars: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for f in self.by_kind["star_import"]:
            self.by_path_stars[f["path"]].append(f)
        for kind in ("settings_include", "settings_export"):  # run in the module's namespace, like star imports
            for f in self.by_kind[kind]:
                self.by_path_stars[f["path"]].append(f)
        self.classes = {f"{f['module']}.{f['name']}": f for f in self.by_kind["settings_class"]}
        resolve_names(self)
        join_alternatives(self.assignments)
        self.apps = self._apps()
        self.every_app = self.apps  # a view of some apps (rulebase.per_profile) replaces ``apps`` only

    # -- modules ----------------------------------------------------------
    def python_file_set(self) -> set[str]:
        cached = getattr(self, "_python_file_set", None)
        if cached is None:
            cached = self._python_file_set = set(self.project.python_files)
        return cached

    def path_of(self, module: str) -> str | None:
        if module in self.module_paths:
            return self.module_paths[module]
        if module.startswith("."):
            return None
        suffixes = (module.replace(".", "/") + ".py", module.replace(".", "/") + "/__init__.py")
        tails = tuple("/" + s for s in suffixes)
        matches = [rel for rel in self.project.python_files if rel in suffixes or rel.endswith(tails)]
        if not matches:  # the linted root is inside the package: the module's path ends with the file's
            matches = [rel for rel in self.project.python_files if "/" in rel and any(s.endswith("/" + rel) for s in suffixes)]
        for rel in matches:
            if not is_test_path(rel):
                self.module_paths[module] = rel
                return rel
        return None

    def class_key(self, module: str, cls: str) -> str:
        """The key in ``classes`` of class ``cls`` of ``module`` as a setting
        names it: the module's file may have another name here
        (``DJANGO_SETTINGS_MODULE=proj.settings`` for ``backend/proj/settings.py``
        when ``backend/`` is a package too)."""
        qname = f"{module}.{cls}"
        if qname in self.classes:
            return qname
        path = self.path_of(module)
        return next((k for k, f in self.classes.items() if f["path"] == path and f["name"] == cls), qname)

    def source(self, module: str, django: bool, namespace: str | None, cls: str | None = None) -> Source | None:
        path = self.path_of(module)
        if path is None:
            return None
        assignments: list[Assignment] = []
        files: list[str] = []
        problems: list[str] = []
        handed: list[tuple[int, Container[str]]] = []  # where the chain hands its globals: (index into ``assignments``, names)
        self._flatten(module, assignments, files, problems, set(), handed)
        if cls is not None:  # a django-configurations class: its settings after the module's
            assignments.extend(class_settings(self, self.class_key(module, cls), files, problems))
        if django and not any(a.name.startswith(("CELERY", "BROKER")) for a in assignments):
            problems.append("no Celery setting is visible at module level of the Django settings")
        runtime = (handed[0][0], union_names(names for _, names in handed)) if handed else None
        unread = tuple(f for f in files if f not in self.names_read)
        hidden = (lambda name: self._assigned_unread(unread, name)) if unread else None
        return Source(module, path, django, namespace, assignments, problems[0] if problems else None, files, runtime,
                      hidden)

    def _assigned_unread(self, paths: tuple[str, ...], name: str) -> bool:
        """Whether one of ``paths`` (settings files read only for their Celery
        settings or star imports) has what looks like an assignment of ``name``."""

        pattern = re.compile(rf"\b{re.escape(name)}\b[ \t]*(?::[^=:\n]*)?[-+*/|]?=(?!=)")
        texts = (read(self, path) for path in paths)
        return any(text is None or pattern.search(text) for text in texts)  # a file not read may assign it

    def _flatten(self, module: str, out: list[Assignment], files: list[str], problems: list[str], seen: set[str],
                 handed: list[tuple[int, Container[str]]]) -> None:
        """The assignments of the module's file in line order, each star
        import and ``include(...)`` replaced by those of the file it runs
        (depth first, each file once), walked with a stack, not recursion:
        a chain of thousands of modules is no deeper for Python than one."""
        stack: list[tuple[str, Iterator[tuple[int, int, Any]]]] = []
        if (path := self.path_of(module)) is not None:
            self._enter(path, stack, files, problems, seen)
        while stack:
            here, items = stack[-1]
            _, kind, item = next(items, (0, None, None))
            if kind is None:
                stack.pop()
            elif kind == 1:
                out.append(item)
            elif kind == 2:  # the chain hands its globals: what is assigned before may be set again at run time
                handed.append((len(out), item))
            elif kind == 3:  # a file an ``include(...)`` runs, after the one before it
                self._enter(item, stack, files, problems, seen)
            elif item["kind"] == "settings_include":
                stack.append((here, ((0, 3, target) for target in included(self, here, item, problems))))
            elif item["kind"] == "settings_export":
                name = item["qualified"] or f"{item['module']}.{item['cls']}"
                out.extend(class_settings(self, name, files, problems))
            elif (target_path := self.path_of(target := self._star_target(here, item))) is not None:
                self._enter(target_path, stack, files, problems, seen)
            elif not item["guarded"]:
                problems.append(f"`from {target} import *` is not in the linted files")

    def _enter(self, path: str, stack: list, files: list[str], problems: list[str], seen: set[str]) -> None:
        """Read ``path`` next (once): its settings, star imports, includes, where it hands its globals."""
        if path in seen:
            return
        seen.add(path)
        unread = "does not parse" if path in self.unparsable else \
            "was not read" if path not in self.read_paths and not SETTINGS_PATH.search(path) else None
        stars = self._text_stars(path) if unread == "was not read" else None
        if unread and stars is None:
            problems.append(f"{path} {unread}, so its settings are unknown")
            return
        files.append(path)
        if stars is not None:
            stack.append((path, iter(stars)))
            return
        own = [(a.line, 1, a) for a in self.by_path_assignments.get(path, ())]
        stars = [(s["line"], 0, s) for s in self.by_path_stars.get(path, ())]
        marker = [(line, 2, names) for line, names in self.globals_handed.get(path, ())]
        stack.append((path, iter(sorted(own + stars + marker, key=lambda x: (x[0], x[1])))))

    def _text_stars(self, path: str) -> list[tuple[int, int, dict[str, Any]]] | None:
        """A file of the chain no collector read, because nothing in it looks
        like Celery's (``config/django/production.py``: ``from .base import
        *`` and ``DEBUG = False``): its star imports, read from its text;
        None when it names Celery, a broker or ``CACHES`` after all."""
        text = read(self, path)
        if text is None or _CELERYISH.search(STAR_IMPORT.sub("", text)):  # ``from .celery import *`` names a module
            return None
        parts = path[:-3].split("/") if path.endswith(".py") else []
        package = parts[:-1]  # a module's package; ``__init__.py`` is its own
        found = []
        for star in STAR_IMPORT.finditer(text):
            indent, dots, relative, absolute = star.groups()
            if dots:
                base = package[:len(package) - (len(dots) - 1)] if len(dots) - 1 <= len(package) else None
                if base is None:
                    continue
                target = ".".join([*base, *(relative.split(".") if relative else [])])
            else:
                target = absolute
            line = text.count("\n", 0, star.start()) + 1
            found.append((line, 0, {"kind": "star_import", "target": target, "guarded": bool(indent), "line": line}))
        return found

    def copy_of(self, module: str, path: str) -> None:
        """``module`` is the file ``path`` copied into place at deploy time
        (``copied_settings.copied_profiles``)."""
        self.module_paths[module] = path
        self.copies[path] = module

    def _star_target(self, path: str, item: dict[str, Any]) -> str:
        """A star import's module; in a copied file, a relative one is
        resolved from where the file is copied to."""
        if path in self.copies and item.get("level"):
            return absolute_module(self.copies[path], "", item["level"], item["name"])
        return item["target"]

    def django_settings(self, app_module: str) -> str | None:
        """The settings module of the Django app of ``app_module`` (``source_modules.py``)."""
        return django_settings(self, app_module)

    # -- apps -------------------------------------------------------------
    def _apps(self) -> dict[str, App]:
        """One app per ``module:variable`` key and file: files of different
        directories may share a module name (two ``worker.py`` outside any
        package), and their apps are different apps.  A fact of the app's own
        file configures it; a fact of another file naming a shared key could
        mean any of them, which makes their configuration unknown."""
        stmts = {(f["app"], f["path"]): f for f in self.by_kind["app_stmt"]}
        index: dict[str, dict[str, App]] = defaultdict(dict)  # key -> path -> app
        app_classes = app_class_names(self.by_kind["app_class"])
        confirmed = {(f["app"], f["path"]) for f in self.by_kind["app_confirmed"]}
        for f in self.by_kind["celery_app"]:
            key, path = f["app"], f["path"]
            if f.get("cls") and not is_app_class(f["cls"], app_classes) and (key, path) not in confirmed:
                continue  # ``x = SomeCelery()``: not a Celery subclass of the project, nor used as an app
            previous = index[key].get(path)
            app = App(key, path, f.get("var") or key.rsplit(":", 1)[1], fact_position(f), fact_position(stmts.get((key, path))))
            app.cls = f.get("cls")
            # the same name made twice in one file (two factory functions) stays one app,
            # send-only only if every one of them is
            app.send_only = bool(f.get("send_only")) and (previous is None or previous.send_only)
            app.main = f.get("main")
            index[key][path] = app
        apps = {(key if len(by_path) == 1 else f"{key}@{path}"): app
                for key, by_path in index.items() for path, app in by_path.items()}
        self._runs_no_tasks(index)

        def targets(key: str, path: str) -> list[App]:
            if key == "*":  # current_app: the one app of the project that runs workers
                workers = [a for a in apps.values() if not a.send_only]
                return workers if len(workers) == 1 else []
            if key.startswith("class:"):  # ``self.conf`` in a Celery subclass: every app made from it
                return [a for a in apps.values() if a.cls and is_app_class(a.cls, {key[6:]})]
            by_path = index.get(key)
            if not by_path:
                return []
            if len(by_path) == 1:
                return list(by_path.values())
            if path in by_path:
                return [by_path[path]]
            for app in by_path.values():
                app.open.append(f"`{key}` is configured in {path}, but several apps have that name")
            return []

        for source, assigned in self.assignments.items():
            if source.startswith("app:"):
                for a in assigned:
                    for app in targets(source[4:], a.path):
                        app.preconf[a.name].append(a)
        for f in self.by_kind["app_splat"]:
            for app in targets(f["app"], f["path"]):
                splat(self, app, f)
        for f in self.by_kind["app_open"]:
            default = empty_default(self, f.get("default_of"))
            for app in targets(f["app"], f["path"]):
                (app.notes if default else app.open).append(default or f["why"])
        for kind in ("config_source_last_arg", "config_source_namespace"):
            for f in self.by_kind[kind]:
                for app in targets(f["app"], f["path"]):
                    app.config_args[kind] = f
        for f in self.by_kind["config_source"]:
            for app in targets(f["app"], f["path"]):
                app.config = f
        for f in self.by_kind["app_namespace"]:  # ``Celery(namespace=...)``: for a source loaded without one
            for app in targets(f["app"], f["path"]):
                if app.config is not None and app.config["namespace"] is None:
                    app.config = {**app.config, "namespace": f["value"] or "?"}
        for f in self.by_kind["update_call"]:
            if f.get("cond"):  # under an ``if``, a loop, a ``try``: a setting added there may never apply
                continue
            for app in targets(f["app"], f["path"]):
                app.update_call = f
        for f in self.by_kind["conf_stmt"]:
            for app in targets(f["app"], f["path"]):
                app.conf_stmts.append(f)
        for f in self.by_kind["task_cls"]:
            for app in targets(f["app"], f["path"]):
                app.task_cls = f["value"] or "?"
        for f in self.by_kind["app_remade"]:
            for app in targets(f["app"], f["path"]):
                app.remade = f["method"]
        for app in apps.values():
            self._attach_source(app)
            if "task_cls" in app.preconf:
                app.task_cls = "?"
        return with_profiles(self, apps)

    def _attach_source(self, app: App) -> None:
        config = app.config
        if config is None:
            return
        target, namespace = config["target"], config["namespace"]
        if config.get("inline") or (target and (":" in target or target not in self.module_paths)):
            found = object_source(self, config, target, namespace, app.key.rsplit(":", 1)[0])
            if found is not None:
                app.source, app.source_problem = found
                return
        if target is None or namespace == "?":
            app.source_problem = "its configuration source cannot be read statically"
            return
        django = target in DJANGO_TARGETS
        if django:
            module = self.django_settings(app.key.rsplit(":", 1)[0])
            if module is None:
                app.source_problem = "the Django settings module is not in the linted files"
                return
        else:
            module = beside(self, target.split(":", 1)[0], app.path)
            if ":" in target:
                app.source_problem = f"`{target}` names an object celerylint does not read"
                return
        app.source = self.source(module, django, namespace)
        if app.source is None:
            app.source_problem = f"`{module}` is not in the linted files"

    # -- tasks --------------------------------------------------------------
    @cached_property
    def tasks(self) -> list[dict[str, Any]]:
        return self.by_kind["task"]

    @cached_property
    def task_classes(self) -> dict[str, dict[str, Any]]:
        return {f["cls"]: f for f in self.by_kind["task_class"]}

    def task_option(self, task: dict[str, Any], option: str) -> tuple[Any, str]:
        """``(value, state)`` of a task's own option (``task_options.py``)."""
        return task_options.task_option(self, task, option)

    def task_cls_option(self, app: App, option: str) -> tuple[Any, str]:
        """The option as the app's custom task class (``task_cls=``) sets it."""
        return task_options.task_cls_option(self, app, option)

    def fix_adding(self, app: App, name: str, value: str):
        """The fix that adds setting ``name = value`` where ``app``'s
        configuration lives (``fixes.add_setting``), or None."""
        from .fixes import add_setting

        return add_setting(self, app, name, value)

    def _runs_no_tasks(self, index: dict[str, dict[str, App]]) -> None:
        """A module-level app its module uses only to send, inspect or monitor
        (``app_runs_no_tasks``) runs no tasks when no task of the project is
        registered on it (``@app.task`` through an import) and it is not the
        one app a worker could run the project's tasks with: another app runs
        them, or the project has no task."""
        flagged = [(f["app"], f["path"]) for f in self.by_kind["app_runs_no_tasks"]]
        if not flagged:
            return
        registered = {f.get("app") for f in self.by_kind["task"]}
        candidates = [index[key][path] for key, path in flagged if path in index.get(key, {})]
        candidates = [a for a in candidates if a.key.replace(":", ".") not in registered]
        others = [a for by_path in index.values() for a in by_path.values() if not a.send_only and a not in candidates]
        if others or not self.by_kind["task"]:
            for app in candidates:
                app.send_only = True

    def relevant_apps(self) -> list[App]:
        return sorted(self.apps.values(), key=lambda a: (a.path, a.pos))

    def configured_apps(self) -> list[App]:
        """The apps worker settings are checked for (CL101-CL104): not an app
        that runs no tasks (``App.send_only``: made only to send, inspect or
        monitor), nor one whose configuration sets ``task_always_eager``
        (tasks run inline, no worker takes them from the broker: CL113 says
        so), and, when
        some app loads a configuration source, not the apps without one:
        they are clients of the same project (``Celery(broker=settings.X)``
        to send tasks)."""
        apps = [a for a in self.relevant_apps() if not a.send_only and not runs_eagerly(a)]
        with_source = [a for a in apps if a.config is not None]
        if with_source or self.every_app is self.apps:
            return with_source or apps
        # a view of the apps without settings profiles (rulebase.per_profile): they
        # are clients too when an app of a profile loads a source
        loading = (a for a in self.every_app.values() if a.config is not None and not a.send_only and not runs_eagerly(a))
        return [] if any(loading) else apps

    def one_app(self) -> bool:
        """Whether one app runs the project's tasks (``shared_task`` and
        ``@app.task`` alike): the only configured app, clients and apps that
        run no tasks aside."""
        return len(self.configured_apps()) == 1


def runs_eagerly(app: App) -> bool:
    """The app's configuration sets ``task_always_eager`` (known True)."""
    eager = app.get("task_always_eager")
    return eager.is_set and eager.value is True


def model(project) -> Model:
    """One model per project, shared by the CL1xx rules of a run."""
    cached = getattr(project, "_celery_model", None)
    if cached is None:
        cached = Model(project)
        try:
            project._celery_model = cached
        except AttributeError:
            pass
    return cached


def _item_of(encoded: Any, key: str) -> Any:
    """The encoded value of ``key`` in an encoded dict, else None (unknown)."""
    return encoded["dict"].get(key) if isinstance(encoded, dict) and isinstance(encoded.get("dict"), dict) else None


def _with_path(encoded: Any, keys: list[str], value: Any) -> Any:
    """``encoded`` (a dict) with ``value`` at the path ``keys``; unknown
    (None) where a step is not a known dict."""
    if not keys:
        return value
    if not (isinstance(encoded, dict) and isinstance(encoded.get("dict"), dict)):
        return None
    inner = dict(encoded["dict"])
    inner[keys[0]] = _with_path(inner.get(keys[0]), keys[1:], value)
    return {**encoded, "dict": inner}
