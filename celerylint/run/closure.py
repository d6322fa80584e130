"""What a run on some files of a project reads of the others (focus.py).

The files named are linted with every enabled checker.  Of the rest of the
project, the run needs the facts that can change what is reported for the
files named:

- the configuration model (the apps, the settings modules and profiles,
  the Redis configuration), the client index and the other facts project
  rules read of every file (``INDEX_MODULES``: ``ATOMIC_REQUESTS``, signal
  receivers connected in another module, lock library settings), from every file whose bytes
  pass those collectors' prefilters (``CONFIG_MODULES``);
- the task facts (definitions, signatures, effects, base classes) of the
  modules the files named import, and of what their packages re-export
  (one hop through an ``__init__``): the tasks a call names, the base class
  a task extends, the helper a task calls.

A module that makes an app gives every fact it holds (the app's task
classes), wherever it is.  Findings located elsewhere are reported only when
their fix edits a file named; those come from the configuration rules, whose
facts every file still gives.  A file named that is itself configuration (it
passes those prefilters, and not only by a name shaped like a setting, such
as ``task_logger``, see ``is_configuration``), or a non-Python file named,
makes the run read every file with every collector.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable
from pathlib import Path

from ..core.modules import module_name_for
from ..api.needles import matches
from ..domain.celeryconf.needles import APP_MADE
from ..domain.celeryconf.paths import SETTINGS_PATH
from ..engine.analysis import wanted
from ..registry import Entry

# facts that are not the configuration model, read wherever they are: the
# client index, the models over the result backend's table, the task
# decorators, and what can change a finding in a file that does not import
# where it is written (``ATOMIC_REQUESTS``, a signal receiver connected in an
# ``apps.py``, lock library settings).  ``ast`` collectors with narrow
# prefilters.  (Chords and result reads give findings where they are.)
INDEX_MODULES = frozenset({
    "celerylint.facts.clients", "celerylint.facts.result_tables", "celerylint.facts.task_decorators",
    "celerylint.facts.atomic_requests", "celerylint.facts.signal_connects", "celerylint.facts.lock_library_config",
})
# the collectors of the configuration model, with those
CONFIG_MODULES = INDEX_MODULES | {
    "celerylint.facts.config", "celerylint.facts.settings_chain", "celerylint.facts.settings_helpers",
    "celerylint.facts.runtime_settings", "celerylint.facts.python_workers",
}


def config_entries(entries: Iterable[Entry]) -> list[Entry]:
    return [e for e in entries if e.module in CONFIG_MODULES]


def imported(text: str, module: str | None, is_package: bool) -> set[str]:
    """The modules ``text`` imports (absolute names; ``from a import b``
    gives ``a`` and ``a.b``), or an empty set when it does not parse."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    out: set[str] = set()
    package = (module if is_package else module.rpartition(".")[0]) if module else ""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                if node.level - 1 > len(parts):
                    continue
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join([*parts, *([base] if base else [])])
            if base:
                out.add(base)
                out.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return out


def closure(named: dict[Path, bytes], known: dict[str, str], rel) -> set[str] | None:
    """The relative paths (``rel(path)``) of the files whose task facts the
    files ``named`` (path -> bytes) may need, among the project's Python
    files ``known`` (relative path -> path).  An imported module is looked
    for under the source directory of each file named (the directory its
    top package is in)."""
    from ..core.source import DecodeError, decode

    bases: set[str] = set()  # absolute: the source directory may be above the project root
    modules: dict[Path, str | None] = {}
    for path in named:
        absolute = os.path.abspath(path)
        module = modules[path] = module_name_for(Path(absolute))
        depth = module.count(".") + (0 if path.name == "__init__.py" else 1) if module else 1
        base = os.path.dirname(absolute)
        for _ in range(depth - 1):
            base = os.path.dirname(base)
        bases.add(base)

    def find(name: str) -> str | None:
        tail = name.replace(".", "/")
        for base in bases:
            for candidate in (f"{tail}.py", f"{tail}/__init__.py"):
                candidate = rel(Path(posixpath.join(base, candidate)))
                if candidate in known:
                    return candidate
        return None

    wanted_paths: set[str] = {rel(p) for p in named}
    frontier: list[tuple[Path, bytes]] = list(named.items())
    for hop in range(2):
        following: list[tuple[Path, bytes]] = []
        for path, data in frontier:
            try:
                text = decode(data).text
            except DecodeError:
                continue
            module = modules[path] if path in modules else module_name_for(Path(os.path.abspath(path)))
            for name in imported(text, module, path.name == "__init__.py"):
                parts = name.split(".")
                for i in range(1, len(parts) + 1):  # the packages on the way re-export
                    target = find(".".join(parts[:i]))
                    if target is None or target in wanted_paths:
                        continue
                    wanted_paths.add(target)
                    if hop == 0 and target.endswith("__init__.py"):
                        package = Path(known[target])
                        try:
                            following.append((package, package.read_bytes()))
                        except OSError:
                            pass
        frontier = following
    return wanted_paths


def makes_app(data: bytes) -> bool:
    """Whether a file's bytes may make a Celery app (its module may hold
    the app's task classes)."""
    return matches(APP_MADE, data)


# a name at the start of a line that begins as a setting does (``task_logger
# = ...``, ``CELERY_RETRY_MAX = 5``): what ConfigCollector's prefilter takes for one
_SETTING_NAME = re.compile(
    rb"(?m)^(?:CELERY|BROKER_|broker|result|task|worker|beat|imports|include|accept_content|timezone|enable_utc)"
    rb"\w*(?=[ \t]*[:=\[])")


def is_configuration(data: bytes, rel: str, entries: Iterable[Entry]) -> bool:
    """Whether a file's bytes pass a prefilter of the configuration model's
    collectors (a finding elsewhere may then be fixed in it).  Names that
    only begin as a setting does (``task_logger``), neither one nor close to
    one, do not count outside settings-like paths."""
    config = [e for e in config_entries(entries) if e.module not in INDEX_MODULES]
    if not wanted(config, data, rel):
        return False
    names = {m.group().decode() for m in _SETTING_NAME.finditer(data)}
    if not names or SETTINGS_PATH.search(rel) or any(_setting_like(n) for n in names):
        return True
    return bool(wanted(config, _SETTING_NAME.sub(b"", data), rel))


def _setting_like(name: str) -> bool:
    from ..domain.celeryconf.settings_table import table

    t = table()
    return any(t.known(name) or t.canonical(name, namespace) or t.suggestions(name, namespace)
               for namespace in (None, "CELERY"))
