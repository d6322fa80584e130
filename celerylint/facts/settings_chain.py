"""Facts that follow settings modules through their star imports
(``from .base import *``), and what each module's text looks like.  The
configuration model reads a Django settings chain from them."""

from __future__ import annotations

import re

import libcst as cst

from ..context import FileContext, dotted_name
from ..domain.celeryconf.paths import SETTINGS_PATH
from ..rule import Checker, Regex

_STAR_IMPORT = re.compile(r"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]+\*", re.MULTILINE)


def record_star_import(ctx: FileContext, node: cst.ImportFrom, module: str, guarded: bool, counter) -> bool:
    """Record ``from x import *`` at module level as a fact; True if recorded.

    Only its order among the settings matters, and its line is found in the
    text (star imports are module-level only): the file need not pay for
    libcst's positions, a codegen pass, just for this fact.  ``counter``
    (the collector) remembers how many star imports it has seen."""
    if not isinstance(node.names, cst.ImportStar) or not ctx.at_module_level:
        return False
    target = ctx.resolve_relative(len(node.relative), dotted_name(node.module) if node.module else "")
    counter.stars_seen = getattr(counter, "stars_seen", 0) + 1
    line = 1
    for i, match in enumerate(_STAR_IMPORT.finditer(ctx.text), start=1):
        if i == counter.stars_seen:
            line = ctx.text.count("\n", 0, match.start()) + 1
            break
    ctx.fact("star_import", None, module=module, target=target, guarded=guarded,
             line=line, col=0, end_line=line, end_col=0)
    return True


def module_info(ctx: FileContext, module: str, settings_like: bool) -> None:
    text = ctx.text
    ctx.fact("module_info", None, module=module, lines=text.count("\n") + (0 if text.endswith("\n") or not text else 1),
             newline_at_end=text.endswith(("\n", "\r")) or not text, settings_like=settings_like)


class SettingsChainCollector(Checker):
    """Star imports in settings modules (``from .base import *``), so that a
    settings file holding nothing else is still read.  Runs only on files
    whose path looks like settings; elsewhere ``ConfigCollector`` records star
    imports of the files it reads anyway."""

    PATHS = SETTINGS_PATH.pattern
    REQUIRES = (Regex(rb"import[ \t]+\*"),)

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.module = ctx.module_name or ctx.path
        self.guarded = 0

    def _enter_guard(self, node) -> None:
        self.guarded += 1

    def _leave_guard(self, node) -> None:
        self.guarded -= 1

    visit_Try = visit_With = _enter_guard
    leave_Try = leave_With = _leave_guard

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        record_star_import(self.ctx, node, self.module, self.guarded > 0, self)

    def leave_Module(self, original_node: cst.Module) -> None:
        module_info(self.ctx, self.module, True)
