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
import re
from bisect import bisect_right
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
    by_name, by_path = _any(spec)
    return spec, by_name, by_path


_ANY_DIRECTORY = "^(?:.+/)?"  # how pathspec starts the expression of a pattern without a slash
_ANY_NAME = "^[^/]*"  # and a pattern starting with ``*``, once the above is taken off
# pathspec's expression of a pattern anchored at a literal first component
# (``/media/``, ``/.claude/skills/``), its ``(?P<ps_d>`` group made plain
_LITERAL = re.compile(r"\^((?:[A-Za-z0-9_-]|\\[^A-Za-z0-9])+)(?:\(\?:/\)|\(\?:\(\?:/\)\|\$\))")
_ANCHORED = re.compile(r"\^((?:[A-Za-z0-9_-]|\\[^A-Za-z0-9])+)(?:/|\(\?:/\)|\(\?:\(\?:/\)\|\$\))")


def _literal(escaped: str) -> str:
    return re.sub(r"\\(.)", r"\1", escaped)


def _any(spec):
    """Two cheap tests, on the last component and on the whole path, at
    least one true wherever one of ``spec``'s patterns may match (their own
    expressions, joined), so that the common path, which no pattern names,
    costs a dictionary look-up and a search; ``check_file`` decides the others.
    A pattern without a slash is matched, as git does, against the last
    component only (its expression minus pathspec's "any directory" prefix).
    (None, None) when the expressions cannot be joined: then ``check_file`` always."""
    try:
        names, paths = [], []
        for p in spec.patterns:
            if p.include is None or p.regex is None:
                continue
            text = p.regex.pattern.replace("(?P<ps_d>", "(?:")
            if not isinstance(text, str):
                return None, None
            if text.startswith(_ANY_DIRECTORY) and "/" not in text[len(_ANY_DIRECTORY):].replace("(?:/)", "").replace("[^/]", ""):
                names.append("^" + text[len(_ANY_DIRECTORY):])
            else:
                paths.append(text)
        # a literal name (build/, local_settings.py), the usual kind: a set look-up, not a search
        literals = {_literal(m.group(1)) for t in names if (m := _LITERAL.fullmatch(t))}
        globs = [t for t in names if not _LITERAL.fullmatch(t)]
        # ``*.pyc``: on one component ``^[^/]*X`` is a search for X, which the
        # engine runs much faster than the backtracking of a leading ``[^/]*``
        parts = [t[len(_ANY_NAME):] if t.startswith(_ANY_NAME) else t for t in globs]
        # searched in a directory's names joined by newlines, one line each: a
        # match must not cross a line (``[^/]`` would)
        joined = "|".join(f"(?:{t})" for t in parts).replace("[^/]", "[^/\n]")
        search_name = re.compile(joined, re.MULTILINE).finditer if parts else None
        by_path = re.compile("|".join(f"(?:{t})" for t in paths)).match if paths else None
    except (AttributeError, re.error):
        return None, None

    by_name = (frozenset(literals), search_name) if names else None
    # Patterns anchored at a literal first component (/media/, /.claude/skills/,
    # the usual kind) can only match under it: ``tops`` (None: any path may match).
    firsts = [_ANCHORED.match(t) for t in paths]
    tops = frozenset(_literal(m.group(1)) for m in firsts) if all(firsts) else None
    return by_name, (by_path, tops) if by_path is not None else None


# A chain: ((length of prefix, spec, by_name, by_path), ...), deepest first; the
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
        entry = name + "/" if is_dir else name
        return bool(GitIgnore.ignored_entries(state, [entry], [name]))

    @staticmethod
    def ignored_entries(state: tuple[Chain, str], entries: list[str], names: list[str]) -> set[str]:
        """The names of the entries git ignores among those of the directory
        of ``state``: ``entries`` spelled as git matches them (a directory
        with a trailing slash), ``names`` the same without it.  This runs for
        every directory walked, so the cheap tests are made for the whole
        directory at once, spec by spec (deepest first): the first spec with
        a verdict on an entry decides it."""
        chain, prefix = state
        out: set[str] = set()
        undecided = list(range(len(entries)))
        for length, spec, by_name, by_path in chain:
            if not undecided:
                break
            base = prefix[length:]
            candidates: set[int] = set()
            if by_name is not None:
                literals, search_name = by_name
                if literals and not literals.isdisjoint(names):  # the usual answer, in C
                    candidates.update(i for i in undecided if names[i] in literals)
                if search_name is not None:
                    # one search over the directory's entries, one per line
                    text = "\n".join(entries if len(undecided) == len(entries) else [entries[i] for i in undecided])
                    if text.count("\n") != len(undecided) - 1:  # an entry holding a newline: one by one
                        candidates.update(i for i in undecided
                                          if next(search_name(entries[i].replace("\n", "\0")), None) is not None)
                    else:
                        starts = None
                        for found in search_name(text):
                            if starts is None:
                                starts, offset = [], 0
                                for i in undecided:
                                    starts.append(offset)
                                    offset += len(entries[i]) + 1
                            candidates.add(undecided[bisect_right(starts, found.start()) - 1])
            if by_path is not None:
                search, tops = by_path
                if base and tops is not None:  # every entry here is under base's first component
                    near = undecided if base.partition("/")[0] in tops else ()
                else:
                    near = [i for i in undecided if tops is None or names[i] in tops]
                candidates.update(i for i in near if search(base + entries[i]) is not None)
            if by_name is None and by_path is None:
                candidates.update(undecided)
            if not candidates:
                continue
            decided = set()
            for i in sorted(candidates):
                include = spec.check_file(base + entries[i]).include
                if include is not None:
                    decided.add(i)
                    if include:
                        out.add(names[i])
            if decided:
                undecided = [i for i in undecided if i not in decided]
        return out
