"""Which app a process's ``-A`` names, beyond the app's own module.

Four shapes public projects use, each read only when the ``-A`` module is no
app's module (so a tree whose commands name the app's module reads nothing
more):

- ``-A celery_app.celery`` names the attribute ``celery`` of the module
  ``celery_app`` (``celery.app.utils.find_app`` tries ``symbol_by_name``
  first, which reads the last dotted part as an attribute).

- The worker runs inside the project's top directory, which is itself a
  package: ``-A app.task.celery`` started from ``backend/`` names the app of
  ``backend.app.task.celery``.  Taken when exactly one app's module ends
  with ``.<the -A module>``.
- The ``-A`` module is a file of the tree by its path, in folders without
  ``__init__.py`` (``-A app.c.worker.celery_app`` for ``app/c/worker.py``,
  whose app's key is ``worker:celery_app``): the one app made there; or a
  folder without ``__init__.py`` whose ``celery.py`` makes one app (``-A
  proj`` for ``proj/celery.py``: ``find_app`` imports the namespace package
  and, finding no app on it, tries ``proj.celery``).
- The ``-A`` module imports the app from where it is made
  (``from app.celery_app import celery_app`` in ``app/worker.py``): Celery
  finds an app among the module's attributes (``celery.app.utils.find_app``),
  so the module starts that app.  Taken when the module is one file of the
  tree and imports exactly one of the project's apps by name (its module
  found by its path, as in the shape above, when it is in folders without
  ``__init__.py``).  So does ``-A pkg.celery_app`` when no module has that
  name and ``pkg/__init__.py`` imports the app as ``celery_app`` (Django's
  ``from .celery import app as celery_app``): ``find_app`` reads the last
  part as an attribute of the package.
"""

from __future__ import annotations

import re

from ...core.modules import absolute_module
from ..celeryconf.texts import read

_FROM_IMPORT = re.compile(r"^from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([^)\n]*)", re.M)


def _module_file(m, module: str) -> tuple[str, bool] | None:
    """``(path, is_package)`` of the one Python file of the tree that is ``module``."""
    tail = module.replace(".", "/")
    found = [(p, p.endswith("/__init__.py")) for p in m.project.python_files
             if ("/" + p).endswith(("/" + tail + ".py", "/" + tail + "/__init__.py"))]
    return found[0] if len(found) == 1 else None


def _apps_in_file(m, module: str, var: str) -> set[str]:
    """The one app (``var``, when given) made in the one file of the tree
    that is ``module`` by its path, for a module inside folders without
    ``__init__.py`` (namespace packages: Python imports them, and the app's
    own key names it from its file only)."""
    found = _module_file(m, module)
    if found is None:
        return set()
    apps = {a.key for a in m.relevant_apps() if a.path == found[0] and (not var or a.var == var)}
    return apps if len(apps) == 1 else set()


def _imports(text: str, module: str, is_package: bool) -> dict[str, tuple[str, str]]:
    """``local name -> (module, name)`` of the file's ``from x import y`` statements."""
    out: dict[str, tuple[str, str]] = {}
    for written, names in _FROM_IMPORT.findall(text):
        source = written.lstrip(".")
        dots = written[:len(written) - len(source)]
        base = absolute_module(module, "x/__init__.py" if is_package else "x.py", len(dots), source)
        for item in names.split(","):
            words = item.split()
            if len(words) == 1 and words[0].isidentifier():
                out[words[0]] = (base, words[0])
            elif len(words) == 3 and words[1] == "as" and words[2].isidentifier():
                out[words[2]] = (base, words[0])
    return out


def named_apps(m, target: str) -> set[str]:
    """The keys (``module:var``) of the apps the ``-A`` value ``target``
    names through one of the two shapes above; empty when it names none of
    them or an app's own module (which ``Process.starts`` reads)."""
    cache = m.__dict__.setdefault("_deploy_named_apps", {})
    if target not in cache:
        cache[target] = _named(m, target)
    return cache[target]


def _named(m, target: str) -> set[str]:
    module, _, attr = target.partition(":")
    keys = [a.key for a in m.relevant_apps()]
    if not module or any(k.rpartition(":")[0] == module for k in keys):
        return set()
    owner, _, name = module.rpartition(".")
    if not attr and f"{owner}:{name}" in keys:  # ``-A celery_app.celery``: Celery takes the module's attribute first
        return {f"{owner}:{name}"}
    # a package's ``celery`` submodule too: ``find_app`` tries ``-A ops`` as ``ops.celery``
    tails = ("." + module,) if attr else ("." + module, f".{module}.celery")
    by_suffix = [k for k in keys if k.rpartition(":")[0].endswith(tails)
                 and (not attr or k.rpartition(":")[2] == attr)]
    if len({k.rpartition(":")[0] for k in by_suffix}) == 1:
        return set(by_suffix)
    in_file = (_apps_in_file(m, module, attr) or (_apps_in_file(m, owner, name) if owner and not attr else set())
               or (_apps_in_file(m, module + ".celery", "") if not attr else set()))
    if in_file:
        return in_file
    found, wanted = _module_file(m, module), attr
    if found is None and owner and not attr:  # ``-A pkg.celery_app``: an attribute of the package ``pkg``
        found, module, wanted = _module_file(m, owner), owner, name
    text = read(m, found[0]) if found else None
    if text is None:
        return set()
    apps: set[str] = set()
    for local, (source, name) in _imports(text, module, found[1]).items():
        if wanted and local != wanted:
            continue
        if f"{source}:{name}" in keys:
            apps.add(f"{source}:{name}")
        else:  # the app's module inside folders without ``__init__.py``: its key names it by its file only
            apps |= _apps_in_file(m, source, name)
    return apps if len(apps) == 1 else set()
