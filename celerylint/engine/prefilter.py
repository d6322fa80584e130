"""The byte prefilter of a set of checkers, compiled into one Python function.

Each checker's needles (substrings, ``Regex``, ``All`` and tuples of
alternatives) become one ``and``/``or`` expression.  Every distinct substring
or regular expression is searched at most once per file (a local variable
remembers the answer: ``TASK_DEFINITION`` alone is shared by five checkers),
and the parts of an expression are tried cheapest first (the cost of
refuting it: every alternative of a tuple, one part of an ``All``; nothing
for what an earlier entry most likely searched already), so a file that
matches nothing is refuted by as few substring searches as the needles
allow.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..api.needles import All, Regex, search
from ..registry import Entry, path_patterns

Prefilter = Callable[[bytes, str], list[Entry]]
_cache: dict[tuple[str, ...], Prefilter] = {}
_last: tuple[Sequence[Entry] | None, Prefilter | None] = (None, None)


def prefilter(entries: Sequence[Entry]) -> Prefilter:
    """``f(code, path)``: the entries whose ``REQUIRES`` and ``PATHS`` match."""
    global _last
    if _last[0] is entries:  # a run passes the same list for every file
        return _last[1]
    key = tuple(f"{e.module}.{e.cls}" for e in entries)
    if key not in _cache:
        _cache[key] = _Compiler(entries).function()
    _last = (entries, _cache[key])
    return _cache[key]


class _Compiler:
    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries = list(entries)
        self.atoms: dict[tuple[bool, bytes], int] = {}
        self.known: set[tuple[bool, bytes]] = set()  # atoms of the entries before this one
        self.paths: dict[str, int] = {}  # ``PATHS`` pattern -> ``p<j>``/``q<j>``
        self.scope: dict[str, object] = {"_search": search, "_entries": self.entries}

    def atom(self, needle: bytes) -> tuple[int, str]:
        """(cost, expression) of one substring or regex, remembered in ``a<i>``."""
        is_regex = isinstance(needle, Regex)
        key = (is_regex, bytes(needle))
        index = self.atoms.setdefault(key, len(self.atoms))
        var = f"a{index}"
        if not is_regex:
            test, cost = f"{bytes(needle)!r} in d", 1
        else:
            # compiled on first use (needles._compiled): a run on a few files
            # compiles only the expressions whose literal occurs in them
            self.scope[f"r{index}"] = needle
            test = f"_search(r{index}, d)"
            if needle.literal:  # the literal every match contains, searched once for all needles
                test = f"{self.atom(needle.literal)[1]} and {test}"
            cost = 2 if needle.literal else 4
        if key in self.known:
            cost = 0  # most likely answered already
        return cost, f"({var} if {var} is not None else ({var} := {test}))"

    def expr(self, needle) -> tuple[int, str]:
        if isinstance(needle, (bytes, Regex)):
            return self.atom(needle)
        parts = sorted((self.expr(p) for p in needle), key=lambda p: p[0])
        if not parts:
            return 0, "False" if not isinstance(needle, All) else "True"
        if isinstance(needle, All):  # refuted by its first part that fails
            return parts[0][0], "(" + " and ".join(e for _, e in parts) + ")"
        return sum(c for c, _ in parts), "(" + " or ".join(e for _, e in parts) + ")"

    def function(self) -> Prefilter:
        lines = []
        for i, entry in enumerate(self.entries):
            if not entry.requires:
                continue
            self.known = set(self.atoms)
            _, test = self.expr(tuple(entry.requires))
            for pattern in reversed(path_patterns(entry.paths)) if entry.paths is not None else ():
                j = self.paths.setdefault(pattern, len(self.paths))  # one search per distinct pattern and file
                self.scope[f"p{j}"] = re.compile(pattern).search
                test = f"(q{j} if q{j} is not None else (q{j} := p{j}(path) is not None)) and {test}"
            lines.append(f"    if {test}: out.append(_entries[{i}])")
        names = [f"a{i}" for i in range(len(self.atoms))] + [f"q{j}" for j in range(len(self.paths))]
        init = f"    {' = '.join(names)} = None" if names else ""
        source = "\n".join(["def wanted(d, path):", init, "    out = []", *lines, "    return out"])
        exec(compile(source, "<celerylint prefilter>", "exec"), self.scope)
        return self.scope["wanted"]  # type: ignore[return-value]
