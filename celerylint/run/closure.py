"""What a run on some files of a project reads of the others (focus.py).

The files named are linted with every enabled checker.  Of the rest of the
project, the run needs the facts that can change what is reported for the
files named:

- the configuration model (the apps, the settings modules and profiles,
  the Redis configuration) and the client index, from every file whose
  bytes pass those collectors' prefilters (``CONFIG_MODULES``);
- the task facts (definitions, signatures, effects, base classes) of the
  modules the files named import, and of what their packages re-export
  (one hop through an ``__init__``): the tasks a call names, the base class
  a task extends, the helper a task calls.

Findings located elsewhere are reported only when their fix edits a file
named; those come from the configuration rules, whose facts every file
still gives.  A file named that is itself configuration (it passes those
prefilters), or a non-Python file named, makes the run read every file with
every collector, as before.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable
from pathlib import Path

from ..core.modules import module_name_for
from ..engine.analysis import wanted
from ..registry import Entry

# the collectors of the configuration model and of the client index
CONFIG_MODULES = frozenset({
    "celerylint.facts.config", "celerylint.facts.settings_chain", "celerylint.facts.settings_helpers",
    "celerylint.facts.runtime_settings", "celerylint.facts.clients", "celerylint.facts.python_workers",
})


INDEX_MODULES = frozenset({"celerylint.facts.clients"})  # the client index: read where it is defined


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

    bases: set[str] = set()
    modules: dict[Path, str | None] = {}
    for path in named:
        module = modules[path] = module_name_for(Path(os.path.abspath(path)))
        depth = module.count(".") + (0 if path.name == "__init__.py" else 1) if module else 1
        base = posixpath.dirname(rel(path))
        for _ in range(depth - 1):
            base = posixpath.dirname(base)
        bases.add(base)

    def find(name: str) -> str | None:
        tail = name.replace(".", "/")
        for base in bases:
            for candidate in (f"{tail}.py", f"{tail}/__init__.py"):
                candidate = posixpath.join(base, candidate) if base else candidate
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


def is_configuration(data: bytes, rel: str, entries: Iterable[Entry]) -> bool:
    """Whether a file's bytes pass a prefilter of the configuration model's
    collectors (a finding elsewhere may then be fixed in it)."""
    return bool(wanted([e for e in config_entries(entries) if e.module not in INDEX_MODULES], data, rel))
