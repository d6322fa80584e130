"""Plain, picklable data shared by the engine, the cache and the reporters.

Nothing here imports libcst: reporters and the cache must stay cheap.
Positions are 1-based lines and 0-based columns counted in code points of
the decoded text; reporters convert columns to what their format needs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SEVERITIES = ("error", "warning", "note")
# A finding of the per-file phase that holds only if the project's
# configuration says so (``FileContext.report(..., when=...)``): recorded as a
# fact ``{"kind": DEFERRED_FINDING, "finding": Finding.to_dict(), "when": ...}``
# and judged in the project phase (``domain/celeryconf/conditions.py``).
DEFERRED_FINDING = "deferred-finding"


@dataclass(frozen=True, order=True)
class Edit:
    """Replace the text between two positions of one file with ``content``."""

    line: int
    col: int
    end_line: int
    end_col: int
    content: str


@dataclass(frozen=True)
class Fix:
    description: str
    edits: tuple[Edit, ...]
    safe: bool
    # The file the edits apply to, relative like Finding.path; None means the
    # finding's own file.  Project-level findings may fix another file.
    path: str | None = None


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    message: str
    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    severity: str = "warning"
    fix: Fix | None = None
    hint: str | None = None

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.col, self.code, self.message)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        """The finding ``to_dict`` gave; ValueError when ``data`` is anything
        else (a damaged or foreign cache entry must be a miss, not a crash
        or a wrong report later)."""
        if (type(data) is not dict or data.keys() != _FINDING_KEYS
                or not all(type(data[k]) is str for k in ("code", "name", "message", "path"))
                or not all(type(data[k]) is int for k in _POSITION)
                or data["severity"] not in SEVERITIES or not _optional_str(data["hint"])):
            raise ValueError("not a stored finding")
        fix = data["fix"]
        if fix is not None:
            if (type(fix) is not dict or fix.keys() != _FIX_KEYS or type(fix["description"]) is not str
                    or type(fix["safe"]) is not bool or not _optional_str(fix["path"])
                    or type(fix["edits"]) is not list):
                raise ValueError("not a stored fix")
            edits = []
            for e in fix["edits"]:
                if (type(e) is not dict or e.keys() != _EDIT_KEYS or type(e["content"]) is not str
                        or not all(type(e[k]) is int for k in _POSITION)):
                    raise ValueError("not a stored edit")
                edits.append(Edit(**e))
            fix = Fix(description=fix["description"], edits=tuple(edits), safe=fix["safe"], path=fix["path"])
        return cls(**{**data, "fix": fix})


_POSITION = ("line", "col", "end_line", "end_col")
_FINDING_KEYS = frozenset(("code", "name", "message", "path", *_POSITION, "severity", "fix", "hint"))
_FIX_KEYS = frozenset(("description", "edits", "safe", "path"))
_EDIT_KEYS = frozenset((*_POSITION, "content"))


def _optional_str(value: Any) -> bool:
    return value is None or type(value) is str


@dataclass
class FileResult:
    """What linting one file produced: findings, facts for the project phase
    and internal errors (a rule that raised)."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    facts: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    parsed: bool = False
    digest: str | None = None  # of the bytes linted: fixes apply only to those bytes
    signature: tuple[int, ...] | None = None  # (mtime_ns, size, inode, ctime_ns) when read, for the stat index
    # ``stored_json()``, once made or read from the stat index
    stored_text: str | None = field(default=None, compare=False, repr=False)

    def stored(self) -> dict[str, Any]:
        """What the cache and the stat index keep of it."""
        return {"findings": [f.to_dict() for f in self.findings], "facts": self.facts, "parsed": self.parsed}

    def blank(self) -> bool:
        """Nothing to keep: no finding, no fact, not parsed (the stat index
        keeps ``null``, and a warm run leaves the file out of its results)."""
        return not (self.findings or self.facts or self.parsed)

    def stored_json(self) -> str:
        """``stored()`` as the stat index keeps it (compact JSON), made once."""
        if self.stored_text is None:
            import json

            self.stored_text = json.dumps(self.stored(), separators=(",", ":"), default=str)
        return self.stored_text

    @classmethod
    def from_stored(cls, path: str, raw: dict[str, Any]) -> FileResult:
        """The result ``stored()`` kept for the file ``path``; ValueError when
        ``raw`` has another shape (findings and facts of another file, facts
        without a kind, positions that are not integers...)."""
        if (type(raw) is not dict or raw.keys() != _STORED_KEYS or type(raw["parsed"]) is not bool
                or type(raw["findings"]) is not list or type(raw["facts"]) is not list):
            raise ValueError("not a stored result")
        findings = [Finding.from_dict(f) for f in raw["findings"]]
        if any(f.path != path for f in findings):
            raise ValueError("findings of another file")
        for fact in raw["facts"]:
            if (type(fact) is not dict or type(fact.get("kind")) is not str or fact.get("path") != path
                    or not all(type(fact[k]) is int for k in _POSITION if k in fact)):
                raise ValueError("not a stored fact")
        return cls(path, findings=findings, facts=raw["facts"], parsed=raw["parsed"])


_STORED_KEYS = frozenset(("findings", "facts", "parsed"))
