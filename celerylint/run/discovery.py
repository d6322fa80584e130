"""Which files to lint: walk directories, honour excludes, keep explicit files."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..core.walk import DEFAULT_EXCLUDE, KEYED_FILES, REQUIREMENTS_SUFFIXES, walk
from ..config.settings import Settings, glob_match, relative_path
from .focus import is_project_file, read_as_other


@dataclass
class Discovery:
    names: list[str] = field(default_factory=list)  # the Python files: sorted, no duplicates
    other: list[Path] = field(default_factory=list)  # non-Python files the project model reads
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    # (path, size, mtime_ns) of the launch files seen (Procfiles, Dockerfiles, ...): the deployment
    # model reads them in the project phase, so they are part of its cached findings' key
    launch: list[tuple[str, int, int]] = field(default_factory=list)
    nested: list[Path] = field(default_factory=list)  # directories that are projects of their own, not entered

    @property
    def python(self) -> list[Path]:
        """``names`` as paths (a warm run of a large tree makes a path only
        of the files it reads: ``runner.lint``)."""
        return [Path(p) for p in self.names]


def _excluded(rel: str, settings: Settings) -> bool:
    return any(glob_match(rel, pattern) for pattern in settings.exclude)


def _pattern_rel(path: Path, settings: Settings) -> str:
    return relative_path(path, settings.config_dir or settings.root)


def discover(paths: list[Path], settings: Settings, cache_dir: Path | None = None,
             nested: Callable[[str, list[str]], bool] | None = None) -> Discovery:
    """The files to lint under ``paths``; ``cache_dir`` keeps what the
    ignore files translate to (gitignore_patterns.py).  ``nested(directory,
    file names)`` says whether a directory below a path walked is a project
    of its own (its own configuration file): it is then not entered."""
    found = Discovery()
    seen: set[str] = set()
    python: list[str] = []
    other: list[str] = []

    def add(target: list[str], path: str, key: str) -> None:
        if key not in seen:
            seen.add(key)
            target.append(path)

    for path in paths:
        if path.is_dir():
            top = str(path)  # a Path has no trailing separator: file[len(top):] starts with one
            absolute = os.path.abspath(top)
            strip = 2 if top == "." else 0  # "./a.py": "a.py", as its Path prints (names are normal)
            walked: tuple[list[str], list[str]] = ([], [])
            _walk(top, settings, found, cache_dir, nested, *walked)
            cut = len(top)
            for target, files in zip((python, other), walked):
                for file in files:
                    key = absolute + file[cut:]  # its absolute form without a syscall per file
                    if key not in seen:
                        seen.add(key)
                        target.append(file[strip:])
        elif path.exists() or path.is_symlink():
            if settings.force_exclude and _excluded(_pattern_rel(path, settings), settings):
                continue
            if is_project_file(path.name):  # a compose file, a Procfile: never parsed as Python
                if read_as_other(path.name, _pattern_rel(path, settings), settings):
                    add(other, str(path), os.path.abspath(path))
                continue
            add(python, str(path), os.path.abspath(path))  # named explicitly: always linted
        else:
            found.skipped.append((str(path), "no such file or directory"))
    found.names = sorted(python, key=_posix)
    found.other = [Path(p) for p in sorted(other, key=_posix)]
    return found


def _posix(path: str) -> str:
    return path if os.sep == "/" else path.replace(os.sep, "/")


def _walk(top: str, settings: Settings, found: Discovery, cache_dir: Path | None,
          nested: Callable[[str, list[str]], bool] | None, python: list[str], other: list[str]) -> None:
    """Append the files under ``top`` to ``python`` and ``other``."""
    wanted_other = settings.redis_config_files
    visited: set[tuple[int, int]] = set()
    git = _gitignore(top, settings, cache_dir)
    for dirpath, dirnames, filenames in walk(top, onerror=lambda e: found.skipped.append((str(e.filename), e.strerror or str(e)))):
        try:
            st = os.stat(dirpath)
            if (st.st_dev, st.st_ino) in visited:
                dirnames[:] = []
                continue
            visited.add((st.st_dev, st.st_ino))
        except OSError:
            st = None
        if nested is not None and dirpath != top and nested(dirpath, filenames):
            found.nested.append(Path(dirpath))
            dirnames[:] = []
            continue
        base = Path(dirpath) if settings.exclude else None
        wanted = [n for n in filenames if n.endswith(_SUFFIXES if wanted_other else _PYTHON)]
        ignored = git.directory(dirpath, dirnames, filenames, st) if git is not None else ()
        keep = []
        for name in sorted(dirnames):
            if name in DEFAULT_EXCLUDE or name.endswith(".egg-info") or name in ignored:
                continue
            if settings.exclude and _excluded(_pattern_rel(base / name, settings), settings):
                continue
            keep.append(name)
        dirnames[:] = keep
        head = dirpath if dirpath.endswith(os.sep) else dirpath + os.sep  # os.path.join, without a call per file
        requirements = dirpath.rstrip(os.sep).endswith(os.sep + "requirements")  # ``requirements/*.txt``
        for name in filenames:
            if KEYED_FILES.match(name) is not None or (requirements and name.endswith(REQUIREMENTS_SUFFIXES)):
                try:
                    stat = os.stat(head + name)
                    found.launch.append((head + name, stat.st_size, stat.st_mtime_ns))
                except OSError:
                    pass
        if not settings.exclude and not ignored:  # the usual directory: its Python files as they are
            python.extend(head + name for name in wanted if name.endswith(_PYTHON))
            wanted = [name for name in wanted if not name.endswith(_PYTHON)]
        directory_rel = None
        for name in wanted:
            if ignored and name in ignored:
                continue
            is_python = name.endswith(_PYTHON)
            if not settings.exclude and is_python:
                python.append(head + name)
                continue
            if directory_rel is None:  # relative_path of each file, with one abspath for the directory
                directory_rel = _pattern_rel(base or Path(dirpath), settings)
            rel = name if directory_rel == "." else f"{directory_rel.rstrip('/')}/{name}"
            if settings.exclude and _excluded(rel, settings):
                continue
            if is_python:
                python.append(head + name)
            elif any(glob_match(rel, pattern) for pattern in wanted_other):
                other.append(head + name)
    if git is not None:
        git.finish()


def _gitignore(top: str, settings: Settings, cache_dir: Path | None):
    """What git ignores under ``top`` (gitignore.py), or None: turned off, or
    not in a git repository."""
    if not settings.respect_gitignore:
        return None
    from .gitignore import GitIgnore

    git = GitIgnore(top, cache_dir)
    return git if git.repo is not None else None


_PYTHON = (".py", ".pyi")
_SUFFIXES = (*_PYTHON, ".conf", ".yml", ".yaml")  # what redis-config-files may name (the globs decide)
