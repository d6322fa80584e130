"""What every checker of one file can ask: imports, bindings, scopes.

Instead of libcst's ScopeProvider/QualifiedNameProvider (3-7x a parse) the
engine keeps a small import-alias table and a per-scope table of simple
assignments, filled in source order during the one shared traversal by
``ContextOpener`` (first visitor of the batch) and ``ContextCloser`` (last),
so a rule's ``visit_*`` sees the scope it is in and the bindings made so far.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import libcst as cst

from ..core.modules import absolute_module

if TYPE_CHECKING:
    from .rule import Fix, Rule


_DEFINITION = re.compile(r"^[ \t]*(?:async[ \t]+)?(def|class)[ \t]+(\w+)", re.MULTILINE)
# Where a name's container may change after it is bound: ``x[k] = v`` (also
# nested, ``x[a][b] = v``), ``x[k] += v``, ``x |= y``, ``x.update(...)`` and the
# other mutating methods of dict, list and set, ``del x[k]``.  Counted in the
# text (strings and comments too: a count too high only makes a value unknown).
_SUBSCRIPT = r"\[[^\[\]\n]*\][ \t]*"
_MUTATION = re.compile(
    r"(?<![\w.])([A-Za-z_]\w*)[ \t]*(?:(?:" + _SUBSCRIPT + r")+=(?!=)|(?:" + _SUBSCRIPT + r")*"
    r"(?:\.(?:update|setdefault|append|extend|insert|pop|popitem|clear|remove|discard|add|sort|reverse)[ \t]*\("
    r"|(?:\*\*|//|>>|<<|[-+*/%&|^@])=))"
)
_DELETION = re.compile(r"\bdel[ \t]+([A-Za-z_]\w*)[ \t]*\[")
_CONTAINER_CALLS = frozenset({"dict", "list", "set"})


def mutation_counts(text: str) -> Counter:
    """Name -> how many places of ``text`` may change the container it holds
    (an item set or deleted, a mutating method, an augmented assignment)."""
    found = Counter(m.group(1) for m in _MUTATION.finditer(text))
    found.update(m.group(1) for m in _DELETION.finditer(text))
    return found


def mutable_container(node: cst.BaseExpression) -> bool:
    """A dict, list or set display, or ``dict(...)``/``list(...)``/``set(...)``."""
    if isinstance(node, (cst.Dict, cst.List, cst.Set)):
        return True
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in _CONTAINER_CALLS


@dataclass
class Scope:
    node: cst.CSTNode | None  # FunctionDef, ClassDef, or None for the module
    bindings: dict[str, cst.BaseExpression] = field(default_factory=dict)
    reassigned: set[str] = field(default_factory=set)
    # ``A, B = f(...)``: name -> (the call, the name's index); None when the
    # name is also bound another way
    unpacked: dict[str, tuple[cst.Call, int] | None] = field(default_factory=dict)
    # ``x = y`` or ``x = y.attr``: y -> {x}; when y is bound again, x no
    # longer holds what ``y`` now means (``rebound``)
    aliases: dict[str, set[str]] = field(default_factory=dict)

    def rebound(self, name: str) -> None:
        """``name`` is bound again: a name bound to it (or to one of its
        attributes) keeps the old value, which is not followed: unknown."""
        for alias in self.aliases.pop(name, ()):
            if alias != name and alias in self.bindings and _root(self.bindings[alias]) == name:
                del self.bindings[alias]
                self.reassigned.add(alias)


def _root(node: cst.CSTNode) -> str | None:
    """``y`` of ``y`` or ``y.a.b``; None for any other expression."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def dotted_name(node: cst.CSTNode) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def _module_dotted(node: cst.BaseExpression | None) -> str:
    return dotted_name(node) or "" if node is not None else ""


class FileContext:
    def __init__(self, path: str, text: str, settings: Any, module_name: str | None) -> None:
        self.path = path
        self.text = text
        self.settings = settings  # the run's config.settings.Settings
        self.module_name = module_name  # dotted name guessed from the path, or None
        self.imports: dict[str, str] = {}  # local name -> qualified name
        self.scopes: list[Scope] = [Scope(None)]
        self.classes: list[cst.ClassDef] = []
        self.functions: list[cst.FunctionDef] = []
        self.self_attrs: dict[str, dict[str, cst.BaseExpression]] = {}  # class -> attr -> value
        self.module: cst.Module | None = None  # the module being visited
        # (rule, node, message, fix, severity: None for the rule's own)
        self.reports: list[tuple[Rule, cst.CSTNode, str, Fix | None, str | None]] = []
        # index in ``reports`` -> what the project must hold for that finding
        # to stand (``domain/celeryconf/conditions.py``): it is judged there
        self.report_conditions: dict[int, dict[str, Any]] = {}
        # id of a client expression -> the condition under which it is the
        # client it was taken for (``domain/backend_client.py``)
        self.client_conditions: dict[int, dict[str, Any]] = {}
        self.facts: list[tuple[dict[str, Any], cst.CSTNode | None]] = []
        self._defs: dict[tuple[str, str], list[int]] | None = None
        self.client_index: dict[str, str] = {}  # the project's client helpers (facts/client_index.py)
        self.client_lookups: dict[str, str | None] = {}  # what the rules asked it, recorded as a fact
        # id of a node made for an option a project task decorator sets (domain/task_decorators.py)
        # -> (that node, the decorator in this file that stands for it in reports and facts)
        self.synthetic: dict[int, tuple[cst.CSTNode, cst.CSTNode]] = {}
        self.module_functions: dict[str, cst.FunctionDef] = {}  # module-level defs seen so far
        # ``from m import *`` seen so far, in order: (module, inside a compound
        # statement such as ``try``); the module may be relative (leading dots)
        # when the file's package is unknown
        self.star_imports: list[tuple[str, bool]] = []
        # containers changed after binding: the sites in the text, and those
        # ``ContextOpener`` folded into the binding exactly (see ``mutated``)
        self._mutation_sites: Counter[str] | None = None
        self.exact_mutations: Counter[str] = Counter()

    # -- output -----------------------------------------------------------
    def report(self, rule: Rule, node: cst.CSTNode, message: str, fix: Fix | None = None,
               when: dict[str, Any] | None = None, *, severity: str | None = None) -> None:
        """``when``: the condition the finding depends on; by default, that of
        the client a reported call is made on (``client_conditions``).
        ``severity``: None for the rule's own."""
        if when is None:
            when = self.condition_of(node)
        if when is not None:
            self.report_conditions[len(self.reports)] = when
        self.reports.append((rule, node, message, fix, severity))

    def condition_of(self, node: cst.CSTNode | None) -> dict[str, Any] | None:
        """The condition of the client ``node`` (a call ``client.method(...)``) is made on."""
        if self.client_conditions and isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            return self.client_conditions.get(id(node.func.value))
        return None

    def fact(self, kind: str, node: cst.CSTNode | None = None, **data: Any) -> None:
        """Record plain data for the project phase; ``node`` adds its position."""
        self.facts.append(({"kind": kind, "path": self.path, **data}, node))

    def definition_fact(self, kind: str, node: cst.FunctionDef | cst.ClassDef, **data: Any) -> None:
        """A fact at the name of a ``def`` or ``class``.  When the text has
        exactly one line defining that name, its position is read from the
        text: positions from libcst cost a code generation of the whole
        module, more than the parse, for files (task modules) that often
        need no other position."""
        name = node.name.value
        keyword = "class" if isinstance(node, cst.ClassDef) else "def"
        found = self._definitions().get((keyword, name), ())
        if len(found) != 1:
            self.fact(kind, node.name, **data)
            return
        start = found[0]
        line = self.text.count("\n", 0, start) + 1
        col = start - (self.text.rfind("\n", 0, start) + 1)
        self.fact(kind, None, **data, line=line, col=col, end_line=line, end_col=col + len(name))

    def _definitions(self) -> dict[tuple[str, str], list[int]]:
        """Where each ``def``/``class`` line of the text puts its name (empty
        when the text has lone carriage returns, which also end lines)."""
        if self._defs is None:
            self._defs = {}
            if self.text.count("\r") == self.text.count("\r\n"):
                for m in _DEFINITION.finditer(self.text):
                    self._defs.setdefault((m.group(1), m.group(2)), []).append(m.start(2))
        return self._defs

    # -- names ------------------------------------------------------------
    def resolve_relative(self, level: int, module: str) -> str:
        """The absolute module of ``from <level dots><module> import``; left
        relative (leading dots) when the file's package is unknown."""
        return absolute_module(self.module_name, self.path, level, module)

    def qualify(self, node: cst.CSTNode) -> str | None:
        """The dotted name of ``node`` with its head resolved through imports.

        ``rds.Redis`` after ``import redis as rds`` gives ``redis.Redis``; a
        name that was not imported is returned as written."""
        name = dotted_name(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        target = self.imports.get(head)
        if target is None:
            return name
        return f"{target}.{rest}" if rest else target

    def imported_name(self, node: cst.CSTNode) -> str | None:
        """Like ``qualify``, but only for names that come from an import:
        the way to recognise library objects (``redis.Redis``, ``celery.Celery``)."""
        name = dotted_name(node)
        if name is None or name.partition(".")[0] not in self.imports:
            return None
        return self.qualify(node)

    def lookup(self, name: str) -> cst.BaseExpression | None:
        """The value last assigned to ``name`` (innermost function first, then
        the module), or None if unknown or assigned in ways we do not follow."""
        for scope in reversed(self.scopes):
            if isinstance(scope.node, cst.ClassDef):
                continue
            if name in scope.reassigned:
                return None
            if name in scope.bindings:
                bound = scope.bindings[name]
                return None if mutable_container(bound) and self.mutated(name) else bound
        return None

    def mutation_sites(self, name: str) -> int:
        """How many places of the text may change the container ``name`` holds."""
        if self._mutation_sites is None:
            self._mutation_sites = mutation_counts(self.text)
        return self._mutation_sites[name]

    def mutated(self, name: str) -> bool:
        """Whether a container bound to ``name`` may differ from its binding:
        some site of the text changes a container of that name in a way (or at
        a point: later, in a loop or a branch) that was not folded into the
        binding.  Its value is then unknown, never the first literal."""
        return self.mutation_sites(name) > self.exact_mutations[name]

    def lookup_unpacked(self, name: str) -> tuple[cst.Call, int] | None:
        """``(call, i)`` when ``name`` is bound only by ``..., name, ... = call(...)``
        (element ``i``), in the innermost scope that binds it."""
        for scope in reversed(self.scopes):
            if isinstance(scope.node, cst.ClassDef):
                continue
            if name in scope.unpacked:
                return scope.unpacked[name] if name not in scope.bindings else None
            if name in scope.reassigned or name in scope.bindings:
                return None
        return None

    def lookup_self_attr(self, attr: str) -> cst.BaseExpression | None:
        if not self.classes:
            return None
        return self.self_attrs.get(self.classes[-1].name.value, {}).get(attr)

    @property
    def function(self) -> cst.FunctionDef | None:
        return self.functions[-1] if self.functions else None

    @property
    def at_module_level(self) -> bool:
        return len(self.scopes) == 1


class ContextOpener(cst.BatchableCSTVisitor):
    """First visitor of the batch: records imports, bindings and scopes."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.nesting = [0]  # compound statements around the current one, per scope

    def visit_Module(self, node: cst.Module) -> None:
        self.ctx.module = node

    def _enter_block(self, node: cst.CSTNode) -> None:
        self.nesting[-1] += 1

    def _leave_block(self, original_node: cst.CSTNode) -> None:
        self.nesting[-1] -= 1

    visit_If = visit_For = visit_While = visit_Try = visit_TryStar = visit_With = visit_Match = _enter_block
    leave_If = leave_For = leave_While = leave_Try = leave_TryStar = leave_With = leave_Match = _leave_block

    def _enter_scope(self) -> None:
        self.nesting.append(0)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.nesting.pop()

    leave_FunctionDef = leave_Lambda = leave_ClassDef

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = _module_dotted(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.ctx.imports[alias.asname.name.value] = full
                self._unbind(alias.asname.name.value)
            else:
                head = full.partition(".")[0]
                self.ctx.imports[head] = head
                self._unbind(head)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            self._star_import(node)
            return
        module = self.ctx.resolve_relative(len(node.relative), _module_dotted(node.module))
        for alias in node.names:
            name = _module_dotted(alias.name)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.ctx.imports[local] = f"{module}.{name}" if module and not module.endswith(".") else f"{module}{name}"
            self._unbind(local)

    def _star_import(self, node: cst.ImportFrom) -> None:
        """``from m import *`` (module level only, as Python requires) may bind
        any public name again: what the module bound before no longer holds."""
        if len(self.ctx.scopes) != 1:
            return
        module = self.ctx.resolve_relative(len(node.relative), _module_dotted(node.module))
        self.ctx.star_imports.append((module, self.nesting[-1] > 0))
        scope = self.ctx.scopes[0]
        for name in [n for n in scope.bindings if not n.startswith("_")]:
            del scope.bindings[name]  # unknown until the module binds it again
        for name in [n for n in scope.unpacked if not n.startswith("_")]:
            scope.unpacked[name] = None

    def _unbind(self, name: str) -> None:
        """An import binds ``name`` again: an earlier assignment no longer holds."""
        scope = self.ctx.scopes[-1]
        scope.rebound(name)
        if name in scope.bindings:
            del scope.bindings[name]
            scope.reassigned.add(name)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.ctx.classes.append(node)
        self.ctx.scopes.append(Scope(node))
        self._enter_scope()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if len(self.ctx.scopes) == 1:
            self.ctx.module_functions[node.name.value] = node
        self.ctx.functions.append(node)
        self.ctx.scopes.append(Scope(node))
        self._enter_scope()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.ctx.scopes.append(Scope(node))
        self._enter_scope()

    def visit_Assign(self, node: cst.Assign) -> None:
        scope = self.ctx.scopes[-1]
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Subscript):
            self._fold_item(scope, node.targets[0].target, node.value)
        for target in node.targets:
            self._bind(scope, target.target, node.value)

    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value
        if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "update"
                and isinstance(call.func.value, cst.Name)):
            self._fold_update(self.ctx.scopes[-1], call.func.value.value, call)

    # -- containers changed in straight-line code, folded into their binding --
    def _foldable(self, scope: Scope, name: str) -> cst.Dict | None:
        """The dict display ``name`` is bound to in this scope, when the
        statement being visited runs exactly once after it (no branch, loop,
        ``try`` or ``with`` around it)."""
        bound = scope.bindings.get(name)
        if self.nesting[-1] or name in scope.reassigned or not isinstance(bound, cst.Dict):
            return None
        if not all(isinstance(e, cst.DictElement) and _literal_key(e.key) is not None for e in bound.elements):
            return None
        return bound

    def _fold(self, scope: Scope, name: str, bound: cst.Dict, items: list[cst.DictElement]) -> None:
        keys = {_literal_key(e.key) for e in items}
        kept = [e for e in bound.elements if isinstance(e, cst.DictElement) and _literal_key(e.key) not in keys]
        scope.bindings[name] = bound.with_changes(elements=[*kept, *items])
        self.ctx.exact_mutations[name] += 1

    def _fold_item(self, scope: Scope, target: cst.Subscript, value: cst.BaseExpression) -> None:
        """``opts["visibility_timeout"] = 9000``"""
        if not (isinstance(target.value, cst.Name) and len(target.slice) == 1
                and isinstance(target.slice[0].slice, cst.Index)):
            return
        key = target.slice[0].slice.value
        bound = self._foldable(scope, target.value.value)
        if bound is not None and _literal_key(key) is not None:
            self._fold(scope, target.value.value, bound, [cst.DictElement(key, value)])

    def _fold_update(self, scope: Scope, name: str, call: cst.Call) -> None:
        """``opts.update({"a": 1})``: a dict display of literal keys (the keys
        stay nodes of the module, so facts about them have a position)"""
        bound = self._foldable(scope, name)
        if bound is None:
            return
        items: list[cst.DictElement] = []
        for arg in call.args:
            if arg.star or arg.keyword is not None:
                return
            if isinstance(arg.value, cst.Dict) and all(
                    isinstance(e, cst.DictElement) and _literal_key(e.key) is not None for e in arg.value.elements):
                items.extend(e for e in arg.value.elements if isinstance(e, cst.DictElement))
            else:
                return
        self._fold(scope, name, bound, items)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(self.ctx.scopes[-1], node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            scope = self.ctx.scopes[-1]
            scope.rebound(node.target.value)
            scope.reassigned.add(node.target.value)
            if node.target.value in scope.unpacked:
                scope.unpacked[node.target.value] = None

    def _bind(self, scope: Scope, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            scope.rebound(target.value)
            scope.bindings[target.value] = value
            root = _root(value)
            if root is not None:
                scope.aliases.setdefault(root, set()).add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            call = value if isinstance(value, cst.Call) and not any(
                isinstance(e, cst.StarredElement) for e in target.elements) else None
            for index, element in enumerate(target.elements):
                if isinstance(element.value, cst.Name):
                    name = element.value.value
                    scope.rebound(name)
                    seen = name in scope.reassigned or name in scope.bindings
                    scope.reassigned.add(name)
                    if call is not None or name in scope.unpacked:
                        scope.unpacked[name] = (call, index) if call is not None and not seen else None
        elif (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == "self"
            and self.ctx.classes
        ):
            attrs = self.ctx.self_attrs.setdefault(self.ctx.classes[-1].name.value, {})
            attrs[target.attr.value] = value


def _literal_key(node: cst.BaseExpression) -> str | int | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    return None


class ContextCloser(cst.BatchableCSTVisitor):
    """Last visitor of the batch: pops scopes after every rule has left them."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.ctx.classes.pop()
        self.ctx.scopes.pop()

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.ctx.functions.pop()
        self.ctx.scopes.pop()

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.ctx.scopes.pop()
