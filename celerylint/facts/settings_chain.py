"""Facts that follow settings modules through their star imports
(``from .base import *``), and what each module's text looks like.  The
configuration model reads a Django settings chain from them."""

from __future__ import annotations

import re

import libcst as cst

from ..api.context import FileContext, dotted_name
from ..domain.celeryconf.paths import SETTINGS_PATH, TEST_PATHS_EXCLUDED
from ..api.rule import Checker, Regex

_STAR_IMPORT = re.compile(r"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]+\*", re.MULTILINE)


def record_star_import(ctx: FileContext, node: cst.ImportFrom, module: str, guarded: bool, counter) -> bool:
    """Record ``from x import *`` at module level as a fact; True if recorded.

    Only its order among the settings matters, and its line is found in the
    text (star imports are module-level only): the file need not pay for
    libcst's positions, a codegen pass, just for this fact.  ``counter``
    (the collector) remembers how many star imports it has seen."""
    if not isinstance(node.names, cst.ImportStar) or not ctx.at_module_level:
        return False
    name = dotted_name(node.module) if node.module else ""
    target = ctx.resolve_relative(len(node.relative), name)
    counter.stars_seen = getattr(counter, "stars_seen", 0) + 1
    line = 1
    for i, match in enumerate(_STAR_IMPORT.finditer(ctx.text), start=1):
        if i == counter.stars_seen:
            line = ctx.text.count("\n", 0, match.start()) + 1
            break
    ctx.fact("star_import", None, module=module, target=target, guarded=guarded,
             line=line, col=0, end_line=line, end_col=0, **({"level": len(node.relative), "name": name} if node.relative else {}))
    return True


def module_info(ctx: FileContext, module: str, settings_like: bool, names: bool = False) -> None:
    """``names``: every upper-case module-level assignment of the file is
    recorded as a ``setting`` fact (ConfigCollector in a settings file), not
    only the Celery settings."""
    text = ctx.text
    ctx.fact("module_info", None, module=module, lines=text.count("\n") + (0 if text.endswith("\n") or not text else 1),
             newline_at_end=text.endswith(("\n", "\r")) or not text, settings_like=settings_like, names=names)


def unpacked(target: cst.Tuple | cst.List, value: cst.BaseExpression) -> list[tuple[cst.Name, cst.BaseExpression]]:
    """``A, B = "x", "y"``: each name with its value (none when the lengths
    differ or an element is starred)."""
    if not isinstance(value, (cst.Tuple, cst.List)) or len(target.elements) != len(value.elements):
        return []
    if any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
        return []
    return [(n.value, v.value) for n, v in zip(target.elements, value.elements) if isinstance(n.value, cst.Name)]


def if_else_branches(node: cst.If, if_id: int) -> dict[int, list[int]]:
    """``if ...: X = a`` / ``elif ...: X = b`` / ``else: X = c`` at module
    level: the id of each assigned name node -> ``[if_id, branch, branches]``,
    so that the model knows X is one of a, b, c.  Empty without ``else``
    (then X may keep an earlier value)."""
    branches = []
    current: cst.BaseSuite | cst.If | cst.Else | None = node
    while isinstance(current, cst.If):
        branches.append(current.body)
        orelse = current.orelse
        if isinstance(orelse, cst.Else):
            branches.append(orelse.body)
            break
        current = orelse
    else:
        return {}
    out: dict[int, list[int]] = {}
    for index, body in enumerate(branches):
        if not isinstance(body, cst.IndentedBlock):
            continue
        for statement in body.body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign):
                        for target in small.targets:
                            if isinstance(target.target, cst.Name):
                                out[id(target.target)] = [if_id, index, len(branches)]
    return out


class SettingsChainCollector(Checker):
    """Star imports in settings modules (``from .base import *``), so that a
    settings file holding nothing else is still read.  Runs only on files
    whose path looks like settings; elsewhere ``ConfigCollector`` records star
    imports of the files it reads anyway."""

    PATHS = (SETTINGS_PATH.pattern, TEST_PATHS_EXCLUDED)
    REQUIRES = (Regex(rb"import[ \t]+\*"),)

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.module = ctx.module_name or ctx.path
        self.guarded = 0

    def _enter_guard(self, node) -> None:
        self.guarded += 1

    def _leave_guard(self, node) -> None:
        self.guarded -= 1

    # an import under ``try:``, ``with suppress(...)`` or ``if os.path.isfile(...):`` is optional
    visit_If = visit_Try = visit_With = _enter_guard
    leave_If = leave_Try = leave_With = _leave_guard

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        record_star_import(self.ctx, node, self.module, self.guarded > 0, self)

    def leave_Module(self, original_node: cst.Module) -> None:
        module_info(self.ctx, self.module, True)


# Ids of the settings this collector records, apart from ConfigCollector's
# (``setting`` and ``setting_value`` facts are joined by path and id).
_CLASS_IDS = 1_000_000
_CONFIGURATIONS = ("configurations.Configuration", "configurations.base.Configuration")
_SPLIT_SETTINGS = ("split_settings.tools.include", "split_settings.include")
_OPTIONAL = ("split_settings.tools.optional", "split_settings.optional")


class SettingsClassCollector(Checker):
    """Settings written as classes and settings split into files:

    - ``settings_class`` (module, name, bases, ``configuration`` for a
      django-configurations ``Configuration``) with ``setting`` facts of
      source ``class:<module>.<name>`` for its upper-case attributes (a
      ``@property`` is a setting whose value is unknown);
    - ``settings_export``: ``Cls.load_settings(__name__)`` (readthedocs'
      loader), the class's settings become the module's;
    - ``settings_include``: django-split-settings ``include("a.py",
      optional("b.py"))``, the files run in the module's namespace."""

    PATHS = (SETTINGS_PATH.pattern, TEST_PATHS_EXCLUDED)
    # A settings class holds indented Celery settings, or is exported by a
    # loader, or is a django-configurations class; an intermediate class of a
    # file with none of these is not read, and the chain through it is unknown.
    REQUIRES = (Regex(rb"\n[ \t]+CELERY_\w+[ \t]+=[ \t]"), Regex(rb"\n[ \t]+BROKER_\w+[ \t]+=[ \t]"),
                b"load_settings(", b"split_settings",
                b"from configurations", b"import configurations")

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.module = ctx.module_name or ctx.path
        self.counter = _CLASS_IDS
        self.recorded = False

    def _setting(self, source: str, name: cst.Name, value: cst.BaseExpression | None) -> None:
        from ..domain.celeryconf.values import encode, setting_value

        self.counter += 1
        encoded = encode(setting_value(value, self.ctx)) if value is not None else None
        self.ctx.fact("setting", name, id=self.counter, source=source, name=name.value, value=encoded,
                      via="class_attr", cond=False)
        if value is not None:
            self.ctx.fact("setting_value", value, id=self.counter)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if len(self.ctx.scopes) != 2 or not isinstance(node.body, cst.IndentedBlock):
            return
        bases = []
        for arg in node.bases:
            if arg.keyword is None and not arg.star:
                bases.append(self.ctx.imported_name(arg.value) or self.ctx.qualify(arg.value) or "?")
        source = f"class:{self.module}.{node.name.value}"
        found = False
        for statement in node.body.body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign) and len(small.targets) == 1:
                        target = small.targets[0].target
                        if isinstance(target, cst.Name) and target.value.isupper():
                            self._setting(source, target, small.value)
                            found = True
                    elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value:
                        if small.target.value.isupper():
                            self._setting(source, small.target, small.value)
                            found = True
            elif isinstance(statement, cst.FunctionDef) and statement.name.value.isupper():
                self._setting(source, statement.name, None)  # a property: computed, unknown
                found = True
        configuration = any(b in _CONFIGURATIONS for b in bases)
        if found or configuration or bases:
            self.recorded = True
            self.ctx.definition_fact("settings_class", node, module=self.module, name=node.name.value,
                                     bases=bases, configuration=configuration)

    def visit_Call(self, node: cst.Call) -> None:
        if not self.ctx.at_module_level:
            return
        func = node.func
        if (isinstance(func, cst.Attribute) and func.attr.value == "load_settings" and isinstance(func.value, cst.Name)
                and len(node.args) == 1 and isinstance(node.args[0].value, cst.Name)
                and node.args[0].value.value == "__name__"):
            self.recorded = True
            self.ctx.fact("settings_export", node, module=self.module, cls=func.value.value,
                          qualified=self.ctx.imported_name(func.value) or "")
        elif self.ctx.imported_name(func) in _SPLIT_SETTINGS:
            files = []
            for arg in node.args:
                value, optional = arg.value, False
                if isinstance(value, cst.Call) and self.ctx.imported_name(value.func) in _OPTIONAL and value.args:
                    value, optional = value.args[0].value, True
                from ..domain.values import evaluate

                name = evaluate(value, self.ctx)
                files.append({"pattern": name if isinstance(name, str) else None, "optional": optional})
            self.recorded = True
            self.ctx.fact("settings_include", node, module=self.module, files=files)

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.recorded:
            module_info(self.ctx, self.module, True)
