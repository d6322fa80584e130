"""Which project a linted path belongs to, and that project's settings.

A project is a directory whose files celerylint reads as one whole (the app,
its settings modules, its Redis helpers) and whose configuration applies to
them.  It is found from each linted path, never from the working directory
alone, so that a file gets the same answer however it is named:

1. ``--config FILE``: FILE's settings for every path; the project directory
   is found as in 3-5.
2. The nearest directory at or above the path with a configuration file:
   ``.celerylint.toml``, else ``celerylint.toml``, else a ``pyproject.toml``
   holding ``[tool.celerylint]`` (ruff's order).  ``--isolated`` skips this.
3. Else the top of the git work tree holding the path (what pre-commit and
   CI run from).
4. Else, when the path is inside it, the working directory's own project:
   the nearest directory at or above the working directory with a
   ``pyproject.toml``, ``setup.cfg`` or ``setup.py``, else the working
   directory itself (as ruff and pyright take it; never the home directory
   or ``/``).
5. Else the nearest such directory at or above the path.

A directory named outside any project is a project of its own; a file
outside any project has none, and is linted alone (the run says so).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..core.walk import ancestors
from .settings import Settings
from .table import config_in

MARKERS = ("pyproject.toml", "setup.cfg", "setup.py")  # a Python project without celerylint's configuration
# working directories that never stand for a project: a file named from there has its own or none
_TOO_WIDE = {os.path.abspath(os.path.expanduser("~")), os.path.abspath(os.sep)}


@dataclass(frozen=True)
class Root:
    """The project of a path: its directory (absolute), the configuration
    file that applies (None: the defaults) and why it was chosen."""

    directory: Path
    config: Path | None
    why: str



def git_top(start: str) -> str | None:
    """The top of the git work tree holding ``start`` (a directory), or None."""
    for directory in ancestors(start):
        if os.path.lexists(os.path.join(directory, ".git")):
            return directory
    return None


def marker_dir(start: str) -> str | None:
    """The nearest directory at or above ``start`` holding a Python project's
    file (``MARKERS``), or None."""
    for directory in ancestors(start):
        if any(os.path.isfile(os.path.join(directory, name)) for name in MARKERS):
            return directory
    return None


def inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


class Roots:
    """Finds each path's project and loads each project's settings once.

    ``adjust`` applies the command line's options to every project's
    settings (``--select``, ``--ignore``, ...); ``config`` is ``--config``;
    ``isolated`` reads no configuration file at all."""

    def __init__(self, cwd: Path, known: frozenset[str], *, config: Path | None = None, isolated: bool = False,
                 adjust: Callable[[Settings], Settings] | None = None) -> None:
        self.cwd = os.path.abspath(cwd)
        self.known = known
        self.config = config  # as given: errors name it so
        self.isolated = isolated
        self.adjust = adjust or (lambda s: s)
        self._configs: dict[tuple[str, bool], Path | None] = {}
        self._settings: dict[tuple[str, str | None], Settings] = {}
        self._cwd_project: tuple[str | None] | None = None

    def report_root(self) -> Path:
        """What machine-read reports are relative to: the git work tree of
        the working directory, else the directory of the nearest
        configuration file at or above it (a tree without git that a
        configuration pins: every run from inside it reports the same
        paths), else the working directory."""
        top = git_top(self.cwd)
        if top is not None:
            return Path(top)
        if self.discovers():
            for directory in ancestors(self.cwd):
                if self.config_of(directory) is not None:
                    return Path(directory)
        return Path(self.cwd)

    def config_of(self, directory: str, strict: bool = True) -> Path | None:
        """The configuration file of ``directory`` itself (cached), or None
        (``strict``: see ``table.config_in``)."""
        key = (directory, strict)
        if key not in self._configs:
            self._configs[key] = config_in(Path(directory), strict)
        return self._configs[key]

    def discovers(self) -> bool:
        """Whether configuration files are looked for (no ``--config``, no
        ``--isolated``): a directory walked may then hold another project."""
        return self.config is None and not self.isolated

    def root_of(self, path: Path) -> Root | None:
        """The project of ``path`` (see the module's docstring), or None for
        a file outside any project."""
        absolute = os.path.abspath(path)
        start = absolute if os.path.isdir(absolute) else os.path.dirname(absolute)
        if self.discovers():
            for directory in ancestors(start):
                # strict where configuration was always looked for (the working
                # directory and above); below it, a broken pyproject.toml that never
                # names celerylint (a template's) is passed over, as in the walk
                found = self.config_of(directory, inside(self.cwd, directory))
                if found is not None:
                    return Root(Path(directory), found, f"the configuration file {found}")
        where = self._directory(start, absolute)
        if where is None:
            if os.path.isdir(absolute):
                return Root(Path(absolute), self.config, "a directory outside any project: a project of its own")
            return None
        directory, why = where
        return Root(Path(directory), self.config, why + (f"; --config {self.config}" if self.config else ""))

    def _directory(self, start: str, absolute: str) -> tuple[str, str] | None:
        top = git_top(start)
        if top is not None:
            return top, "the top of its git work tree"
        if self._cwd_project is None:
            self._cwd_project = (marker_dir(self.cwd) or (self.cwd if self.cwd not in _TOO_WIDE else None),)
        here = self._cwd_project[0]
        if here is not None and inside(absolute, here):
            return here, "the project of the working directory (pyproject.toml, setup.cfg or setup.py, else itself)"
        nearest = marker_dir(start)
        if nearest is not None:
            return nearest, "the nearest directory with pyproject.toml, setup.cfg or setup.py"
        return None

    def settings(self, root: Root | None) -> Settings:
        """The settings of a project (``None``: of a file outside any, which
        are the defaults or ``--config``'s, relative to the report root)."""
        directory = root.directory if root is not None else self.report_root()
        config = root.config if root is not None else self.config
        key = (str(directory), str(config) if config is not None else None)
        if key not in self._settings:
            self._settings[key] = self.adjust(self._load(directory, config))
        return self._settings[key]

    def _load(self, directory: Path, config: Path | None) -> Settings:
        from .extend import load_chain

        if config is None:
            return Settings(root=directory, config_dir=directory)
        settings, chain = load_chain(config, directory, self.known)
        return replace(settings, config_file=config, config_dir=config.resolve().parent, config_chain=chain)

