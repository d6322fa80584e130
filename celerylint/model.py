"""Plain, picklable data shared by the engine, the cache and the reporters.

Nothing here imports libcst: reporters and the cache must stay cheap.
Positions are 1-based lines and 0-based columns counted in code points of
the decoded text; reporters convert columns to what their format needs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SEVERITIES = ("error", "warning", "note")


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
        fix = data.get("fix")
        if fix is not None:
            fix = Fix(
                description=fix["description"],
                edits=tuple(Edit(**e) for e in fix["edits"]),
                safe=fix["safe"],
                path=fix.get("path"),
            )
        return cls(**{**data, "fix": fix})


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

    def stored(self) -> dict[str, Any]:
        """What the cache and the stat index keep of it."""
        return {"findings": [f.to_dict() for f in self.findings], "facts": self.facts, "parsed": self.parsed}

    @classmethod
    def from_stored(cls, path: str, raw: dict[str, Any]) -> FileResult:
        """The result ``stored()`` kept; KeyError, TypeError or ValueError when it is damaged."""
        return cls(path, findings=[Finding.from_dict(f) for f in raw["findings"]], facts=raw["facts"],
                   parsed=raw["parsed"])
