"""One run: discover, lint every file, run the project phase, apply fixes."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .cache import Cache, usable_cache_dir
from ..config.settings import Settings
from .discovery import discover
from .focus import Focus, about, concerns, focus, is_project_file
from .fixing import fix_files, fixes_shown, parses  # noqa: F401  (parses: for rule authors' tests)
from .linter import Linter, lint_files
from ..core.model import FileResult, Finding
from .project import Project, project_findings, reads_every_file
from ..core.source import OTHER_FILE_MAX_BYTES, DecodeError, decode, read_capped

INDEX_MIN_FILES = 64  # below this, reading and prefiltering cost less than loading the stat index


@dataclass
class RunResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # internal errors: exit status 2
    notices: list[str] = field(default_factory=list)  # files skipped or not written
    fixed: dict[str, int] = field(default_factory=dict)  # path -> fixes applied
    # --show-fixes: path -> (code, name) -> fixes applied
    fixed_codes: dict[str, dict[tuple[str, str], int]] = field(default_factory=dict)
    diffs: list[bytes] = field(default_factory=list)  # --diff: one patch per file (patch.py)
    files: int = 0
    # the text linted of the files of the overlay (path as in findings -> text):
    # what the reports draw snippets and fix diffs from, not the disk
    texts: dict[str, str] = field(default_factory=dict)
    # directories under those named that hold their own configuration: projects
    # of their own, left out of this run (projects.py lints them apart)
    nested: list[Path] = field(default_factory=list)


@dataclass
class Linted:
    """The per-file and project phases of one project's run, before fixes."""

    linter: Linter
    results: dict[Path, FileResult]
    other: dict[str, str]
    found: list[Finding]  # of the project phase
    seen: Focus | None
    texts: dict[str, str]  # the overlay's texts, by relative path


def run(paths: list[Path], settings: Settings, *, fix: bool = False, unsafe: bool = False,
        diff: bool = False, jobs: int | None = None, cache: bool = False, project: Path | None = None,
        overlay: Mapping[Path, bytes] | None = None, nested: Callable[[str, list[str]], bool] | None = None,
        alone: bool = False) -> RunResult:
    """Lint ``paths`` as parts of one project (``settings.root``).

    ``project``: the directory read whole, of which only what concerns
    ``paths`` is reported (focus.py); by default the configuration's
    directory or the git work tree when every path is a file inside it.
    ``alone``: read nothing but ``paths``.  ``overlay``: bytes that stand for
    the file at a path, on disk or not (standard input, an editor's buffer);
    such a file is never written.  ``nested(directory, names)``: whether a
    directory met in the walk is a project of its own (left out, listed in
    ``RunResult.nested``)."""
    out = RunResult()
    done = lint(paths, settings, out, keep_digests=fix or diff, jobs=jobs, cache=cache, project=project,
                overlay=overlay, nested=nested, alone=alone)
    linter, results, other, seen = done.linter, done.results, done.other, done.seen
    found_in_project = done.found
    if fix or diff:
        only = frozenset(seen.held(results.values()) | seen.files) if seen else None
        if done.texts:  # the overlay's files are never written
            only = frozenset((only if only is not None else {r.path for r in results.values()}) - set(done.texts))
        found_in_project = fix_files(results, other, found_in_project, linter, out, unsafe=unsafe, write=not diff,
                                     only=only)
    for result in results.values():
        out.findings.extend(result.findings)
        out.errors.extend(result.errors)
    out.findings.extend(found_in_project)
    if seen:
        _keep_focus(out, seen, {r.path for r in results.values()} | set(other))
    out.findings.sort(key=Finding.sort_key)
    out.findings = fixes_shown(out.findings, settings)
    out.texts = done.texts
    return out


def lint(paths: list[Path], settings: Settings, out: RunResult, *, keep_digests: bool = False,
         jobs: int | None = None, cache: bool = False, project: Path | None = None,
         overlay: Mapping[Path, bytes] | None = None, nested: Callable[[str, list[str]], bool] | None = None,
         alone: bool = False) -> Linted:
    """Discover, read and lint every file of the project, then the project
    phase (``run``'s arguments; notices and errors go to ``out``)."""
    directory = None
    if cache:
        directory, why = usable_cache_dir(settings.root, settings.cache_dir)
        if why:
            out.notices.append(why)
    linter = Linter(settings, Cache(directory, settings) if directory is not None else None)
    linter.keep_digests = keep_digests
    if overlay:
        linter.overlay = {os.path.abspath(p): data for p, data in overlay.items()}
    seen = None if alone else focus(paths, settings, project)
    linter.focus = seen
    on_disk = [p for p in paths if not (linter.overlay and os.path.abspath(p) in linter.overlay) or p.exists()]
    found = discover([seen.directory, *on_disk] if seen else on_disk, settings, directory, nested)
    linter.launch_files = sorted(found.launch)
    names = found.names
    _add_overlay(names, paths, linter)
    out.notices.extend(f"{p}: skipped: {why}" for p, why in found.skipped)
    out.nested.extend(found.nested)
    # A fix reads again the file it changes (fix_files): with fixes only to
    # the files named (focus.py), the rest of the project may come from the index.
    if linter.cache is not None and (seen or not keep_digests) and len(names) >= INDEX_MIN_FILES:
        linter.index = linter.cache.stat_index([f"{e.code}:{e.module}.{e.cls}" for e in linter.entries])
    rels = [linter.rel_name(n) for n in names]
    if seen is not None:
        linter.defer_closure(lambda: _closure(seen, names, rels, found.other, linter))
    if linter.index is not None and not reads_every_file(linter):
        names = _unchanged_quiet(names, rels, linter)
        linter.python_files = tuple(rels)
    results = lint_files([Path(n) for n in names], linter, jobs, out.notices)
    other, skipped = _read_other(found.other, linter)
    out.notices.extend(skipped)
    texts = _overlay_texts(linter)
    found_in_project = project_findings(results, other, linter, out.errors, texts)
    out.notices.extend(_yaml_notice(linter))
    if linter.index is not None:
        for result in results.values():
            if result.signature is not None:  # read in this run (one found in the index has none)
                linter.index.put(result, linter.partial_kind(result.path))
        linter.index.save()
    out.files = len(seen.held(results.values()) | (seen.files & set(other))) if seen else len(rels)
    return Linted(linter, results, other, found_in_project, seen, texts)


def _unchanged_quiet(names: list[str], rels: list[str], linter: Linter) -> list[str]:
    """The files to lint: without those the stat index finds unchanged with
    nothing to say (no finding, no fact: most files of a large tree).  Those
    need no ``Path``, no reading and no result: the project keeps only their
    names (``Linter.python_files``)."""
    overlay, seen = linter.overlay, linter.focus
    pairs = zip(rels, names)
    if overlay or seen:  # a file named always has a result: a fix may be made in it (a setting added)
        pairs = [(r, n) for r, n in pairs
                 if not (overlay and os.path.abspath(n) in overlay) and not (seen and seen.holds(r))]
    quiet = linter.index.quiet_files(pairs, linter.partial_kinds)
    return [n for n, r in zip(names, rels) if r not in quiet] if quiet else names


def _closure(seen: Focus, names: list[str], rels: list[str], other: list[Path], linter: Linter) -> set[str] | None:
    """closure.py's files for a run on ``seen`` (the Python files' ``names``
    and relative paths); None: read every file whole."""
    from .closure import closure, is_configuration

    if any(seen.holds(linter.rel(p)) for p in other):
        return None
    named: dict[Path, bytes] = {}
    for name, rel in zip(names, rels):
        if seen.holds(rel):
            path = Path(name)
            data = linter.read(path)[0]
            if data is None:
                continue
            if is_configuration(data, rel, linter.entries_for(path)):
                return None
            named[path] = data
    return closure(named, dict(zip(rels, names)), linter.rel)


def _add_overlay(names: list[str], paths: list[Path], linter: Linter) -> None:
    """The Python files of the overlay named but not on disk (a new file's
    unsaved buffer).  A project file (``redis.conf``, a compose file) is
    never read as Python, however it is named."""
    if not linter.overlay:
        return
    known = {os.path.abspath(p) for p in names}
    for path in paths:
        if is_project_file(path.name):
            continue
        if os.path.abspath(path) in linter.overlay and os.path.abspath(path) not in known:
            names.append(str(path))
            known.add(os.path.abspath(path))


def _overlay_texts(linter: Linter) -> dict[str, str]:
    texts = {}
    for path, data in linter.overlay.items():
        try:
            texts[linter.rel(Path(path))] = decode(data).text
        except DecodeError:
            pass
    return texts


def _yaml_notice(linter: Linter) -> list[str]:
    """Once a run: the deployment rules would read compose files or
    Kubernetes manifests of the tree, and PyYAML is not installed."""
    if not linter.launch_files:
        return []
    import importlib.util
    import sys

    loaded = sys.modules.get("celerylint.domain.deploy.yamlfile")
    if loaded is not None and loaded.tried():  # the model read YAML: whether PyYAML could be imported
        available = loaded.available()
    else:  # found without importing it (a tenth of a run's start-up)
        available = importlib.util.find_spec("yaml") is not None
    if available:
        return []
    from ..domain.deploy.paths import DEPLOYMENT_RULES, YAML_NOTICE, yaml_deployment_file

    if not any(e.code in DEPLOYMENT_RULES for e in linter.entries):
        return []
    return [YAML_NOTICE] if any(yaml_deployment_file(path) for path, _, _ in linter.launch_files) else []


def _keep_focus(out: RunResult, seen: Focus, read: set[str]) -> None:
    """What concerns the files named (focus.py); what went wrong elsewhere
    in the project is one notice, not a failure of this run."""
    others = {r for r in read if not seen.holds(r)}
    out.findings = [f for f in out.findings if concerns(f, seen)]
    out.notices = [n for n in out.notices if not about(n, others)]
    elsewhere = [e for e in out.errors if about(e, others)]
    if elsewhere:
        out.errors = [e for e in out.errors if not about(e, others)]
        out.notices.append(f"{len(elsewhere)} internal error(s) in files not named; findings may be incomplete "
                           "(run celerylint on the whole project to see them)")


def read_project(paths: list[Path], settings: Settings, *, jobs: int | None = None, cache: bool = False,
                 nested: Callable[[str, list[str]], bool] | None = None) -> tuple[Project, list[str], list[str]]:
    """The project the configuration rules would judge (for ``--show-apps``):
    the per-file phase over ``paths`` with the configuration collectors, no
    rule run.  Returns it, the notices and the nested projects left out."""
    from dataclasses import replace

    from .project import make_project

    settings = replace(settings, select=("CL1",), ignore=())
    out = RunResult()
    directory = usable_cache_dir(settings.root, settings.cache_dir)[0] if cache else None
    linter = Linter(settings, Cache(directory, settings) if directory is not None else None)
    found = discover(paths, settings, directory, nested)
    results = lint_files(found.python, linter, jobs, out.notices)
    other, skipped = _read_other(found.other, linter)
    return make_project(results, other, linter), out.notices + skipped, found.nested


def _read_other(paths: list[Path], linter: Linter) -> tuple[dict[str, str], list[str]]:
    """The non-Python files the project phase reads (``redis-config-files``),
    and notices: only regular files of at most ``OTHER_FILE_MAX_BYTES`` are
    read; a pipe, a device, a larger file or one that cannot be read is
    skipped with a notice."""
    texts: dict[str, str] = {}
    notices: list[str] = []
    for path in paths:
        data = linter.overlay.get(os.path.abspath(path)) if linter.overlay else None
        if data is not None:  # standard input standing for the file
            texts[linter.rel(path)] = data[:OTHER_FILE_MAX_BYTES].decode("utf-8", "replace")
            continue
        try:
            texts[linter.rel(path)] = read_capped(path, OTHER_FILE_MAX_BYTES).decode("utf-8", "replace")
        except FileNotFoundError:
            why = "a broken symbolic link" if path.is_symlink() else "the file disappeared"
            notices.append(f"{linter.rel(path)}: skipped: {why}")
        except OSError as exc:
            notices.append(f"{linter.rel(path)}: skipped: {exc.strerror or exc}")
    return texts, notices
