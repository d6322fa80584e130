"""Ignore files' patterns, translated by pathspec, and what discovery learned
from them, remembered in the cache directory.

``pathspec`` turns each line of an ignore file into a regular expression
(git's wildmatch rules).  Those expressions, with whether each pattern
ignores or re-includes and the cheap tests derived from them (``Patterns``),
are kept in ``gitignore-patterns.json`` keyed by the file's text; so is,
for each chain of ignore files (``Seen``), the verdict on every directory
walked, with the directory's ``stat``.  The memo as a whole is keyed by
pathspec's version and celerylint's (its own source files included), so a
run in a tree that did not change imports no pathspec, compiles no
expression and writes nothing.  The verdict on a path is pathspec's
``GitIgnoreSpec`` rule over those expressions: the last pattern that
matches decides, except that a pattern matching the path itself outranks one
matching only a directory above it, and a directory pattern that ignores
always applies (``test_gitignore.py`` compares it with
``GitIgnoreSpec.check_file``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

MEMO = "gitignore-patterns.json"
MEMO_MAX_FILES = 256  # ignore files (and chains) remembered; past it the memo starts again
MEMO_MAX_BYTES = 64 << 10  # a larger ignore file is translated on every run
SEEN_MAX_DIRECTORIES = 1 << 15  # directories remembered for one chain; past it they are judged again
_DIR_MARK = "ps_d"  # pathspec's group for "matched a directory above the path"

Rule = tuple[str, int, bool]  # (expression, flags, include)


def translate(lines: list[str]) -> list[Rule]:
    from pathspec import GitIgnoreSpec

    return [(p.regex.pattern, p.regex.flags, p.include) for p in GitIgnoreSpec.from_lines(lines).patterns
            if p.include is not None and p.regex is not None]


class Seen:
    """What discovery learned under one chain of ignore files: for each
    directory walked (its path relative to the repository, ``prefix``), the
    ``stat`` it had, as ``[mtime_ns, inode, ctime_ns]``, and the names git
    ignores among its entries.  Entries are checked when used, as the stat
    index's are; ``changed`` when this run learnt anything."""

    __slots__ = ("directories", "changed")

    def __init__(self, directories: dict | None = None) -> None:
        self.directories: dict[str, list] = directories if directories is not None else {}
        self.changed = False

    def get(self, prefix: str, stamp: list[int]) -> set[str] | tuple | None:
        """The names ignored in the directory ``prefix`` if its ``stat`` is still ``stamp``."""
        known = self.directories.get(prefix)
        if type(known) is list and len(known) == 2 and known[0] == stamp:
            ignored = known[1]
            if ignored == []:  # the usual verdict
                return ()
            if _strings(ignored):
                return set(ignored)
        return None

    def remember(self, prefix: str, stamp: list[int], ignored: set[str] | tuple) -> None:
        if len(self.directories) >= SEEN_MAX_DIRECTORIES and prefix not in self.directories:
            self.directories.clear()
        self.directories[prefix] = [stamp, sorted(ignored)]
        self.changed = True


def _strings(value) -> bool:
    return isinstance(value, list) and all(type(v) is str for v in value)


class Memo:
    """Translations of ignore files by content, and what was learnt about
    chains of them, read from and written to ``directory`` (None, as with
    ``--no-cache``: kept for this run only)."""

    def __init__(self, directory: Path | None) -> None:
        self.path = directory / MEMO if directory is not None else None
        self._stored: dict | None = None
        self._seen: dict[str, Seen] = {}
        self._changed = False

    def patterns(self, data: bytes) -> Patterns:
        """The patterns of the ignore file whose text is ``data``."""
        key = data.decode("utf-8", "surrogateescape")  # the file itself: a digest could collide
        if self.path is None:
            return Patterns(translate(data.decode("utf-8", "replace").splitlines()), key)
        import hashlib

        digest = hashlib.blake2b(data, digest_size=12).hexdigest()  # names the file in chains' keys
        if len(data) > MEMO_MAX_BYTES:
            return Patterns(translate(data.decode("utf-8", "replace").splitlines()), digest)
        files = self._load()["files"]
        patterns = Patterns.from_stored(files.get(key), digest)
        if patterns is None:
            patterns = Patterns(translate(data.decode("utf-8", "replace").splitlines()), digest)
            if len(files) >= MEMO_MAX_FILES:
                files.clear()
            files[key] = patterns.stored()
            self._changed = True
        return patterns

    def seen(self, key: str) -> Seen:
        """The record of the chain ``key`` (``Chain.key``)."""
        seen = self._seen.get(key)
        if seen is None:
            raw = self._load()["chains"].get(key)
            seen = self._seen[key] = Seen(raw if isinstance(raw, dict) else None)
        return seen

    def _load(self) -> dict:
        if self._stored is None:
            self._stored = {"files": {}, "chains": {}}
            if self.path is not None:
                from .cache_files import load_json

                raw = load_json(self.path, MEMO_MAX_FILES * MEMO_MAX_BYTES * 4)
                if (isinstance(raw, dict) and raw.get("stamp") == _stamp() and isinstance(raw.get("files"), dict)
                        and isinstance(raw.get("chains"), dict)):
                    self._stored = {"files": raw["files"], "chains": raw["chains"]}
        return self._stored

    def save(self) -> None:
        """Write the memo if this run learnt anything."""
        changed = [(key, seen) for key, seen in self._seen.items() if seen.changed]
        if self.path is None or not (self._changed or changed):
            return
        import json

        from .cache_files import prepare_directory, write_replacing

        chains = self._load()["chains"]
        if len(chains) + len(changed) > MEMO_MAX_FILES:
            chains.clear()
        chains.update((key, seen.directories) for key, seen in changed)
        payload = json.dumps({"stamp": _stamp(), **self._stored}, separators=(",", ":")).encode()
        try:
            prepare_directory(self.path.parent)
            write_replacing(self.path, payload)
        except OSError:
            self.path = None  # a cache that cannot be written: keep translating
        self._changed = False
        for _key, seen in changed:
            seen.changed = False


_STAMP: list[str] = []


def _stamp() -> str:
    """Which code translated and decided: celerylint's version and its
    sources here, and the pathspec installed (its version file's path, size
    and mtime)."""
    if _STAMP:
        return _STAMP[0]
    from .. import __version__

    here = os.path.dirname(__file__)
    parts = [__version__]
    for origin in (os.path.join(here, "gitignore_patterns.py"), os.path.join(here, "gitignore.py"),
                   _pathspec_version_file()):
        try:
            st = os.stat(origin)
            parts.append(f"{origin}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(origin)
    _STAMP.append("\0".join(parts))
    return _STAMP[0]


def _pathspec_version_file() -> str:
    import importlib.util

    spec = importlib.util.find_spec("pathspec")
    return os.path.join(os.path.dirname(spec.origin), "_version.py") if spec and spec.origin else ""


_ANY_DIRECTORY = "^(?:.+/)?"  # how pathspec starts the expression of a pattern without a slash
_ANY_NAME = "^[^/]*"  # and a pattern starting with ``*``, once the above is taken off
# pathspec's expression of a pattern anchored at a literal first component
# (``/media/``, ``/.claude/skills/``), its ``(?P<ps_d>`` group made plain;
# compiled only when an ignore file is split, not on a run that remembers it
_LITERAL = r"\^((?:[A-Za-z0-9_-]|\\[^A-Za-z0-9])+)(?:\(\?:/\)|\(\?:\(\?:/\)\|\$\))"
_ANCHORED = r"\^((?:[A-Za-z0-9_-]|\\[^A-Za-z0-9])+)(?:/|\(\?:/\)|\(\?:\(\?:/\)\|\$\))"


def _literal(escaped: str) -> str:
    return re.sub(r"\\(.)", r"\1", escaped)


class Patterns:
    """The patterns of one ignore file, with two cheap tests at least one of
    which is true wherever a pattern may match, so that the common entry,
    which no pattern names, costs a set look-up and a search; ``verdict``
    decides the others.

    A pattern without a slash is matched, as git does, against the last
    component only: ``literals`` (build/, local_settings.py, the usual kind)
    and ``name_globs`` (expressions to search for in a directory's entries,
    one per line, joined in ``search_name``).  The others, on the whole
    path: ``path_expression`` (None when there are none), matched by
    ``by_path``, and ``tops``, the literal first components they are
    anchored at (/media/), or None when any path may match.  Expressions
    are compiled when first needed; joined ones that do not compile make
    every entry a candidate.  ``key`` names the file's text (``Chain.key``)."""

    def __init__(self, rules: list[Rule], key: str = "", split: tuple | None = None) -> None:
        self.rules = rules
        self.key = key
        self._compiled: list[re.Pattern | None] = [None] * len(rules)
        self._search_name: re.Pattern | None = None
        self._by_path: re.Pattern | None = None
        if split is None:
            split = self._split()
        needles, literals, self.name_globs, self.path_expression, tops = split
        self._needles: list[str | None] = needles  # a string any path a rule matches holds
        self.literals = frozenset(literals)
        self.tops: frozenset[str] | None = None if tops is None else frozenset(tops)

    def _split(self) -> tuple:
        literal_name, anchored = re.compile(_LITERAL), re.compile(_ANCHORED)
        names, paths, needles = [], [], []
        for text, _flags, _include in self.rules:
            text = text.replace("(?P<ps_d>", "(?:")
            rest = text[len(_ANY_DIRECTORY):]
            if text.startswith(_ANY_DIRECTORY) and "/" not in rest.replace("(?:/)", "").replace("[^/]", ""):
                names.append("^" + rest)
                literal = literal_name.fullmatch(names[-1])
            else:
                paths.append(text)
                literal = anchored.match(text)
            needles.append(_literal(literal.group(1)) if literal else None)
        literals = sorted({_literal(m.group(1)) for t in names if (m := literal_name.fullmatch(t))})
        globs = [t for t in names if not literal_name.fullmatch(t)]
        # ``*.pyc``: on one component ``^[^/]*X`` is a search for X, which the
        # engine runs much faster than the backtracking of a leading ``[^/]*``;
        # searched in entries joined by newlines, a match must not cross a line
        name_globs = [(t[len(_ANY_NAME):] if t.startswith(_ANY_NAME) else t).replace("[^/]", "[^/\n]")
                      for t in globs]
        path_expression, tops = None, None
        if paths:
            path_expression = "|".join(f"(?:{t})" for t in paths)
            firsts = [anchored.match(t) for t in paths]
            tops = sorted({_literal(m.group(1)) for m in firsts}) if all(firsts) else None
        return needles, literals, name_globs, path_expression, tops

    def stored(self) -> dict:
        return {"rules": self.rules, "needles": self._needles, "literals": sorted(self.literals),
                "name_globs": self.name_globs, "path_expression": self.path_expression,
                "tops": None if self.tops is None else sorted(self.tops)}

    @classmethod
    def from_stored(cls, raw, key: str) -> Patterns | None:
        """The patterns ``stored`` wrote, or None when ``raw`` is not of that shape."""
        if not isinstance(raw, dict):
            return None
        rules, needles, tops, path = raw.get("rules"), raw.get("needles"), raw.get("tops"), raw.get("path_expression")
        if not (isinstance(rules, list) and all(isinstance(r, list) and len(r) == 3 and type(r[0]) is str
                                                and type(r[1]) is int and type(r[2]) is bool for r in rules)
                and isinstance(needles, list) and len(needles) == len(rules)
                and all(n is None or type(n) is str for n in needles)
                and _strings(raw.get("literals")) and _strings(raw.get("name_globs"))
                and (path is None or type(path) is str) and (tops is None or _strings(tops))):
            return None
        return cls([(a, b, c) for a, b, c in rules], key, (needles, raw["literals"], raw["name_globs"], path, tops))

    @property
    def search_name(self) -> re.Pattern | None:
        if self._search_name is None and self.name_globs:
            self._search_name = _compiled("|".join(f"(?:{g})" for g in self.name_globs), re.MULTILINE)
        return self._search_name

    def by_path(self, path: str) -> re.Match | None:
        if self._by_path is None:
            self._by_path = _compiled(self.path_expression or "(?!)")
        return self._by_path.match(path)

    def verdict(self, path: str) -> bool | None:
        """Whether the patterns ignore ``path`` (relative to the ignore
        file's directory, a directory with a trailing slash): True, False
        (re-included), or None (no pattern matches)."""
        out, out_priority = None, 0
        for index, (text, flags, include) in enumerate(self.rules):
            needle = self._needles[index]
            if needle is not None and needle not in path:  # most rules name a literal: compiled only if needed
                continue
            regex = self._compiled[index]
            if regex is None:
                regex = self._compiled[index] = re.compile(text, flags)
            match = regex.search(path)
            if match is None:
                continue
            dir_mark = match.groupdict().get(_DIR_MARK)
            priority = 1 if dir_mark else 2
            if (include and dir_mark) or priority >= out_priority:
                out, out_priority = include, priority
        return out


def _compiled(expression: str, flags: int = 0) -> re.Pattern:
    """``expression`` compiled, or one that matches everywhere (every entry a candidate)."""
    try:
        return re.compile(expression, flags)
    except re.error:
        return re.compile("", re.MULTILINE)
