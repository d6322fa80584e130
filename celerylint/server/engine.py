"""The one module of the server that drives the lint engine.

The rest of the server asks ``Session.analyse(path, text)`` (a buffer's
findings, and those of every other open file of its project, with the
whole project in view), ``Session.alone(path, text)`` (the buffer linted by
itself, while the project is still being read), ``Session.disk_changed``
(files changed on disk) and ``Session.fixed_text`` ("fix all").  Nothing
else in ``server/`` knows how a run is put together.

Each file's project and settings are those the command line gives it
(``config.roots``: the nearest configuration file, else the git work tree,
else the Python project around it; each project of a monorepo its own),
found as from the innermost workspace folder holding the file, with the
editor's overrides applied as ``Roots``' ``adjust``.  A project
(``Project`` below: its settings and its root directory, read whole) is
read once, as a command-line run reads it (discovery, the cache, the stat
index, the nested projects left out); its files' results stay in memory.
A file outside any project is a project of its own, read alone.  A change to a buffer
lints that buffer again from its text, rebuilds the index of client
helpers and task classes (re-linting the open files it makes stale) and
runs the project phase over every file's results, where the open buffers
replace the files on disk.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ..config.roots import MARKERS, Root, Roots
from ..config.settings import ConfigError, Settings
from ..config.table import CONFIG_FILES
from ..core.model import FileResult, Finding
from ..run.linter import Linter
from ..run.project import Memo
from .settings import Overrides

CONFIG_NAMES = frozenset(CONFIG_FILES + MARKERS)  # files that decide where a project is and what it reads
PYTHON = (".py", ".pyi")


@dataclass
class Project:
    key: tuple
    scope: Path
    settings: Settings
    linter: Linter  # with the cache: the files read from disk
    buffers: Linter  # without it: every keystroke need not be stored
    results: dict[Path, FileResult] = field(default_factory=dict)
    other: dict[str, str] = field(default_factory=dict)  # non-Python files the project reads, by relative path
    other_paths: set[Path] = field(default_factory=set)
    notices: list[str] = field(default_factory=list)
    # the project rules' last findings (run/project.Memo), kept while no
    # file's facts, no other file and no index changed: a keystroke that
    # changes no fact (most of them) costs the buffer's own analysis only
    memo: Memo = field(default_factory=Memo)

    def changed(self) -> None:
        """An input of the project phase changed."""
        self.memo.want = (self.memo.want or 0) + 1

    def put(self, path: Path, result: FileResult | None) -> None:
        old = self.results.pop(path, None) if result is None else self.results.get(path)
        if result is not None:
            self.results[path] = result
        if old is None or result is None or _phase_facts(old) != _phase_facts(result):
            self.changed()

    def within(self, path: Path) -> bool:
        """Whether ``path`` is in the project's directory (a project nested
        in it may still hold it: ``Session.holds``)."""
        return path == self.scope or self.scope in path.parents


def _phase_facts(result: FileResult) -> list:
    """What the project phase reads of a file (``noqa-used`` is CL002's, read per run)."""
    return [f for f in result.facts if f.get("kind") != "noqa-used"]


class Session:
    def __init__(self, folders: list[Path], overrides: Overrides, log=print) -> None:
        self.folders = [f.resolve() for f in folders]
        self.overrides = overrides
        self.log = log
        self.open: dict[Path, str] = {}  # the overlay: open buffers replace the files on disk
        self.projects: dict[tuple, Project] = {}
        self.roots: dict[Path, Roots] = {}  # by the directory they start from
        self._places: dict[Path, tuple[Root | None, Settings, Roots]] = {}  # by the file's directory
        self.lock = threading.RLock()  # the engine is used from one thread at a time

    # -- projects -------------------------------------------------------
    def _roots(self, path: Path) -> Roots:
        """What finds ``path``'s project: as a command line run from the
        innermost workspace folder holding it, else from the server's
        working directory."""
        from ..registry import known_codes

        holding = [f for f in self.folders if f in path.parents]
        start = max(holding, key=lambda f: len(f.parts)) if holding else Path.cwd()
        if start not in self.roots:
            self.roots[start] = Roots(start, known_codes(), adjust=self.overrides.apply)
        return self.roots[start]

    def place(self, path: Path) -> tuple[Root | None, Settings, Roots]:
        """The project of ``path`` (None: outside any), its settings with the
        overrides, and what found them.  ConfigError when the configuration
        cannot be read."""
        directory = path.parent
        if directory not in self._places:
            roots = self._roots(path)
            root = roots.root_of(path)
            self._places[directory] = (root, roots.settings(root), roots)
        return self._places[directory]

    def settings(self, path: Path) -> Settings:
        return self.place(path)[1]

    @staticmethod
    def _key(path: Path, root: Root | None, settings: Settings) -> tuple:
        scope = root.directory if root is not None else path  # a file outside any project: read alone
        return scope, settings.config_file

    def holds(self, project: Project, path: Path) -> bool:
        """Whether ``path`` belongs to ``project`` (not to one nested in it)."""
        if not project.within(path):
            return False
        try:
            root, settings, _ = self.place(path)
        except ConfigError:
            return False
        return self._key(path, root, settings) == project.key

    def loaded(self, path: Path) -> bool:
        try:
            root, settings, _ = self.place(path)
        except ConfigError:
            return True  # nothing to read
        return self._key(path, root, settings) in self.projects

    def project(self, path: Path) -> Project:
        """The project ``path`` belongs to, read on first use."""
        from ..run.projects import nested_projects, no_project

        root, settings, roots = self.place(path)
        key = self._key(path, root, settings)
        if key not in self.projects:
            if root is None:
                self.log(no_project([path]))
            self.projects[key] = self._read(key, settings, nested_projects(roots) if root is not None else None)
        return self.projects[key]

    def _read(self, key: tuple, settings: Settings, nested) -> Project:
        from ..run.cache import Cache, usable_cache_dir
        from ..run.discovery import discover
        from ..run.linter import lint_files
        from ..run.runner import INDEX_MIN_FILES, _read_other

        directory, why = usable_cache_dir(settings.root, settings.cache_dir)
        linter = Linter(settings, Cache(directory, settings) if directory is not None else None)
        scope = key[0]
        project = Project(key, scope, settings, linter, Linter(settings), notices=[why] if why else [])
        found = discover([scope], settings, directory, nested)
        if linter.cache is not None and len(found.names) >= INDEX_MIN_FILES:
            linter.index = linter.cache.stat_index([f"{e.code}:{e.module}.{e.cls}" for e in linter.entries])
        project.results = lint_files(found.python, linter, None, project.notices)
        if linter.index is not None:
            for result in project.results.values():
                linter.index.put(result)
            linter.index.save()
            linter.index = None  # from now on files are linted one by one, as they change
        project.other, skipped = _read_other(found.other, linter)
        project.other_paths = set(found.other)
        project.notices += skipped
        project.buffers.client_index = linter.client_index
        self.log(f"read {scope}: {len(project.results)} Python files, {len(project.other)} other files")
        return project

    # -- analysis -------------------------------------------------------
    def alone(self, path: Path, text: str) -> list[Finding]:
        """The buffer linted by itself, as ``celerylint -`` lints standard
        input: what can be shown while the project is being read."""
        from ..run.project import project_findings

        linter = Linter(self.settings(path))
        result = linter.lint_bytes(path, text.encode("utf-8", "surrogatepass"))
        found = project_findings({path: result}, {}, linter, [], {result.path: text})
        return [f for f in result.findings + found if f.path == result.path]

    def analyse(self, path: Path, text: str | None) -> dict[Path, list[Finding]]:
        """``path`` now holds ``text`` (None: as on disk, the buffer closed);
        the findings of every open file of its project."""
        project = self.project(path)
        if text is None:
            self.open.pop(path, None)
        else:
            self.open[path] = text
        self._relint(project, path)
        self._reindex(project)
        return self._judge(project)

    def disk_changed(self, paths: list[Path]) -> dict[Path, list[Finding]]:
        """Files changed, were created or deleted on disk: read them again
        where no buffer replaces them, and judge the open files again."""
        if any(self._decides(p) for p in paths):
            self.log("configuration changed: finding the projects and reading them again")
            self.projects.clear()
            self.roots.clear()
            self._places.clear()
            out: dict[Path, list[Finding]] = {}
            for path in list(self.open):
                if path not in out:
                    try:
                        out.update(self.analyse(path, self.open[path]))
                    except ConfigError as exc:
                        self.log(str(exc))
                        out[path] = []
            return out
        touched = []
        for project in self.projects.values():
            mine = [p for p in paths if p not in self.open and self.holds(project, p) and self._in_project(project, p)]
            for path in mine:
                if path.name.endswith(PYTHON):
                    self._relint(project, path)
                else:
                    self._reread_other(project, path)
            if mine:
                self._reindex(project)
                touched.append(project)
        out = {}
        for project in touched:
            out.update(self._judge(project))
        return out

    def _decides(self, path: Path) -> bool:
        """Whether ``path`` is a configuration file (or one a configuration
        extends) or a file that marks a Python project."""
        if path.name in CONFIG_NAMES:
            return True
        return any(path == Path(os.path.abspath(f)) or path == f.resolve()
                   for p in self.projects.values() for f in p.settings.config_chain)

    @staticmethod
    def _in_project(project: Project, path: Path) -> bool:
        """A file the project holds, or a new one discovery would find:
        outside the directories it never enters and the ``exclude``
        patterns (what git ignores is read from disk only at the next read)."""
        from ..core.walk import DEFAULT_EXCLUDE
        from ..run.discovery import _excluded, _pattern_rel

        if path in project.results or path in project.other_paths:
            return True
        parts = path.relative_to(project.scope).parts[:-1]
        if any(p in DEFAULT_EXCLUDE or p.endswith(".egg-info") for p in parts):
            return False
        return not _excluded(_pattern_rel(path, project.settings), project.settings)

    def _relint(self, project: Project, path: Path) -> None:
        if path in self.open:
            data = self.open[path].encode("utf-8", "surrogatepass")
            project.put(path, project.buffers.lint_bytes(path, data))
            return
        if not path.is_file():
            project.put(path, None)
            return
        data, unread, notice = project.linter.read(path)
        if notice:
            self.log(notice)
        project.put(path, unread if data is None else project.linter.lint_bytes(path, data))

    def _reread_other(self, project: Project, path: Path) -> None:
        from ..run.focus import read_as_other
        from ..run.runner import _read_other

        rel = project.linter.rel(path)
        project.changed()
        project.other.pop(rel, None)
        if not path.is_file() or not (path in project.other_paths or read_as_other(path.name, rel, project.settings)):
            project.other_paths.discard(path)
            return
        texts, notices = _read_other([path], project.linter)
        project.other.update(texts)
        project.other_paths.add(path)
        for notice in notices:
            self.log(notice)

    def _reindex(self, project: Project) -> None:
        """The index of client helpers and task classes from every file's
        facts; the open files whose answers it changes are linted again."""
        from ..facts.client_index import PROVIDERS_FACT, build, stale
        from ..facts.task_class_index import TASK_CLASS_FACTS
        from ..facts.task_class_index import entries as task_classes

        results = project.results.values()
        index = build([f for r in results for f in r.facts if f.get("kind") == PROVIDERS_FACT])
        index.update(task_classes(f for r in results for f in r.facts if f.get("kind") in TASK_CLASS_FACTS))
        if index == project.linter.client_index:
            return
        project.changed()
        project.linter.client_index = project.buffers.client_index = index
        for path in self.open:
            if path in project.results and stale(project.results[path].facts, index):
                self._relint(project, path)

    def _judge(self, project: Project) -> dict[Path, list[Finding]]:
        from ..run.project import project_findings

        linter = project.linter
        mine = [p for p in self.open if p in project.results or self.holds(project, p)]
        texts = {linter.rel(p): self.open[p] for p in mine}
        errors: list[str] = []
        found = project_findings(project.results, project.other, linter, errors, texts, memo=project.memo)
        for error in errors:
            self.log(error)
        by_rel: dict[str, list[Finding]] = {}
        for finding in found:
            by_rel.setdefault(finding.path, []).append(finding)
        out = {}
        for path in mine:
            result = project.results.get(path)
            own = result.findings if result is not None else []
            for error in result.errors if result is not None else ():
                self.log(error)
            out[path] = sorted(own + by_rel.get(linter.rel(path), []), key=Finding.sort_key)
        return out

    def rel(self, path: Path) -> str:
        return self.project(path).linter.rel(path)

    def path_of(self, path: Path, rel: str) -> Path:
        """The file a finding of ``path``'s project names by ``rel``."""
        return Path(os.path.normpath(self.settings(path).root / rel))

    def fixed_text(self, path: Path, text: str) -> str:
        """``text`` with every safe fix applied, as ``--fix`` would (rounds
        until nothing more applies), judged with the project in view."""
        from ..run.fixing import MAX_FIX_ROUNDS, _apply, _applicable

        rel = self.rel(path)
        current = text
        for _ in range(MAX_FIX_ROUNDS):
            findings = self.analyse(path, current).get(path, [])
            fixes = [f.fix for f in findings if _applicable(f, False) and (f.fix.path or f.path) == rel]
            if not fixes:
                break
            new, applied, _ = _apply(current, fixes)
            if not applied or new == current:
                break
            current = new
        self.analyse(path, text)  # the buffer still holds ``text`` until the client applies the edit
        return current
