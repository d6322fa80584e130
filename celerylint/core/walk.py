"""The directory walk every reader of the tree shares, and the directories it never enters.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator


def walk(top: str, onerror: Callable[[OSError], object] | None = None) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top, followlinks=False)``, top-down, in the same order, but
    with a stack instead of recursion: before Python 3.12 ``os.walk``
    recurses once per level, so a tree 1,000 directories deep raised
    RecursionError.  Prune by assigning to the yielded ``dirnames``."""
    stack = [top]
    join = os.path.join
    while stack:
        top = stack.pop()
        dirs: list[str] = []
        nondirs: list[str] = []
        links: set[str] = set()  # directories that are symbolic links: listed, not entered
        try:
            entries = os.scandir(top)
        except OSError as error:
            if onerror is not None:
                onerror(error)
            continue
        with entries:
            try:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    if is_dir:
                        dirs.append(entry.name)
                        try:
                            if entry.is_symlink():  # from the directory entry's type: no system call
                                links.add(entry.name)
                        except OSError:
                            links.add(entry.name)
                    else:
                        nondirs.append(entry.name)
            except OSError as error:
                if onerror is not None:
                    onerror(error)
                continue
        yield top, dirs, nondirs
        for name in reversed(dirs):
            if name not in links:
                stack.append(join(top, name))


DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", "node_modules", "build", "dist",
    "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".celerylint_cache", ".eggs",
)


# The names of launch files (``domain/celeryconf/launch_files``, the deployment model): what
# they hold decides findings, so their sizes and times are part of the key
# of the cached project findings (run/discovery.py).
_LAUNCH = r"Procfile.*|Dockerfile.*|Makefile|advanced\.config|.*\.(?:sh|bash|service|ini|toml|cfg|conf|ya?ml|json|dockerfile)"
LAUNCH_FILES = re.compile(rf"^(?:{_LAUNCH})$")
# the files that list the project's dependencies (domain/celeryconf/celery_version.py),
# beside ``requirements/*.txt``: read by the project phase, as launch files are
_REQUIREMENTS = r"requirements[^/]*\.(?:txt|in|pip)|Pipfile|pyproject\.toml|setup\.cfg|setup\.py"
REQUIREMENTS_SUFFIXES = (".txt", ".in", ".pip")  # ``requirements/base.pip`` is a convention too
_REQUIREMENT_FILES = re.compile(rf"^(?:{_REQUIREMENTS})$")
KEYED_FILES = re.compile(rf"^(?:{_LAUNCH}|{_REQUIREMENTS})$")  # either, in one match per file (discovery)


def requirement_file(directory_name: str, name: str) -> bool:
    """A file that lists dependencies: by its name, or a ``.txt``/``.in``/``.pip`` file
    of a ``requirements`` directory (``directory_name``: its directory's last part)."""
    return _REQUIREMENT_FILES.match(name) is not None or (
        directory_name == "requirements" and name.endswith(REQUIREMENTS_SUFFIXES))


def ancestors(directory: str):
    """``directory`` and each directory above it, up to the file system's root."""
    current = directory
    while True:
        yield current
        parent = os.path.dirname(current)
        if parent == current:
            return
        current = parent
