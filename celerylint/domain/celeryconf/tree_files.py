"""The files beside the Python code that the configuration model reads: one
walk of the tree per run, shared by the launch-file scan
(``launch_files.py``: worker command lines, Celery's environment variables,
under the linted tree) and the ``DJANGO_SETTINGS_MODULE`` search
(``profiles.py``: under the root, not in another project's directory), and
each file read at most once."""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ...core.source import read_capped
from ...core.walk import DEFAULT_EXCLUDE, LAUNCH_FILES, requirement_file, walk

MAX_BYTES = 1 << 20  # as for every launch file
# the files that may name DJANGO_SETTINGS_MODULE (profiles.py), beside the
# launch files (core/walk.LAUNCH_FILES) and every file of a ``.env*`` directory
PROFILE_FILES = re.compile(r"^(?:Procfile.*|Dockerfile.*|\.env.*|.*\.env|Makefile|.*\.(?:sh|service|ini|toml|cfg|conf|ya?ml))$")
_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "manage.py", ".git")


@dataclass
class TreeFile:
    path: Path
    directory: str  # relative to the root, posix, "." for the root
    name: str
    linted: bool  # under the linted tree (the launch-file scan's)
    foreign: bool  # under a directory that holds no linted file and is a project of its own


@dataclass
class TreeFiles:
    files: list[TreeFile] = field(default_factory=list)
    _data: dict[Path, bytes | None] = field(default_factory=dict)

    def read(self, path: Path) -> bytes | None:
        """The file's first ``MAX_BYTES``, or None (a pipe, a device, a larger file, an error)."""
        if path not in self._data:
            try:
                self._data[path] = read_capped(path, MAX_BYTES)
            except OSError:
                self._data[path] = None
        return self._data[path]


def holding_directories(python_files: Iterable[str]) -> set[str]:
    """The directories (relative, "" for the root) that hold a linted file."""
    holding = {""}
    for path in python_files:
        while path:
            path = posixpath.dirname(path)
            if path in holding:
                break
            holding.add(path)
    return holding


def tree_files(root: Path, linted: Path, python_files: Iterable[str]) -> TreeFiles | None:
    """The files under ``root`` either reader may read (by their names), in
    the launch scan's order (sorted); None when the linted tree is not under the root
    (each reader then walks its own)."""
    top = root.as_posix()
    linted_rel = posixpath.relpath(linted.as_posix(), top)
    if linted_rel == ".." or linted_rel.startswith("../"):
        return None
    holding = holding_directories(python_files)
    out = TreeFiles()
    state = {str(root): (".", False, linted_rel == ".")}
    for directory, dirnames, filenames in walk(str(root)):  # iterative: a deep tree is no RecursionError
        rel_dir, foreign, in_linted = state.pop(directory, (".", False, False))
        kept = []
        for name in sorted(d for d in dirnames if d not in DEFAULT_EXCLUDE and not d.endswith(".egg-info")):
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            child_foreign = foreign or (rel not in holding and any(
                os.path.lexists(os.path.join(directory, name, m)) for m in _PROJECT_MARKERS))
            child_linted = in_linted or rel == linted_rel
            if child_foreign and not child_linted and not linted_rel.startswith(rel + "/"):
                continue  # neither reader enters it
            state[os.path.join(directory, name)] = (rel, child_foreign, child_linted)
            kept.append(name)
        dirnames[:] = kept
        env_dir = "/.env" in "/" + rel_dir
        last = rel_dir.rpartition("/")[2]
        for name in sorted(n for n in filenames if env_dir or LAUNCH_FILES.match(n) or PROFILE_FILES.match(n)
                           or requirement_file(last, n)):
            out.files.append(TreeFile(Path(directory, name), rel_dir, name, in_linted, foreign))
    return out


def linted_tree(m) -> Path:
    """The directory whose launch files deploy the linted files: the
    project's root, which a run reads whole (run/focus.py), however its
    Python files are laid out (all of them in ``backend/`` without
    ``__init__.py``, the Procfile and manifests beside it); for files linted
    outside any project, the directory holding them all."""
    try:
        common = os.path.commonpath([os.path.dirname(p) or "." for p in m.project.python_files])
    except ValueError:  # no files, or absolute and relative paths mixed
        common = ""
    if not common.startswith(("/", "..")):
        common = ""
    return Path(m.root) / common


def shared_tree_files(m) -> TreeFiles | None:
    """The one walk both readers share, once per model (``m``: the
    configuration model, its ``root`` and ``project``)."""
    if not hasattr(m, "_tree_files"):
        m._tree_files = tree_files(Path(m.root), linted_tree(m), m.project.python_files)
    return m._tree_files
