"""The checker base classes and edits of the rule API; ``celerylint.rule`` re-exports them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import libcst as cst

from .cases import Case, Invalid, Valid, django_project
from .context import FileContext
from ..core.model import Edit as TextEdit
from ..core.model import Finding
from ..core.model import Fix as TextFix
from ..core.source import LineIndex
from .needles import All, Regex
from .options import Option
from .syntax import SyntaxCollector

__all__ = [
    "All", "Case", "Checker", "FileContext", "Finding", "Fix",
    "InsertAfter", "InsertBefore", "InsertLinesAfter", "LineIndex", "TextEdit", "TextFix",
    "Invalid", "MoveLinesAfter", "Option", "ProjectRule", "Regex", "RemoveLines", "Replace", "Rule", "SyntaxCollector",
    "Valid", "django_project",
]


# -- fixes as data --------------------------------------------------------------

@dataclass(frozen=True)
class Replace:
    """Replace ``node``'s code with ``new`` (a node, or source text)."""

    node: cst.CSTNode
    new: cst.CSTNode | str


@dataclass(frozen=True)
class InsertBefore:
    node: cst.CSTNode
    text: str


@dataclass(frozen=True)
class InsertAfter:
    node: cst.CSTNode
    text: str


@dataclass(frozen=True)
class RemoveLines:
    """Remove the whole lines ``node`` (a statement) spans."""

    node: cst.CSTNode


@dataclass(frozen=True)
class InsertLinesAfter:
    """Insert ``text`` (whole lines, each ending in ``\\n``, which becomes the
    file's newline) after the last line of ``node``."""

    node: cst.CSTNode
    text: str


@dataclass(frozen=True)
class MoveLinesAfter:
    """Move the lines of each of ``nodes`` (statements), in order, after the
    last line of ``target``."""

    nodes: tuple[cst.CSTNode, ...]
    target: cst.CSTNode


@dataclass(frozen=True)
class Fix:
    """What a finding's fix does: ``description`` (imperative, shown to the
    user), the edits, and whether ``--fix`` applies it without
    ``--unsafe-fixes``."""

    description: str
    edits: tuple[Replace | InsertBefore | InsertAfter | RemoveLines | InsertLinesAfter | MoveLinesAfter, ...]
    safe: bool = False


# -- checkers and rules -------------------------------------------------------------

class _Declared:
    """What every rule declares (documentation is the class docstring, in
    ruff's sections; see CONTRIBUTING.md)."""

    CODE: ClassVar[str] = ""
    NAME: ClassVar[str] = ""
    SEVERITY: ClassVar[str] = "warning"  # error | warning | note
    SUMMARY: ClassVar[str] = ""  # one line
    FIX: ClassVar[str] = "none"  # none | safe | unsafe | sometimes
    HINT: ClassVar[str | None] = None  # printed under a finding that has no fix
    TAGS: ClassVar[tuple[str, ...]] = ()
    # False: the rule runs only when selected by code, prefix or ALL
    # (``select``/``extend-select``), as ruff's rules that are not in its default set
    DEFAULT_ENABLED: ClassVar[bool] = True
    OPTIONS: ClassVar[tuple[Option, ...]] = ()
    VALID: ClassVar[tuple[Case, ...]] = ()
    INVALID: ClassVar[tuple[Case, ...]] = ()

    @classmethod
    def finding(cls, message: str, path: str, line: int, col: int = 0, end_line: int | None = None,
                end_col: int | None = None, fix: TextFix | None = None) -> Finding:
        """A finding of the project phase, at a position a fact recorded."""
        return Finding(
            code=cls.CODE, name=cls.NAME, message=message, path=path, line=line, col=col,
            end_line=end_line or line, end_col=end_col if end_col is not None else col,
            severity=cls.SEVERITY, fix=fix, hint=None if fix else cls.HINT,
        )


class Checker(cst.BatchableCSTVisitor):
    """Runs in the shared traversal of every file that meets ``REQUIRES``
    (and whose relative posix path matches ``PATHS``, a regular expression,
    or each of a tuple of them, when set).  ``GATE``, optional, names a function ``"module:name"`` of a
    module that does not import libcst: given the file's CPython ``ast`` and
    its text, it says whether the checker can find anything there (a
    superset of what it reports); when it says no, the file is not parsed
    for the checker.  ``CONSUMERS``, for a fact collector: the codes of the
    rules that read its facts; when none of them is enabled it does not run
    (empty: it runs whenever a rule of the project phase does)."""

    REQUIRES: ClassVar[tuple] = ()
    PATHS: ClassVar[str | tuple[str, ...] | None] = None
    GATE: ClassVar[str | None] = None
    CONSUMERS: ClassVar[tuple[str, ...]] = ()

    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx

    def option(self, name: str) -> Any:
        return self.ctx.settings.option(name)


class Rule(_Declared, Checker):
    """A file rule.  One that can judge some of what it sees only once the
    whole project is known (a value read from the Django settings) records
    a fact with ``self.ctx.fact(...)`` and defines the classmethod
    ``check_project(project)``, which the project phase calls as it calls a
    ``ProjectRule``'s ``check``.  ``PROJECT_FACTS = "own"`` says that its
    project part judges only facts of the files it reports in (its deferred
    findings): a run on some files then runs it on those files only, not on
    every other file of the project for its facts."""

    PROJECT_FACTS = "project"

    def report(self, node: cst.CSTNode, message: str, fix: Fix | None = None,
               when: dict[str, Any] | None = None, *, severity: str | None = None) -> None:
        """Report ``node``; ``when``: a condition on the project the finding
        depends on, judged in the project phase (see ``FileContext.report``);
        ``severity`` overrides the rule's ``SEVERITY`` for this finding."""
        self.ctx.report(self, node, message, fix, when, severity=severity)


class ProjectRule(_Declared):
    """A rule over the facts of the whole run.  ``check(project)`` yields
    findings made with ``finding(...)``; their fixes carry text edits built
    from the positions recorded in the facts."""

    def check(self, project: Any) -> Iterable[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError

