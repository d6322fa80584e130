"""Which expressions are Django model instances or querysets, read from
where they come from (never from a type): ``Model.objects.get(...)`` and
the other manager and queryset methods that return instances or querysets,
``get_object_or_404(...)``/``get_list_or_404(...)``, ``request.user`` (a
parameter named ``request``, or ``self.request`` in a class that is not a
task), the ``instance`` argument of a model signal receiver (decorated with
``@receiver``, or a module function connected with ``post_save.connect(f)``
in the same file; not of a delete signal, whose row cannot be fetched again), a local name
last assigned one of these, and the variable of a ``for`` loop over a
queryset.  Anything else is unknown.

Why these are not task arguments: kombu's json encoder (kombu 5.3+) knows
``datetime``, ``date``, ``time``, ``Decimal``, ``UUID``, ``bytes``, lazy
Django strings and objects with ``__json__``; a model instance or a
queryset has none of these, so the json serializer raises at send time,
and pickle carries a copy that is stale when the task runs.
"""

from __future__ import annotations

import libcst as cst

from ..api.context import FileContext
from .dispatch_syntax import MANAGERS, MODEL_SIGNAL_NAMES
from .fresh import params_of
from .task_classes import is_task_class

INSTANCE_METHODS = frozenset({"get", "create", "first", "last", "latest", "earliest", "aget", "acreate"})
QUERYSET_METHODS = frozenset({
    "all", "filter", "exclude", "order_by", "select_related", "prefetch_related", "only", "defer", "distinct",
    "annotate", "none", "using", "values", "values_list", "select_for_update", "reverse",
})
SHORTCUTS = {"django.shortcuts.get_object_or_404": "a model instance",
             "django.shortcuts.get_list_or_404": "a list of model instances"}
MODEL_SIGNALS = frozenset(f"django.db.models.signals.{s}" for s in MODEL_SIGNAL_NAMES)
RECEIVER = "django.dispatch.receiver"
# a deleted row cannot be fetched again: the copy is all the task can have
DELETE_SIGNALS = frozenset({"pre_delete", "post_delete"})
INSTANCE = "a model instance"
QUERYSET = "a queryset"
VALUES = "a queryset of values"
VALUES_METHODS = frozenset({"values", "values_list"})
_MAX_DEPTH = 6


def _model_class(expr: cst.BaseExpression) -> bool:
    """``Order`` or ``models.Order``: a CamelCase name, as Django models are spelled."""
    name = expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else ""
    return name[:1].isupper()


def _manager_chain(expr: cst.BaseExpression) -> str | None:
    """``Order.objects.filter(...).first()`` and the like: what it returns.
    After ``values()``/``values_list()`` the rows are dicts, tuples or plain
    values: such a queryset is ``VALUES`` (not JSON as a whole, but its
    rows and ``.first()`` are)."""
    if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)):
        return None
    last = expr.func.attr.value
    kind = INSTANCE if last in INSTANCE_METHODS else QUERYSET if last in QUERYSET_METHODS else None
    node, rows = expr.func.value, last in VALUES_METHODS
    while kind is not None:
        if isinstance(node, cst.Attribute) and node.attr.value in MANAGERS:
            if not _model_class(node.value):
                return None
            return kind if not rows else VALUES if kind == QUERYSET else None
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and node.func.attr.value in QUERYSET_METHODS):
            return None
        rows = rows or node.func.attr.value in VALUES_METHODS
        node = node.func.value
    return None


def model_signals(func: cst.FunctionDef, ctx: FileContext) -> list[str]:
    """The model signals (``post_save``...) that ``@receiver(...)`` connects
    ``func`` to; empty unless every signal it names is one."""
    for decorator in func.decorators:
        call = decorator.decorator
        if not (isinstance(call, cst.Call) and ctx.imported_name(call.func) == RECEIVER and call.args):
            continue
        first = call.args[0].value
        signals = [e.value for e in first.elements] if isinstance(first, (cst.List, cst.Tuple)) else [first]
        names = [ctx.imported_name(s) or "" for s in signals]
        if names and all(n in MODEL_SIGNALS for n in names):
            return [n.rpartition(".")[2] for n in names]
    return []


class ModelValues:
    """Answers ``kind(expr)`` for a checker, which forwards its ``For``
    visits (the loop variables over querysets) to it."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.loops: list[tuple[cst.For, str, cst.CSTNode | None]] = []  # (loop, its variable, its function)
        self.module: cst.Module | None = None
        self._connected: dict[str, set[str]] | None = None

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    @property
    def connected(self) -> dict[str, set[str]]:
        """Module functions a model signal is connected to in this file
        (``post_save.connect(handler, ...)`` at module level, which comes after
        the function it names: read once, when the imports are known)."""
        if self._connected is None:
            self._connected = self._connections()
        return self._connected

    def _connections(self) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for stmt in self.module.body if self.module is not None else ():
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                call = small.value if isinstance(small, cst.Expr) else None
                if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                        and call.func.attr.value == "connect" and call.args and isinstance(call.args[0].value, cst.Name)
                        and self.ctx.imported_name(call.func.value) in MODEL_SIGNALS):
                    signal = self.ctx.imported_name(call.func.value).rpartition(".")[2]
                    found.setdefault(call.args[0].value.value, set()).add(signal)
        return found

    def visit_For(self, node: cst.For) -> None:
        if isinstance(node.target, cst.Name):
            self.loops.append((node, node.target.value, self.ctx.function))

    def leave_For(self, original_node: cst.For) -> None:
        if self.loops and self.loops[-1][0] is original_node:
            self.loops.pop()

    def kind(self, expr: cst.BaseExpression, _depth: int = 0) -> str | None:
        """``INSTANCE``, ``QUERYSET``, another description, or None (unknown)."""
        ctx = self.ctx
        if isinstance(expr, cst.Call):
            chained = _manager_chain(expr)
            if chained is not None:
                return chained
            return SHORTCUTS.get(ctx.imported_name(expr.func) or "")
        if isinstance(expr, cst.Attribute) and expr.attr.value == "user":
            return "the request's user (a model instance)" if self._request(expr.value) else None
        if isinstance(expr, cst.Name) and _depth < _MAX_DEPTH:
            return self._name(expr.value, _depth)
        return None

    def _name(self, name: str, depth: int) -> str | None:
        ctx = self.ctx
        scope = ctx.scopes[-1]
        local = name in scope.bindings or name in scope.reassigned
        loop = next((n for n, var, fn in reversed(self.loops) if var == name and fn is ctx.function), None)
        if loop is not None:
            return INSTANCE if not local and self.kind(loop.iter, depth + 1) == QUERYSET else None
        if local:
            bound = ctx.lookup(name)
            return self.kind(bound, depth + 1) if bound is not None else None
        func = ctx.function
        if name == "instance" and func is not None and scope.node is func and name in params_of(func):
            signals = set(model_signals(func, ctx))
            if not signals and len(ctx.scopes) == 2:
                signals = self.connected.get(func.name.value, set())
            if signals and not signals & DELETE_SIGNALS:
                return "the signal's model instance"
        return None

    def _request(self, expr: cst.BaseExpression) -> bool:
        """``request`` (a parameter of this function, not rebound) or
        ``self.request`` in a method of a class that is not a task."""
        ctx = self.ctx
        func = ctx.function
        if func is None or ctx.scopes[-1].node is not func:
            return False
        scope = ctx.scopes[-1]
        if isinstance(expr, cst.Name):
            return (expr.value == "request" and "request" in params_of(func)
                    and "request" not in scope.bindings and "request" not in scope.reassigned)
        if (isinstance(expr, cst.Attribute) and expr.attr.value == "request" and isinstance(expr.value, cst.Name)
                and expr.value.value == "self" and len(ctx.scopes) >= 2 and isinstance(ctx.scopes[-2].node, cst.ClassDef)):
            return not is_task_class(ctx.scopes[-2].node, ctx, indexed=True)
        return False
