"""Facts for CL209 and CL213: every task's parameters, the ``.delay``/
``.s``/``.si`` calls that pass an execution option (CL209), and the task
method calls whose arguments can be counted (CL213)."""

from __future__ import annotations


import libcst as cst

from ..api.context import FileContext, dotted_name

from ..domain.tasks import (
    TASK_BASES, class_name, function_task_options, is_task_class,
    reaches_project_class, task_options,
)
from ..domain.task_syntax import CALL_METHODS, EXECUTION_OPTIONS
from .task_signatures import SIGNATURES_REQUIRES
from ..api.rule import Checker
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

# Options no task plausibly takes as a parameter of its own: reported even
# when the task's signature cannot be seen (or takes ``**kwargs``).  Names
# such as ``queue``, ``priority``, ``headers``, ``link``, ``task_id`` are
# common task parameters and are reported only against a known signature.
UNAMBIGUOUS = frozenset({
    "countdown", "eta", "expires", "retry_policy", "link_error", "shadow", "time_limit",
    "soft_time_limit", "add_to_parent", "ignore_result",
})
TASK_FACT = "celery-task-signature"
CALL_FACT = "task-call-with-options"
_EMPTY = cst.Module([])


def _text(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)


def _plain(node: cst.BaseExpression) -> bool:
    """Evaluating it twice, or in another order, cannot matter: literals,
    names, attribute chains, subscripts and containers of these."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.Name)):
        return True
    if isinstance(node, cst.Attribute):
        return _plain(node.value)
    if isinstance(node, cst.Subscript):
        return _plain(node.value) and all(
            isinstance(e.slice, cst.Index) and _plain(e.slice.value) for e in node.slice
        )
    if isinstance(node, cst.UnaryOperation):
        return _plain(node.expression)
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return all(isinstance(e, cst.Element) and _plain(e.value) for e in node.elements)
    if isinstance(node, cst.Dict):
        return all(isinstance(e, cst.DictElement) and _plain(e.key) and _plain(e.value) for e in node.elements)
    return False


def _signature(params: cst.Parameters, bound: bool) -> tuple[list[str], bool]:
    """Names that can be passed by keyword, and whether ``**kwargs`` is taken."""
    names = [p.name.value for p in (*params.params, *params.kwonly_params)]
    if bound and params.params:
        names = names[1:]
    return names, isinstance(params.star_kwarg, cst.Param)


def binding(params: cst.Parameters, bound: bool) -> dict | None:
    """A function's parameters as the data CL213 binds calls against:
    ``pos``, the positional parameters as ``[name, has_default,
    positional_only]`` (the first dropped when the task is bound),
    ``kwonly`` as ``[name, has_default]``, ``var_pos``/``var_kw``; and
    ``text``, the signature as shown in messages (without ``self``), and
    ``bound``."""
    pos = [[p.name.value, p.default is not None, True] for p in params.posonly_params]
    pos += [[p.name.value, p.default is not None, False] for p in params.params]
    if bound:
        if not pos:
            return None  # bind=True on a function without ``self``: broken already
        pos = pos[1:]
    kwonly = [[p.name.value, p.default is not None] for p in params.kwonly_params]
    shown = [n + ("=…" if d else "") for n, d, _ in pos]
    if isinstance(params.star_arg, cst.Param):
        shown.append("*" + params.star_arg.name.value)
    elif kwonly:
        shown.append("*")
    shown += [n + ("=…" if d else "") for n, d in kwonly]
    if isinstance(params.star_kwarg, cst.Param):
        shown.append("**" + params.star_kwarg.name.value)
    return {
        "pos": pos, "kwonly": kwonly, "var_pos": isinstance(params.star_arg, cst.Param),
        "var_kw": isinstance(params.star_kwarg, cst.Param), "text": "(" + ", ".join(shown) + ")", "bound": bound,
    }


# Decorators under the task decorator that keep the function's signature.
SIGNATURE_KEEPING = frozenset({"django.db.transaction.atomic"})


def _plain_task(node: cst.FunctionDef, options: dict, ctx: FileContext) -> bool:
    """The task is called with its function's own signature: ``bind`` is a
    literal, ``base`` (if any) is Celery's ``Task``, and every decorator
    between the task decorator and the function is known to keep the
    signature."""
    bind = options.get("bind")
    if bind is not None and not (isinstance(bind, cst.Name) and bind.value in ("True", "False")):
        return False
    base = options.get("base")
    if base is not None and ctx.imported_name(base) not in TASK_BASES:
        return False
    below = False
    for decorator in node.decorators:
        if below:
            expr = decorator.decorator
            if ctx.imported_name(expr.func if isinstance(expr, cst.Call) else expr) not in SIGNATURE_KEEPING:
                return False
        elif task_options(decorator, ctx) is not None:
            below = True
    return True


def _local_name(ctx: FileContext, name: str) -> str:
    return f"{ctx.module_name}.{name}" if ctx.module_name else f"{ctx.path}::{name}"


SIGNATURE_METHODS = frozenset({"s", "si", "signature"})


def _signature_of(node: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The task of ``task.s(...)``/``task.si(...)``/``task.signature(...)``."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in SIGNATURE_METHODS:
        return node.func.value
    return None


def task_target(ctx: FileContext, receiver: cst.BaseExpression) -> tuple[str | None, str | None]:
    """The qualified name of the task a call is made on (``receiver`` is
    what comes before ``.delay``), if it can be named, and the name as
    defined in this module when it is local."""
    if isinstance(receiver, cst.Name) and receiver.value not in ctx.imports:
        bound = ctx.lookup(receiver.value)
        if _signature_of(bound) is not None:
            receiver = bound  # sig = task.s(1); sig.delay(...)
    if _signature_of(receiver) is not None:
        receiver = _signature_of(receiver)  # task.s(1).delay(...): the task's keywords, whatever is bound already
    if isinstance(receiver, cst.Call) and not receiver.args:
        receiver = receiver.func  # MyTask().delay(...)
    if isinstance(receiver, cst.Name) and receiver.value not in ctx.imports:
        bound = ctx.lookup(receiver.value)
        if (isinstance(bound, cst.Call) and isinstance(bound.func, cst.Attribute) and bound.func.attr.value == "register_task"
                and len(bound.args) == 1 and isinstance(bound.args[0].value, cst.Call)):
            bound = bound.args[0].value  # task = app.register_task(MyTask()): the instance it returns
        if isinstance(bound, cst.Call) and not bound.args and isinstance(bound.func, (cst.Name, cst.Attribute)):
            receiver = bound.func  # task = MyTask()
    name = dotted_name(receiver)
    if name is None or name.partition(".")[0] in ("self", "cls"):
        return None, None
    if name.partition(".")[0] in ctx.imports:
        return ctx.qualify(receiver), None
    return _local_name(ctx, name), name


class TaskSignatures(Checker):
    """Records every task's keyword parameters and the ``.delay``/``.s``/``.si``
    calls that pass an execution option, for CL209's project phase."""

    PATHS = TEST_PATHS_EXCLUDED
    REQUIRES = SIGNATURES_REQUIRES
    # a file it may record a fact in (``may_record_signatures``) that its ``ast`` twin declines
    GATE = "celerylint.domain.signature_twin:signatures_need_libcst"

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        # module-level functions and classes that are certainly not tasks:
        # undecorated functions, classes without bases
        self.not_tasks: set[str] = set()
        self.calls: list[tuple[cst.Call, str | None, dict]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.ctx.classes or len(self.ctx.functions) > 1:
            return
        options = function_task_options(node, self.ctx)
        if options is None:
            if not node.decorators:
                self.not_tasks.add(node.name.value)
            return
        bind = options.get("bind")
        bound = isinstance(bind, cst.Name) and bind.value == "True"
        names, var_kw = _signature(node.params, bound)
        checkable = _plain_task(node, options, self.ctx)
        self._record(node.name.value, names, var_kw, binding(node.params, bound) if checkable else None)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if len(self.ctx.classes) > 1 or self.ctx.functions:
            return
        via = None
        if not is_task_class(node, self.ctx):
            bases = [b.value for b in node.bases if b.keyword is None]
            if not any(reaches_project_class(b, self.ctx) for b in bases):
                if all(isinstance(b.value, cst.Name) and b.value.value == "object" for b in node.bases):
                    self.not_tasks.add(node.name.value)
                return
            via = [class_name(b, self.ctx) for b in bases]  # a task if one of these is (the project phase checks)
        methods = {stmt.name.value: stmt for stmt in node.body.body if isinstance(stmt, cst.FunctionDef)}
        run = methods.get("run")
        if run is not None:
            names, var_kw = _signature(run.params, True)
            # a class that redefines how it is called or sent binds its own way
            checkable = not run.decorators and not {"__call__", "delay", "apply_async", "s", "si", "signature"} & set(methods)
            self._record(node.name.value, names, var_kw, binding(run.params, True) if checkable else None, via)

    def _record(self, name: str, params: list[str], var_kw: bool, sig: dict | None, via: list[str] | None = None) -> None:
        """``sig``: the whole signature for CL213 (see ``binding``), or None
        when the task may not be called with its function's signature;
        ``via``: the bases of a class that is a task only if one of them is
        (``domain.task_classes.confirmed``)."""
        extra = {"via": via} if via else {}
        self.ctx.fact(TASK_FACT, name=_local_name(self.ctx, name), short=name, params=params, var_kw=var_kw, sig=sig,
                      **extra)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in CALL_METHODS:
            return
        options = [a.keyword.value for a in node.args if a.keyword is not None and a.keyword.value in EXECUTION_OPTIONS]
        if not options:
            return
        target, local = task_target(self.ctx, func.value)
        args = [[a.keyword.value if a.keyword else ("**" if a.star == "**" else "*" if a.star else None), _text(a.value)]
                for a in node.args]
        code = _text(node)
        plain = all(not a.star and _plain(a.value) for a in node.args)
        self.calls.append((node, local, dict(
            target=target, short=target.rsplit(".", 1)[-1].rsplit(":", 1)[-1] if target else None,
            method=func.attr.value, receiver=_text(func.value), args=args, options=options,
            plain=plain, comments="#" in code,
        )))

    def leave_Module(self, original_node: cst.Module) -> None:
        for node, local, data in self.calls:
            if local not in self.not_tasks:
                self.ctx.fact(CALL_FACT, node, **data)


# -- CL213: every call of a task method whose arguments can be read ---------------
