"""Facts for CL209: every task's keyword parameters, and the ``.delay``/
``.s``/``.si`` calls that pass an execution option."""

from __future__ import annotations

import libcst as cst

from ..context import FileContext, dotted_name
from ..domain.tasks import TASK_DEFINITION, function_task_options, is_task_class
from ..rule import All, Checker, Regex

# Execution options of ``Task.apply_async`` (celery 5.7, task.py:587-761).
EXECUTION_OPTIONS = frozenset({
    "countdown", "eta", "expires", "shadow", "connection", "retry", "retry_policy", "time_limit",
    "soft_time_limit", "queue", "exchange", "routing_key", "priority", "serializer", "compression",
    "link", "link_error", "producer", "add_to_parent", "ignore_result", "publisher", "headers", "task_id",
})
# Options no task plausibly takes as a parameter of its own: reported even
# when the task's signature cannot be seen (or takes ``**kwargs``).  Names
# such as ``queue``, ``priority``, ``headers``, ``link``, ``task_id`` are
# common task parameters and are reported only against a known signature.
UNAMBIGUOUS = frozenset({
    "countdown", "eta", "expires", "retry_policy", "link_error", "shadow", "time_limit",
    "soft_time_limit", "add_to_parent", "ignore_result",
})
CALL_METHODS = frozenset({"delay", "s", "si"})
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


def _local_name(ctx: FileContext, name: str) -> str:
    return f"{ctx.module_name}.{name}" if ctx.module_name else f"{ctx.path}::{name}"


class TaskSignatures(Checker):
    """Records every task's keyword parameters and the ``.delay``/``.s``/``.si``
    calls that pass an execution option, for CL209's project phase."""

    # Calls: ``.delay(``, ``.s(``, ``.si(``; definitions: any task.
    REQUIRES = (
        # a call records a fact only when it passes an execution option by keyword
        All((
            Regex(rb"\.\s*(?:delay|si?)\s*\("),
            Regex(rb"\b(?:" + b"|".join(sorted(o.encode() for o in EXECUTION_OPTIONS)) + rb")\s*="),
        )),
        TASK_DEFINITION,
    )

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
        names, var_kw = _signature(node.params, isinstance(bind, cst.Name) and bind.value == "True")
        self._record(node.name.value, names, var_kw)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if len(self.ctx.classes) > 1 or self.ctx.functions:
            return
        if not is_task_class(node, self.ctx):
            if all(isinstance(b.value, cst.Name) and b.value.value == "object" for b in node.bases):
                self.not_tasks.add(node.name.value)
            return
        for stmt in node.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "run":
                names, var_kw = _signature(stmt.params, True)
                self._record(node.name.value, names, var_kw)

    def _record(self, name: str, params: list[str], var_kw: bool) -> None:
        self.ctx.fact(TASK_FACT, name=_local_name(self.ctx, name), short=name, params=params, var_kw=var_kw)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in CALL_METHODS:
            return
        options = [a.keyword.value for a in node.args if a.keyword is not None and a.keyword.value in EXECUTION_OPTIONS]
        if not options:
            return
        target, local = self._target(func.value)
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

    def _target(self, receiver: cst.BaseExpression) -> tuple[str | None, str | None]:
        """The qualified name of the task the call is made on, if it can be
        named, and the name as defined in this module when it is local."""
        if isinstance(receiver, cst.Call) and not receiver.args:
            receiver = receiver.func  # MyTask().delay(...)
        if isinstance(receiver, cst.Name) and receiver.value not in self.ctx.imports:
            bound = self.ctx.lookup(receiver.value)
            if isinstance(bound, cst.Call) and not bound.args and isinstance(bound.func, (cst.Name, cst.Attribute)):
                receiver = bound.func  # task = MyTask()
        name = dotted_name(receiver)
        if name is None or name.partition(".")[0] in ("self", "cls"):
            return None, None
        if name.partition(".")[0] in self.ctx.imports:
            return self.ctx.qualify(receiver), None
        return _local_name(self.ctx, name), name
