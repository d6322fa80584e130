"""A run over paths of one or several projects: each path is given to its
project (config/roots.py), each project is run once with its own settings,
cache and model (runner.run, which reads the project whole and reports
what concerns the paths named), and the results are merged, their paths
made relative to one report root.

    check(paths, roots, overlay={Path("pkg/tasks.py"): b"..."})

``overlay`` maps a path to the bytes that stand for it (standard input, an
editor's unsaved buffer): they are linted instead of the file on disk, in
the project's view too, and never written.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from ..config.roots import Root, Roots
from ..config.settings import relative_path
from ..config.table import CONFIG_FILES
from ..core.model import Finding
from .runner import RunResult, run

MAX_PROJECTS = 1000  # nested projects found in one run: a bound, not a limit anyone meets


def check(paths: list[Path], roots: Roots, *, overlay: Mapping[Path, bytes] | None = None, fix: bool = False,
          unsafe: bool = False, diff: bool = False, jobs: int | None = None, cache: bool = False) -> RunResult:
    """The run over ``paths``, each judged with its project in view."""
    report = roots.report_root()
    out = RunResult()
    alone: list[Path] = []

    def one(root: Root, named: list[Path]) -> list[str]:
        settings = roots.settings(root)
        whole = any(os.path.abspath(p) == str(root.directory) for p in named)
        result = run(named, settings, fix=fix, unsafe=unsafe, diff=diff, jobs=jobs, cache=cache,
                     project=None if whole else root.directory, overlay=_within(overlay, root.directory),
                     nested=nested_projects(roots))
        merge(out, result, settings.root, report)
        return result.nested

    _each_project(paths, roots, alone, one)
    if alone:
        settings = roots.settings(None)
        result = run(alone, settings, fix=fix, unsafe=unsafe, diff=diff, jobs=jobs, cache=cache,
                     overlay=overlay, alone=True)
        merge(out, result, settings.root, report)
        out.notices.append(no_project(alone))
    out.findings.sort(key=Finding.sort_key)
    return out


def _each_project(paths: list[Path], roots: Roots, alone: list[Path],
                  visit: Callable[[Root, list[Path]], list[str]]) -> None:
    """``visit(root, named paths)`` for each project the paths belong to,
    then for each project nested in a named directory, which ``visit``
    returns (the walk leaves it out of the project around it); the paths
    of no project go to ``alone``."""
    queue = _groups(paths, roots, alone)
    seen: set[str] = set()
    while queue and len(seen) < MAX_PROJECTS:
        root, named = queue.pop(0)
        seen.add(str(root.directory))
        for directory in visit(root, named):
            if os.path.abspath(directory) not in seen and any(_under(directory, p) for p in named):
                queue += _groups([directory], roots, alone)


def read_projects(paths: list[Path], roots: Roots, *, jobs: int | None = None, cache: bool = False) -> list:
    """``(settings, project, notices, paths)`` of each project ``paths``
    belong to or hold (``--show-apps``), with those of ``paths`` in it: each
    read whole, as a run on any of its files sees it, without the projects
    nested in it, which come on their own."""
    from .runner import read_project

    out: list = []
    alone: list[Path] = []

    def one(root: Root, named: list[Path]) -> list[str]:
        settings = roots.settings(root)
        project, notices, nested = read_project([root.directory], settings, jobs=jobs, cache=cache,
                                                nested=nested_projects(roots))
        out.append((settings, project, notices, named))
        return nested

    _each_project(paths, roots, alone, one)
    if alone:
        settings = roots.settings(None)
        project, notices, _ = read_project(alone, settings, jobs=jobs, cache=cache)
        out.append((settings, project, [*notices, no_project(alone)], alone))
    return out


def no_project(files: list[Path]) -> str:
    names = ", ".join(str(p) for p in files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    return (f"{names}: no project around {'it' if len(files) == 1 else 'them'} (no celerylint configuration, "
            "git work tree, pyproject.toml, setup.cfg or setup.py above): linted alone, so the configuration "
            "rules (CL1xx) and the checks that need other files (task signatures, Redis helpers, task base "
            "classes, settings modules) could not see the project")


def _groups(paths: list[Path], roots: Roots, alone: list[Path]) -> list[tuple[Root, list[Path]]]:
    """The paths by project, in the order first named."""
    groups: dict[str, tuple[Root, list[Path]]] = {}
    for path in paths:
        root = roots.root_of(path)
        if root is None:
            alone.append(path)
            continue
        groups.setdefault(str(root.directory), (root, []))[1].append(path)
    return list(groups.values())


def nested_projects(roots: Roots):
    """The walk's test for a directory holding its own configuration (a
    project of its own, left out of the project walked); None when
    configuration files are not looked for."""
    if not roots.discovers():
        return None

    def nested(directory: str, names: list[str]) -> bool:
        return any(n in names for n in CONFIG_FILES) and roots.config_of(os.path.abspath(directory), False) is not None

    return nested


def _under(path: Path, named: Path) -> bool:
    top, inner = os.path.abspath(named), os.path.abspath(path)
    return inner == top or inner.startswith(top.rstrip(os.sep) + os.sep)


def _within(overlay: Mapping[Path, bytes] | None, directory: Path) -> dict[Path, bytes] | None:
    if not overlay:
        return None
    return {p: data for p, data in overlay.items() if _under(Path(p), directory)} or None


def merge(out: RunResult, result: RunResult, root: Path, report: Path) -> None:
    """Add ``result`` (paths relative to ``root``) to ``out`` (relative to ``report``)."""
    same = Path(root) == Path(report)
    move = (lambda rel: rel) if same else (lambda rel: rebase(rel, root, report))
    out.findings += result.findings if same else [_moved(f, move) for f in result.findings]
    out.errors += result.errors
    out.notices += result.notices if same else [_notice(n, root, report) for n in result.notices]
    out.fixed.update({move(k): v for k, v in result.fixed.items()})
    out.fixed_codes.update({move(k): v for k, v in result.fixed_codes.items()})
    out.diffs += result.diffs
    out.files += result.files
    out.texts.update({move(k): v for k, v in result.texts.items()})


def rebase(rel: str, root: Path, report: Path) -> str:
    """``rel`` (relative to ``root``, or absolute) relative to ``report``."""
    if not rel or "://" in rel:
        return rel
    return relative_path(Path(os.path.join(root, rel)), report)


def _notice(message: str, root: Path, report: Path) -> str:
    """A notice naming a file of the project first (``path: skipped: ...``),
    that path relative to the report root."""
    head, sep, rest = message.partition(": ")
    if sep and not os.path.isabs(head) and os.path.lexists(os.path.join(root, head)):
        return f"{rebase(head, root, report)}: {rest}"
    return message


def _moved(finding: Finding, move) -> Finding:
    fix = finding.fix
    if fix is not None and fix.path:
        fix = replace(fix, path=move(fix.path))
    return replace(finding, path=move(finding.path), fix=fix)
