"""Runs on some files of a project (pre-commit, an editor): the project is
read whole, and only what concerns the files named is reported.

Configuration and cross-file rules reason over the whole project: the
settings module, the app, the task a call site names.  Linting only the
files named would make them silent, or change their answer (a fix that is
safe when the task is known becomes unsafe when it is not).  So when every
path named is a file inside a project (a directory holding the
configuration file, or else the git work tree), or when the run is given
its project (projects.py), the run reads the whole project, with the cache
and the stat index as usual, and keeps:

- the findings located in a file named or under a directory named, and
- the findings located elsewhere whose fix edits a file named (a missing
  setting reported at the app but added in the settings module named).

Fixes are applied only to the files named (and those under the
directories named).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..config.settings import Settings, glob_match, relative_path
from ..core.model import Finding

# The non-Python files the project model reads from disk (Redis
# configuration, compose files, the files that start workers): named on the
# command line they choose what is reported, and are never parsed as Python.
# The pre-commit hooks pass the same names (tests/test_precommit.py).
PROJECT_FILES = re.compile(
    r"^(?:Procfile[^/]*|Dockerfile[^/]*|Makefile|\.env[^/]*|[^/]*\.(?:sh|service|ini|toml|cfg|conf|ya?ml|json|env))$"
)


@dataclass(frozen=True)
class Focus:
    directory: Path  # the project read whole
    files: frozenset[str]  # the files named, relative to the root as findings are
    directories: tuple[str, ...] = ()  # the directories named, relative to the root

    def holds(self, rel: str) -> bool:
        """Whether the file ``rel`` is named, or inside a directory named."""
        if rel in self.files:
            return True
        return bool(self.directories) and any(rel.startswith(d + "/") for d in self.directories)

    def held(self, results) -> set[str]:
        """The paths of ``results`` (FileResults) that are named."""
        return {r.path for r in results if self.holds(r.path)}


def focus(paths: list[Path], settings: Settings, directory: Path | None = None) -> Focus | None:
    """The focus of a run on ``paths`` in the project ``directory`` (by
    default, when every path is a file: the directory of the configuration
    file, else the git work tree), or None for a run that lints what it is
    given: the project itself named, no project, or a path outside it."""
    if not paths:
        return None
    if directory is None:
        if any(p.is_dir() for p in paths):
            return None
        directory = project_directory(settings)
        if directory is None:
            return None
    top = os.path.realpath(directory)
    files: set[str] = set()
    directories: list[str] = []
    for path in paths:
        real = os.path.realpath(path)
        if real == top:
            return None  # the whole project
        if not real.startswith(top.rstrip(os.sep) + os.sep):
            return None
        rel = relative_path(path, settings.root)
        if path.is_dir():
            directories.append(rel.rstrip("/"))
        else:
            files.add(rel)
    return Focus(_walkable(directory), frozenset(files), tuple(directories))


def _walkable(directory: Path) -> Path:
    """The directory relative to the working directory when it is inside
    it: files found under it are then made relative without pathlib."""
    relative = os.path.relpath(directory)
    return Path(relative) if not relative.startswith("..") else Path(directory)


def project_directory(settings: Settings) -> Path | None:
    """The directory of the configuration file; else the git work tree."""
    if settings.config_file is not None:
        return settings.config_dir
    if (settings.root / ".git").exists():
        return settings.root
    return None


def is_project_file(name: str) -> bool:
    return not name.endswith((".py", ".pyi")) and PROJECT_FILES.match(name) is not None


def read_as_other(name: str, rel: str, settings: Settings) -> bool:
    """A non-Python file named on the command line that the project phase
    reads as text (``redis-config-files``)."""
    return any(glob_match(rel, pattern) or glob_match(name, pattern.rsplit("/", 1)[-1])
               for pattern in settings.redis_config_files)


def concerns(finding: Finding, seen: Focus) -> bool:
    if seen.holds(finding.path):
        return True
    fix = finding.fix
    return fix is not None and seen.holds(fix.path or finding.path)


def about(message: str, others: set[str]) -> bool:
    """Whether a notice or an error names a file outside the focus."""
    head = message.split(":", 1)[0]
    return head in others
