"""The texts of the reported files, read once per report: for SARIF columns
and snippets, fingerprints and the source lines of the ``full`` format.

A finding's positions are those of the file as it is on disk when the
report is written (after ``--fix``, the fixed file).  A path that cannot be
read (a broker URL of ``celerylint doctor``, a file removed since) has no
text: the reporters then leave out what needs it."""

from __future__ import annotations

import copy
import os
from dataclasses import replace
from pathlib import Path

from ..core.source import MAX_PARSE_CHARS, DecodeError, LineIndex, decode


class SourceFile:
    def __init__(self, text: str) -> None:
        self.text = text
        self.index = LineIndex(text)
        self._hashes: dict[int, str] | None = None

    @property
    def lines(self) -> int:
        return len(self.index.starts) - (1 if self.text.endswith(("\n", "\r")) else 0)

    def line(self, n: int) -> str:
        return self.index.line_text(n) if 1 <= n <= len(self.index.starts) else ""

    def span(self, line: int, col: int, end_line: int, end_col: int) -> str:
        return self.text[self.index.offset(line, col):self.index.offset(end_line, end_col)]

    def line_hashes(self) -> dict[int, str]:
        """GitHub's ``primaryLocationLineHash`` of each line.  Hashing is a
        per-character loop: skipped for huge files (CL001 "too large")."""
        if self._hashes is None:
            from .fingerprint import line_hashes

            self._hashes = line_hashes(self.text) if len(self.text) <= MAX_PARSE_CHARS else {}
        return self._hashes


class Sources:
    """The texts of the reported files: a run's ``texts`` (standard input, an
    editor's buffer: what was linted) first, else the file on disk."""

    def __init__(self, root: Path, texts: dict[str, str] | None = None) -> None:
        self.root = root
        self.cache: dict[str, SourceFile | None] = {rel: SourceFile(text) for rel, text in (texts or {}).items()}

    def get(self, rel: str) -> SourceFile | None:
        if rel not in self.cache:
            self.cache[rel] = None
            if "://" not in rel:
                path = Path(rel) if Path(rel).is_absolute() else self.root / rel
                try:
                    if path.is_file():
                        self.cache[rel] = SourceFile(decode(path.read_bytes()).text)
                except (OSError, DecodeError, ValueError):
                    pass
        return self.cache[rel]


def mover(root: Path):
    """A function taking a path relative to ``root`` to the same path relative
    to the working directory (what the human formats print), or None when
    ``root`` is the working directory.  A URL (a broker's) is left as it is."""
    from ..config.settings import relative_path

    cwd = os.getcwd()
    if os.path.abspath(root) == cwd:
        return None

    def move(rel: str) -> str:
        if not rel or "://" in rel:
            return rel
        return relative_path(Path(os.path.join(root, rel)), Path(cwd))

    return move


def here(result, settings):
    """``result`` and ``settings`` with every path relative to the working
    directory (the human formats), when the report root is not it."""
    move = mover(settings.root)
    if move is None:
        return result, settings
    cwd = os.getcwd()
    moved = copy.copy(result)
    moved.findings = [replace(f, path=move(f.path), fix=replace(f.fix, path=move(f.fix.path)) if f.fix and f.fix.path
                              else f.fix) for f in result.findings]
    for name in ("fixed", "fixed_codes", "texts"):
        if isinstance(getattr(result, name, None), dict):
            setattr(moved, name, {move(k): v for k, v in getattr(result, name).items()})
    return moved, replace(settings, root=Path(cwd))
