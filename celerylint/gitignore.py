"""What git ignores, for discovery (``respect-gitignore``, on by default).

As in ruff (and git): only inside a git repository (a directory with
``.git`` above the walked path); the ``.gitignore`` of every directory from
the repository's top down, and ``.git/info/exclude``; a deeper file's
pattern wins over a higher one's, and a later line over an earlier one
(``!keep.py`` re-includes).  Git's global excludes file (``core.excludesFile``)
is not read: what one developer's machine ignores must not change what CI
lints.  Patterns are matched by ``pathspec``'s implementation of git's rules.
"""

from __future__ import annotations

import os
from functools import lru_cache

GITIGNORE = ".gitignore"


def repository_of(directory: str) -> str | None:
    """The top of the git repository holding ``directory`` (absolute), or None."""
    for candidate in _ancestors(directory):
        if os.path.exists(os.path.join(candidate, ".git")):
            return candidate
    return None


def _ancestors(directory: str):
    current = directory
    while True:
        yield current
        parent = os.path.dirname(current)
        if parent == current:
            return
        current = parent


@lru_cache(maxsize=None)
def _spec(path: str):
    """The patterns of one ignore file (None when it has none or cannot be read)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    if not any(line.strip() and not line.startswith("#") for line in lines):
        return None
    from pathspec import GitIgnoreSpec

    spec = GitIgnoreSpec.from_lines(lines)
    return spec, _any(spec)


_ANY_DIRECTORY = "^(?:.+/)?"  # how pathspec starts the expression of a pattern without a slash


def _any(spec):
    """A cheap test that is true wherever one of ``spec``'s patterns may
    match (their own expressions, joined), so the common path, which no
    pattern names, costs two searches; ``check_file`` decides the others.
    A pattern without a slash is matched, as git does, against the last
    component only (its expression minus pathspec's "any directory" prefix).
    None when the expressions cannot be joined: then ``check_file`` always."""
    import re

    try:
        names, paths = [], []
        for p in spec.patterns:
            if p.include is None or p.regex is None:
                continue
            text = p.regex.pattern.replace("(?P<ps_d>", "(?:")
            if not isinstance(text, str):
                return None
            if text.startswith(_ANY_DIRECTORY) and "/" not in text[len(_ANY_DIRECTORY):].replace("(?:/)", "").replace("[^/]", ""):
                names.append("^" + text[len(_ANY_DIRECTORY):])
            else:
                paths.append(text)
        by_name = re.compile("|".join(f"(?:{t})" for t in names)).match if names else None
        by_path = re.compile("|".join(f"(?:{t})" for t in paths)).match if paths else None
    except (AttributeError, re.error):
        return None

    seen: dict[str, bool] = {}  # names repeat (__init__.py, tests/): one search each

    def may_match(rel: str, name: str) -> bool:
        hit = seen.get(name)
        if hit is None:
            hit = seen[name] = by_name is not None and by_name(name) is not None
        return hit or (by_path is not None and by_path(rel) is not None)

    return may_match


# A chain: ((length of prefix, spec, may_match), ...), deepest first; the
# prefix is the directory of the ignore file relative to the repository, with
# a trailing slash ("" at the top).  A chain is only used below its files.
Chain = tuple


class GitIgnore:
    """The ignore files that apply under one walked directory."""

    def __init__(self, top: str) -> None:
        top = os.path.abspath(top)
        self.repo = repository_of(top)
        if self.repo is None:
            return
        chain: Chain = ()
        exclude = _spec(os.path.join(self.repo, ".git", "info", "exclude"))
        if exclude is not None:
            chain = ((0, *exclude),)
        # the .gitignore files above ``top``: ``top``'s own is read by ``enter``
        parents = [d for d in _ancestors(os.path.dirname(top)) if len(d) >= len(self.repo)] if top != self.repo else []
        for directory in reversed(parents):
            chain = self._add(chain, directory, self._prefix(directory))
        self.top = (chain, self._prefix(top))

    def _prefix(self, directory: str) -> str:
        rel = os.path.relpath(directory, self.repo)
        return "" if rel == "." else rel.replace(os.sep, "/") + "/"

    @staticmethod
    def _add(chain: Chain, directory: str, prefix: str) -> Chain:
        spec = _spec(os.path.join(directory, GITIGNORE))
        return chain if spec is None else ((len(prefix), *spec), *chain)

    def enter(self, dirpath: str, filenames: list[str], state: tuple[Chain, str] | None) -> tuple[Chain, str]:
        """The state (chain, prefix) of the directory ``dirpath``, from the
        state ``child`` gave for it (None for the walked top)."""
        chain, prefix = self.top if state is None else state
        if GITIGNORE in filenames:
            chain = self._add(chain, dirpath, prefix)
        return chain, prefix

    @staticmethod
    def child(state: tuple[Chain, str], name: str) -> tuple[Chain, str]:
        return state[0], state[1] + name + "/"

    @staticmethod
    def ignored(state: tuple[Chain, str], name: str, is_dir: bool) -> bool:
        """Whether git ignores the entry ``name`` of the directory of ``state``."""
        chain, prefix = state
        if is_dir:
            name += "/"
        probe = prefix + name
        for length, spec, may_match in chain:
            sub = probe[length:]
            if may_match is not None and not may_match(sub, name):
                continue
            include = spec.check_file(sub).include
            if include is not None:
                return include
        return False
