"""One ignore file's patterns: translated by pathspec, remembered by content.

``pathspec`` turns each line of an ignore file into a regular expression
(git's wildmatch rules).  Those expressions, with whether each pattern
ignores or re-includes, are kept in the cache directory
(``gitignore-patterns.json``) keyed by the file's text and pathspec's
version, so a run whose ignore files did not change never imports pathspec
(about 15 ms).  The verdict on a path is pathspec's ``GitIgnoreSpec`` rule
over those expressions: the last pattern that matches decides, except that
a pattern matching the path itself outranks one matching only a directory
above it, and a directory pattern that ignores always applies
(``test_gitignore.py`` compares it with ``GitIgnoreSpec.check_file``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

MEMO = "gitignore-patterns.json"
MEMO_MAX_FILES = 256  # ignore files remembered; past it the memo starts again
MEMO_MAX_BYTES = 64 << 10  # a larger ignore file is translated on every run
_DIR_MARK = "ps_d"  # pathspec's group for "matched a directory above the path"

Rule = tuple[str, int, bool]  # (expression, flags, include)


def translate(lines: list[str]) -> list[Rule]:
    from pathspec import GitIgnoreSpec

    return [(p.regex.pattern, p.regex.flags, p.include) for p in GitIgnoreSpec.from_lines(lines).patterns
            if p.include is not None and p.regex is not None]


class Memo:
    """Translations of ignore files by content, read from and written to
    ``directory`` (None, as with ``--no-cache``: every ignore file is
    translated by pathspec)."""

    def __init__(self, directory: Path | None) -> None:
        self.path = directory / MEMO if directory is not None else None
        self._stored: dict | None = None
        self._stamp: str | None = None

    def rules(self, data: bytes) -> list[Rule]:
        if self.path is None or len(data) > MEMO_MAX_BYTES:
            return translate(data.decode("utf-8", "replace").splitlines())
        key = data.decode("utf-8", "surrogateescape")  # the file itself: no hash to import and compute
        stored = self._load()
        rules = stored.get(key)
        if isinstance(rules, list) and all(isinstance(r, list) and len(r) == 3 and isinstance(r[0], str)
                                           and type(r[1]) is int and type(r[2]) is bool for r in rules):
            return [(a, b, c) for a, b, c in rules]
        rules = translate(data.decode("utf-8", "replace").splitlines())
        if len(stored) >= MEMO_MAX_FILES:
            stored.clear()
        stored[key] = rules
        self._save()
        return rules

    def _load(self) -> dict:
        if self._stored is None:
            self._stored = {}
            if self.path is not None:
                from .cache import load_json

                raw = load_json(self.path, MEMO_MAX_FILES * MEMO_MAX_BYTES * 4)
                if isinstance(raw, dict) and raw.get("pathspec") == self.stamp() and isinstance(raw.get("files"), dict):
                    self._stored = raw["files"]
        return self._stored

    def stamp(self) -> str:
        """Which pathspec translated: its version file's path, size and mtime."""
        if self._stamp is None:
            import importlib.util

            spec = importlib.util.find_spec("pathspec")
            origin = os.path.join(os.path.dirname(spec.origin), "_version.py") if spec and spec.origin else ""
            try:
                st = os.stat(origin)
                self._stamp = f"{origin}:{st.st_size}:{st.st_mtime_ns}"
            except OSError:
                self._stamp = origin
        return self._stamp

    def _save(self) -> None:
        if self.path is None:
            return
        import json

        from .cache import prepare_directory, write_replacing

        payload = json.dumps({"pathspec": self.stamp(), "files": self._stored}).encode()
        try:
            prepare_directory(self.path.parent)
            write_replacing(self.path, payload)
        except OSError:
            self.path = None  # a cache that cannot be written: keep translating


_ANY_DIRECTORY = "^(?:.+/)?"  # how pathspec starts the expression of a pattern without a slash
_ANY_NAME = "^[^/]*"  # and a pattern starting with ``*``, once the above is taken off
# pathspec's expression of a pattern anchored at a literal first component
# (``/media/``, ``/.claude/skills/``), its ``(?P<ps_d>`` group made plain
_LITERAL = re.compile(r"\^((?:[A-Za-z0-9_-]|\\[^A-Za-z0-9])+)(?:\(\?:/\)|\(\?:\(\?:/\)\|\$\))")
_ANCHORED = re.compile(r"\^((?:[A-Za-z0-9_-]|\\[^A-Za-z0-9])+)(?:/|\(\?:/\)|\(\?:\(\?:/\)\|\$\))")


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
    every entry a candidate."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self._compiled: list[re.Pattern | None] = [None] * len(rules)
        self._needles: list[str | None] = [None] * len(rules)  # a string any path a rule matches holds
        self.literals: frozenset[str] = frozenset()
        self.name_globs: list[str] = []
        self.path_expression: str | None = None  # the whole-path patterns' expressions, joined
        self._search_name: re.Pattern | None = None
        self._by_path: re.Pattern | None = None
        self.tops: frozenset[str] | None = None
        self._split()

    def _split(self) -> None:
        names, paths = [], []
        for index, (text, _flags, _include) in enumerate(self.rules):
            text = text.replace("(?P<ps_d>", "(?:")
            rest = text[len(_ANY_DIRECTORY):]
            if text.startswith(_ANY_DIRECTORY) and "/" not in rest.replace("(?:/)", "").replace("[^/]", ""):
                names.append("^" + rest)
                literal = _LITERAL.fullmatch(names[-1])
            else:
                paths.append(text)
                literal = _ANCHORED.match(text)
            if literal:
                self._needles[index] = _literal(literal.group(1))
        self.literals = frozenset(_literal(m.group(1)) for t in names if (m := _LITERAL.fullmatch(t)))
        globs = [t for t in names if not _LITERAL.fullmatch(t)]
        # ``*.pyc``: on one component ``^[^/]*X`` is a search for X, which the
        # engine runs much faster than the backtracking of a leading ``[^/]*``;
        # searched in entries joined by newlines, a match must not cross a line
        self.name_globs = [(t[len(_ANY_NAME):] if t.startswith(_ANY_NAME) else t).replace("[^/]", "[^/\n]")
                           for t in globs]
        if paths:
            self.path_expression = "|".join(f"(?:{t})" for t in paths)
            firsts = [_ANCHORED.match(t) for t in paths]
            self.tops = frozenset(_literal(m.group(1)) for m in firsts) if all(firsts) else None

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
