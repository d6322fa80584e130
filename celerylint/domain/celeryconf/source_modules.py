"""Which module of the tree an app's configuration source is: the Django
settings module (``DJANGO_SETTINGS_MODULE``), and a configuration module
named by a bare name several files answer to."""

from __future__ import annotations

import os
import posixpath

from .settings import is_test_path


def django_settings(m, app_module: str) -> str | None:
    """The settings module of the Django app of ``app_module``: the first
    that is a file of the tree among those its module names, then among
    the others of the project, nearest first (sharing the most leading
    parts with those or with the app's module: ``web.settings`` before
    another project's ``api.settings`` when ``web.settings.local`` is not
    in the tree); without any in Python, those the launch files name
    (a Dockerfile's ``ENV``, a script's ``export``: bram2w/baserow), deployed
    ones first; without any, the project's one ``settings`` module."""
    facts = m.by_kind["django_settings_module"]
    own = [f["value"] for f in facts if f["module"] == app_module]
    others = list(dict.fromkeys(f["value"] for f in facts if f["value"] not in own))
    near = [value.split(".") for value in own] + [app_module.split(".")]

    def nearest(value: str) -> int:
        return -max(len(os.path.commonprefix([value.split("."), parts])) for parts in near)

    others.sort(key=nearest)
    chosen = own + others
    if not chosen:
        from .profiles import deployed_name, named_settings_modules

        chosen = sorted(named_settings_modules(m), key=lambda value: (not deployed_name(value), nearest(value), value))
        chosen = [value for value in chosen if m.path_of(value)]
        return chosen[0] if chosen else _only_settings(m)
    for module in chosen:
        if m.path_of(module):
            return module
    return None


def _only_settings(m) -> str | None:
    """The project's one ``settings`` module (``settings.py`` or a
    ``settings`` package), or None."""
    candidates = [p for p in m.project.python_files
                  if (p.endswith("/settings.py") or p == "settings.py" or p.endswith("/settings/__init__.py"))
                  and not is_test_path(p)]
    if len(candidates) != 1:
        return None
    rel = candidates[0]
    for module, path in m.module_paths.items():
        if path == rel:
            return module
    stem = rel[: -len("/__init__.py")] if rel.endswith("/__init__.py") else rel[:-3]
    return stem.replace("/", ".")


def beside(m, module: str, near: str) -> str:
    """A module several files of the tree answer to (``celeryconfig`` in the
    source roots of two deployables, each run from its own directory): the
    one beside ``near`` (the app's file), named by its path so that it is
    that file; else ``module`` as it is."""
    tail = module.replace(".", "/") + ".py"
    matches = [p for p in m.project.python_files if p == tail or p.endswith("/" + tail)]
    path = posixpath.join(posixpath.dirname(near), tail)
    return path[:-3].replace("/", ".") if len(matches) > 1 and path in matches else module
