"""The rule framework: checkers, rules, fixes and their test cases.

A *checker* is a libcst batchable visitor that runs in the engine's single
traversal of a file and may record facts for the project phase.  A *rule* is
a checker with an identity (code, name), documentation (its docstring, in
ruff's sections), test cases and optionally a fix.  A *project rule* runs
once per run over the facts of every file (configuration rules).

Fixes are planned during the traversal, when positions are not known yet,
and built into text edits afterwards by an ``EditBuilder``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import libcst as cst
from libcst.metadata import CodeRange

from .model import Edit, Finding

if TYPE_CHECKING:
    from .context import FileContext
    from .source import LineIndex


@dataclass(frozen=True)
class Case:
    """A test case embedded in a rule.  ``fixed`` is the expected source
    after ``--fix --unsafe-fixes`` (None: the case offers no fix; ``...``:
    not checked).  ``count`` is the expected number of findings of this rule
    (invalid cases: at least one when None).  ``path`` names the file."""

    code: str
    fixed: str | None | type(Ellipsis) = ...
    count: int | None = None
    path: str = "tasks.py"
    config: dict = field(default_factory=dict)

    @property
    def source(self) -> str:
        return textwrap.dedent(self.code).lstrip("\n")

    @property
    def expected(self) -> str | None | type(Ellipsis):
        if isinstance(self.fixed, str):
            return textwrap.dedent(self.fixed).lstrip("\n")
        return self.fixed


def Valid(code: str, path: str = "tasks.py", config: dict | None = None) -> Case:  # noqa: N802
    return Case(code, fixed=..., count=0, path=path, config=config or {})


def Invalid(  # noqa: N802
    code: str, fixed: str | None | type(Ellipsis) = ..., count: int | None = None,
    path: str = "tasks.py", config: dict | None = None,
) -> Case:
    return Case(code, fixed=fixed, count=count, path=path, config=config or {})


class EditBuilder:
    """Turns nodes into text edits once positions are known."""

    def __init__(self, module: cst.Module, positions: dict, index: LineIndex) -> None:
        self.module = module
        self.positions = positions
        self.index = index

    def range(self, node: cst.CSTNode) -> CodeRange:
        return self.positions[node]

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def replace(self, node: cst.CSTNode, new: cst.CSTNode | str) -> Edit:
        r = self.range(node)
        content = new if isinstance(new, str) else self.code(new)
        return Edit(r.start.line, r.start.column, r.end.line, r.end.column, content)

    def insert_before(self, node: cst.CSTNode, text: str) -> Edit:
        r = self.range(node)
        return Edit(r.start.line, r.start.column, r.start.line, r.start.column, text)

    def insert_after(self, node: cst.CSTNode, text: str) -> Edit:
        r = self.range(node)
        return Edit(r.end.line, r.end.column, r.end.line, r.end.column, text)

    def statement_lines(self, stmt: cst.CSTNode) -> tuple[int, int]:
        r = self.range(stmt)
        return r.start.line, r.end.line

    def indent_of(self, line: int) -> str:
        text = self.index.line_text(line)
        return text[: len(text) - len(text.lstrip(" \t"))]

    def newline(self) -> str:
        return self.module.default_newline

    def delete_lines(self, first: int, last: int) -> Edit:
        return Edit(first, 0, last + 1, 0, "")

    def insert_lines_after(self, line: int, text: str) -> Edit:
        return Edit(line + 1, 0, line + 1, 0, text)


@dataclass(frozen=True)
class PendingFix:
    description: str
    safe: bool
    build: Callable[[EditBuilder], Iterable[Edit]]


class Regex(bytes):
    """A needle that is a regular expression (bytes) rather than a substring."""

    def __repr__(self) -> str:
        return f"Regex({bytes(self)!r})"


class All(tuple):
    """A needle made of parts that must all occur; a part is a byte string, a
    ``Regex``, or a tuple of alternatives (any one of them).  Each part is a
    fast substring search, where a regular expression with lookaheads would
    step through the whole file character by character."""

    def __repr__(self) -> str:
        return f"All({tuple(self)!r})"


class Checker(cst.BatchableCSTVisitor):
    """Runs in the shared traversal.  ``NEEDLES``: the file is parsed for this
    checker only if one of these byte strings (or ``Regex`` patterns) occurs
    in it; an exact, conservative prefilter.  Empty means never."""

    NEEDLES: ClassVar[tuple[bytes, ...]] = ()
    # A regular expression on the file's path (relative, posix): when set, the
    # checker runs only on files whose path matches it.
    PATHS: ClassVar[str | None] = None

    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx


class Rule(Checker):
    CODE: ClassVar[str] = ""
    NAME: ClassVar[str] = ""
    SEVERITY: ClassVar[str] = "warning"
    SUMMARY: ClassVar[str] = ""  # one line
    FIX: ClassVar[str] = "none"  # none | safe | unsafe | sometimes
    HINT: ClassVar[str | None] = None  # printed under a finding that has no fix
    TAGS: ClassVar[tuple[str, ...]] = ()
    OPTIONS: ClassVar[tuple[str, ...]] = ()  # configuration keys the rule reads
    VALID: ClassVar[tuple[Case, ...]] = ()
    INVALID: ClassVar[tuple[Case, ...]] = ()

    def report(self, node: cst.CSTNode, message: str, fix: PendingFix | None = None) -> None:
        self.ctx.report(self, node, message, fix)


class ProjectRule:
    """A rule over the facts of the whole run (configuration rules).

    ``check`` returns finished findings; their fixes carry text edits built
    from the positions recorded in the facts."""

    CODE: ClassVar[str] = ""
    NAME: ClassVar[str] = ""
    SEVERITY: ClassVar[str] = "warning"
    SUMMARY: ClassVar[str] = ""
    FIX: ClassVar[str] = "none"
    HINT: ClassVar[str | None] = None
    TAGS: ClassVar[tuple[str, ...]] = ()
    OPTIONS: ClassVar[tuple[str, ...]] = ()
    VALID: ClassVar[tuple[Case, ...]] = ()
    INVALID: ClassVar[tuple[Case, ...]] = ()

    def check(self, project: object) -> Iterable[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError

    def finding(self, message: str, path: str, line: int, col: int = 0, end_line: int | None = None,
                end_col: int | None = None, fix=None) -> Finding:
        return Finding(
            code=self.CODE, name=self.NAME, message=message, path=path, line=line, col=col,
            end_line=end_line or line, end_col=end_col if end_col is not None else col,
            severity=self.SEVERITY, fix=fix, hint=None if fix else self.HINT,
        )
