"""Functions that run inside a Django transaction opened outside them, for
CL216: model signal receivers, the ModelAdmin hooks Django runs in
``atomic``, views (a transaction when ``ATOMIC_REQUESTS`` is on), and the
functions an ``atomic`` block of the same module calls, directly or
through one more function.  Messages and the on_commit fix as text edits
for the project phase."""

from __future__ import annotations

import libcst as cst

from ..api.context import FileContext
from ..core.model import Edit, Fix
from .dispatch_syntax import ADMIN_HOOKS, VIEW_HOOKS
from .fresh import params_of
from .transaction_dispatch import NON_ATOMIC_REQUESTS, ON_COMMIT_PREFIX

ADMIN_BASES = frozenset({"django.contrib.admin.ModelAdmin", "django.contrib.admin.options.ModelAdmin"})
# the operations of a django-ninja-extra controller: ``@route.get(...)``, ``@http_post(...)``...
ROUTE_VERBS = frozenset({"get", "post", "put", "patch", "delete", "generic"})
NOT_VIEWS = frozenset({"process_request", "process_view", "process_response", "process_exception",
                       "process_template_response", "__call__", "__init__"})
# what each model signal means for a dispatch in its receiver; None: no on_commit fix
SIGNALS = {
    "pre_save": ("before the row is even written: the task can run before it exists, and `on_commit` "
                 "would not help in autocommit; dispatch from `post_save` with `transaction.on_commit(...)`",
                 False),
    "pre_delete": ("inside the transaction Django opens for the delete", True),
    "post_delete": ("inside the transaction Django opens for the delete", True),
    "m2m_changed": ("inside the transaction Django opens for the change of the relation", True),
    # Django's ``save_base`` sends it after the block of its own transaction: only the caller's can be open
    "post_save": ("after Django's own save transaction, inside the caller's", True),
}
SIGNAL_ORDER = ("pre_save", "pre_delete", "post_delete", "m2m_changed", "post_save")


def signal_context(signals: list[str]) -> tuple[str, str, bool] | None:
    """The signal that decides (the first of ``SIGNAL_ORDER``), its words, and
    whether the on_commit fix is offered."""
    for name in SIGNAL_ORDER:
        if name in signals:
            words, fixable = SIGNALS[name]
            return name, words, fixable
    return None


def _decorated_with(decorators, ctx: FileContext, name: str) -> bool:
    for decorator in decorators:
        expr = decorator.decorator
        parts = [expr, *(a.value for a in expr.args)] if isinstance(expr, cst.Call) else [expr]
        if isinstance(expr, cst.Call):
            parts.append(expr.func)
        if any(ctx.imported_name(p) == name for p in parts):
            return True
    return False


def admin_hook(func: cst.FunctionDef, cls: cst.ClassDef | None, ctx: FileContext) -> bool:
    """A ModelAdmin hook Django calls inside ``transaction.atomic``."""
    return (cls is not None and func.name.value in ADMIN_HOOKS
            and any(ctx.imported_name(b.value) in ADMIN_BASES for b in cls.bases))


def ninja_route(func: cst.FunctionDef, ctx: FileContext) -> bool:
    """An operation of a django-ninja-extra controller (``@route.post(...)``,
    ``@http_get(...)`` imported from ``ninja_extra``), which reads its
    request from ``self.context`` rather than a parameter."""
    for decorator in func.decorators:
        expr = decorator.decorator
        name = ctx.imported_name(expr.func if isinstance(expr, cst.Call) else expr) or ""
        parts = name.split(".")
        if parts[0] != "ninja_extra" or len(parts) < 2:
            continue
        verb = parts[-1]
        if (parts[-2] == "route" and verb in ROUTE_VERBS) or (verb.startswith("http_") and verb[5:] in ROUTE_VERBS):
            return True
    return False


def is_view(func: cst.FunctionDef, cls: cst.ClassDef | None, ctx: FileContext) -> bool:
    """A Django view or view hook: a module-level function whose first
    parameter is ``request``, a method taking ``request`` after ``self``, an
    operation of a django-ninja-extra controller, or a form/DRF hook
    (``form_valid``, ``perform_create``...) of a class with bases; not async
    (``ATOMIC_REQUESTS`` refuses async views), not a middleware, not marked
    ``non_atomic_requests``."""
    if func.asynchronous is not None or _decorated_with(func.decorators, ctx, NON_ATOMIC_REQUESTS):
        return False
    params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    if cls is None:
        return params[:1] == ["request"]
    if ninja_route(func, ctx) and not _decorated_with(cls.decorators, ctx, NON_ATOMIC_REQUESTS):
        return True
    if (cls.name.value.endswith("Middleware") or func.name.value in NOT_VIEWS or not cls.bases
            or _decorated_with(cls.decorators, ctx, NON_ATOMIC_REQUESTS)):
        return False
    return params[1:2] == ["request"] or func.name.value in VIEW_HOOKS


def signal_handler_shaped(func: cst.FunctionDef) -> bool:
    """Takes ``sender`` and ``**kwargs``, as Django requires of a receiver."""
    return "sender" in params_of(func) and isinstance(func.params.star_kwarg, cst.Param)


def on_commit_edits(fact: dict) -> Fix | None:
    """The on_commit fix, as text edits at the call a fact recorded."""
    if not fact.get("fixable"):
        return None
    return Fix("dispatch in `transaction.on_commit(lambda: ...)`", (
        Edit(fact["line"], fact["col"], fact["line"], fact["col"], ON_COMMIT_PREFIX),
        Edit(fact["end_line"], fact["end_col"], fact["end_line"], fact["end_col"], ")"),
    ), False, fact["path"])


def same_function(a: str, b: str) -> bool:
    """Two qualified names of one function, the linted root aside: equal, or
    one a dotted suffix of the other with at least a module and a name."""
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    return short.count(".") >= 1 and long.endswith("." + short)
