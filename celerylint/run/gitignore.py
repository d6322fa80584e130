"""What git ignores, for discovery (``respect-gitignore``, on by default).

As in ruff (and git): only inside a git repository (a directory with
``.git`` above the walked path); the ``.gitignore`` of every directory from
the repository's top down, and ``.git/info/exclude``; a deeper file's
pattern wins over a higher one's, and a later line over an earlier one
(``!keep.py`` re-includes).  Git's global excludes file (``core.excludesFile``)
is not read: what one developer's machine ignores must not change what CI
lints.  Patterns are translated by ``pathspec`` (gitignore_patterns.py).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from ..core.walk import ancestors
from .gitignore_patterns import Memo, Patterns, Seen
from .stat_index import RACY_NS

GITIGNORE = ".gitignore"


def repository_of(directory: str) -> str | None:
    """The top of the git repository holding ``directory`` (absolute), or None."""
    for candidate in ancestors(directory):
        if os.path.exists(os.path.join(candidate, ".git")):
            return candidate
    return None



class Chain:
    """The ignore files that apply in a directory, deepest first: ``links``
    holds (length of prefix, Patterns), the prefix being the ignore file's
    directory relative to the repository with a trailing slash ("" at the
    top).  A chain is only used below its files.  ``literals`` and
    ``searches`` join the name tests of every link, so that a directory whose
    entries no pattern can name costs one set test and one search; ``seen``
    (gitignore_patterns.py) holds the verdicts of directories walked before."""

    __slots__ = ("links", "path_links", "literals", "exact", "key", "seen", "_searches")

    def __init__(self, links: tuple[tuple[int, Patterns], ...], memo: Memo | None = None) -> None:
        self.links = links
        self.path_links = tuple((length, p) for length, p in links if p.path_expression is not None)
        self.literals = frozenset().union(*(p.literals for _, p in links))
        self.key = "|".join(f"{length}:{p.key}" for length, p in links)
        self.seen = memo.seen(self.key) if memo is not None else Seen()
        self._searches: tuple | None = None
        self.exact = True

    @property
    def searches(self) -> tuple:
        if self._searches is None:
            # searched in "\n" + the entries joined by newlines; a glob anchored
            # at the line start (``.*``) as one after a newline: an alternation
            # mixing ``^`` with literals defeats the engine's scan for the first
            # character, and costs several times as much
            globs = [g for _, p in self.links for g in p.name_globs]
            free = [g for g in globs if not g.startswith("^")]
            line = ["\n" + g[1:] for g in globs if g.startswith("^")]
            try:
                self._searches = tuple(re.compile("|".join(f"(?:{g})" for g in group), re.MULTILINE).search
                                       for group in (free, line) if group)
            except re.error:  # then every directory takes the spec-by-spec tests
                self._searches, self.exact = (), False
        return self._searches

    def ignored(self, prefix: str, dirnames: list[str], files: list[str]) -> set[str] | tuple:
        """The names among the entries of the directory ``prefix`` git
        ignores.  First one test of the whole chain on all the entries: the
        usual answer is that no pattern can match here."""
        names = dirnames + files
        searches = self.searches  # compiled first: an expression that does not compile clears ``exact``
        if self.exact and self.literals.isdisjoint(names):
            text = ("\n" + "/\n".join(dirnames) + "/" if dirnames else "") + ("\n" + "\n".join(files) if files else "")
            if text.count("\n") == len(names):  # no entry holds a newline
                for search in searches:
                    if search(text) is not None:
                        break
                else:
                    for length, p in self.path_links:
                        if _near(p, prefix[length:], names):
                            break
                    else:
                        return ()
        return self._ignored_entries(prefix, [d + "/" for d in dirnames] + files, names)

    def _ignored_entries(self, prefix: str, entries: list[str], names: list[str]) -> set[str]:
        """The names of the entries git ignores among those of the directory
        ``prefix``: ``entries`` spelled as git matches them (a directory
        with a trailing slash), ``names`` the same without it.  The cheap
        tests spec by spec (deepest first); the first spec with a verdict on
        an entry decides it."""
        one_per_line = "\n".join(entries).count("\n") == len(entries) - 1
        out: set[str] = set()
        undecided = list(range(len(entries)))
        for length, p in self.links:
            if not undecided:
                break
            base = prefix[length:]
            candidates = _candidates(p, base, entries, names, undecided, one_per_line)
            decided = set()
            for i in sorted(candidates):
                include = p.verdict(base + entries[i])
                if include is not None:
                    decided.add(i)
                    if include:
                        out.add(names[i])
            if decided:
                undecided = [i for i in undecided if i not in decided]
        return out


EMPTY_CHAIN = Chain(())


class GitIgnore:
    """The ignore files that apply under one walked directory, ``top`` (as
    the walk spells it: the directories it yields start with it); ``memo``
    remembers their translations (gitignore_patterns.py)."""

    def __init__(self, top: str, memo_directory: Path | None = None) -> None:
        absolute = os.path.abspath(top)
        self.repo = repository_of(absolute)
        if self.repo is None:
            return
        self.memo = Memo(memo_directory)
        self.started = time.time_ns()
        chain = self._add(EMPTY_CHAIN, os.path.join(self.repo, ".git", "info", "exclude"), 0)
        # the .gitignore files above ``top``: ``top``'s own is read by ``directory``
        parents = ([d for d in ancestors(os.path.dirname(absolute)) if len(d) >= len(self.repo)]
                   if absolute != self.repo else [])
        for directory in reversed(parents):
            chain = self._add(chain, os.path.join(directory, GITIGNORE), len(self._prefix(directory)))
        self.cut = len(top) if top.endswith(os.sep) else len(top) + 1  # where a directory's path below top starts
        self.base = self._prefix(absolute)
        # the chains in force, innermost last, each with the directory (and a
        # separator) below which it applies: the walk is depth first, so
        # the chains of a directory's ancestors are those on this stack
        self.chains: list[tuple[str, Chain]] = [("", chain)]

    def _prefix(self, directory: str) -> str:
        rel = os.path.relpath(directory, self.repo)
        return "" if rel == "." else rel.replace(os.sep, "/") + "/"

    def _add(self, chain: Chain, path: str, length: int) -> Chain:
        """``chain`` with the ignore file ``path`` in front (unchanged when it
        has no pattern or cannot be read)."""
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return chain
        if not any(line.strip() and not line.startswith(b"#") for line in data.splitlines()):
            return chain
        patterns = self.memo.patterns(data)
        if not patterns.rules:
            return chain
        return Chain(((length, patterns), *chain.links), self.memo)

    def directory(self, dirpath: str, dirnames: list[str], filenames: list[str],
                  st: os.stat_result | None = None) -> set[str] | tuple:
        """For discovery, once per directory walked, depth first from
        ``top``: the names among its entries git ignores.  A directory whose
        ``stat`` (``st``) is the one it had when last walked under the same
        ignore files keeps its verdict; like the stat index, a directory
        changed in the last two seconds is not remembered (an entry made in
        the same timestamp tick could go unseen)."""
        chains = self.chains
        while not dirpath.startswith(chains[-1][0]):  # the first, "", always holds
            chains.pop()
        chain = chains[-1][1]
        rel = dirpath[self.cut:]  # "" for top itself
        prefix = self.base + (rel if os.sep == "/" else rel.replace(os.sep, "/")) + "/" if rel else self.base
        if GITIGNORE in filenames:
            chain = self._add(chain, os.path.join(dirpath, GITIGNORE), len(prefix))
            chains.append((dirpath if dirpath.endswith(os.sep) else dirpath + os.sep, chain))
        if not chain.links or not (dirnames or filenames):
            return ()
        if st is None:
            return chain.ignored(prefix, dirnames, filenames)
        stamp = [st.st_mtime_ns, st.st_ino, st.st_ctime_ns]
        known = chain.seen.get(prefix, stamp)
        if known is not None:
            return known
        ignored = chain.ignored(prefix, dirnames, filenames)
        if self.started - stamp[0] >= RACY_NS:
            chain.seen.remember(prefix, stamp, ignored)
        return ignored

    def finish(self) -> None:
        """After the walk: remember what it learnt (gitignore_patterns.py)."""
        if self.repo is not None:
            self.memo.save()


def _near(p: Patterns, base: str, names: list[str]) -> bool:
    """Whether ``p``'s whole-path patterns may match an entry of ``base``."""
    if p.tops is None:
        return True
    return base.partition("/")[0] in p.tops if base else not p.tops.isdisjoint(names)


def _candidates(p: Patterns, base: str, entries: list[str], names: list[str], undecided: list[int],
                one_per_line: bool) -> set[int]:
    """The undecided entries one of ``p``'s cheap tests does not rule out."""
    found: set[int] = set()
    if p.literals and not p.literals.isdisjoint(names):  # the usual answer, in C
        found.update(i for i in undecided if names[i] in p.literals)
    if p.search_name is not None:
        from bisect import bisect_right  # here, not at import: the usual run never gets here

        search = p.search_name
        if not one_per_line:  # an entry holding a newline: one by one
            found.update(i for i in undecided if search.search(entries[i].replace("\n", "\0")) is not None)
        else:
            text = "\n".join(entries[i] for i in undecided)
            starts, offset = [], 0
            for i in undecided:
                starts.append(offset)
                offset += len(entries[i]) + 1
            for match in search.finditer(text):
                found.add(undecided[bisect_right(starts, match.start()) - 1])
    if p.path_expression is not None and _near(p, base, names):
        near = undecided if base or p.tops is None else [i for i in undecided if names[i] in p.tops]
        found.update(i for i in near if p.by_path(base + entries[i]) is not None)
    return found
