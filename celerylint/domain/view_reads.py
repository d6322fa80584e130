"""Whether a view or an ``atomic`` block shows no sign of writing to the
database, for CL216 and CL210.

Under ``ATOMIC_REQUESTS`` a dispatch in a view is a problem only when the
request writes something the task needs, or can roll back after it; the
same holds for an ``atomic`` block (one opened only to lock rows with
``select_for_update(skip_locked=True)``, or for server-side cursors).  A
view or block that only reads (``request.POST.get``, ``Model.objects.filter``,
``get_object_or_404``, a getter such as ``get_progress``), sends tasks and
answers (``redirect``, ``messages.success``, ``Response``) holds nothing for
the task to miss.  Every other call may write (a project helper,
``serializer.save()``, ``super().form_valid(form)``), so one with such a
call stays reported: this only removes those where every call is known to
read.
"""

from __future__ import annotations

import libcst as cst

from .transaction_dispatch import dispatched

# method or function names that read (Django's QuerySet, dicts, request data, Python's builtins)
_READS = frozenset({
    # QuerySet and manager reads
    "all", "filter", "exclude", "get", "first", "last", "exists", "count", "values", "values_list",
    "order_by", "select_related", "prefetch_related", "only", "defer", "annotate", "aggregate", "distinct",
    "none", "in_bulk", "iterator", "latest", "earliest", "using", "get_object_or_404", "get_list_or_404",
    "select_for_update",
    # query expressions
    "F", "Q", "Value", "Subquery", "OuterRef", "Exists", "ExpressionWrapper", "Case", "When", "Count", "Sum",
    "Max", "Min", "Avg", "Coalesce", "Cast", "Lower", "Upper", "Now",
    # task signatures and canvases, built to be sent
    "s", "si", "signature", "group", "chain", "chord",
    # local lists, random values, times shown
    "append", "extend", "randint", "uniform", "choice", "random", "uuid4", "isoformat", "total_seconds",
    # mappings, request data and strings
    "getlist", "items", "keys", "lower", "upper", "strip", "split", "join", "startswith", "endswith",
    "format", "encode", "decode", "replace", "copy",
    # answering the request
    "redirect", "reverse", "reverse_lazy", "render", "render_to_string", "resolve_url", "urlencode",
    "get_success_url", "get_object", "get_queryset", "get_serializer", "get_context_data", "get_form",
    "is_valid", "has_permission", "check_object_permissions",
    # time, text and translation
    "now", "today", "timedelta", "date", "datetime", "isoparse", "parse", "loads", "dumps", "gettext",
    "gettext_lazy", "ugettext", "ugettext_lazy", "_",
})
# Python's builtins, read only when called by their plain name: ``tags.set(...)``
# of a many-to-many manager writes
_BUILTINS = frozenset({
    "str", "int", "float", "bool", "len", "dict", "list", "tuple", "set", "frozenset", "sorted", "min", "max",
    "sum", "any", "all", "isinstance", "getattr", "hasattr", "range", "enumerate", "zip", "repr", "print",
    "super", "iter", "next", "map", "abs", "round",
})
# receivers whose every method only reports: Django's messages framework, loggers
_REPORTERS = frozenset({"messages", "logger", "log", "logging", "LOGGER", "LOG"})
# the name of an exception or a response class (also any ``Http...``), a serializer, a form or a
# model field (in a query expression): building one writes nothing
_CLASS_SUFFIXES = ("Error", "Exception", "Response", "Redirect", "Denied", "NotFound", "DoesNotExist", "Serializer",
                   "Form", "FormSet", "Field")
# getters and predicates by their name (``get_progress``, ``is_active``, ``has_perm``), unless the
# name says it makes or changes something (``get_or_create``)
_GETTERS = ("get_", "is_", "has_", "can_", "check_")
_MAKERS = ("create", "update", "save", "delete", "generate", "make", "new", "add", "remove", "set", "clear",
           "write", "send", "mark", "claim", "lock", "acquire", "incr", "decr", "push", "pop")


def _reads(call: cst.Call) -> bool:
    func = call.func
    if dispatched(call) is not None:
        return True
    if isinstance(func, cst.Name):
        name = func.value
        if name in _BUILTINS:
            return True
    elif isinstance(func, cst.Attribute):
        name = func.attr.value
        if isinstance(func.value, cst.Name) and func.value.value in _REPORTERS:
            return True
    else:
        return False
    if name.startswith(_GETTERS) and not any(word in name.lower() for word in _MAKERS):
        return True
    return name in _READS or name.startswith("Http") or name.endswith(_CLASS_SUFFIXES)


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.all_read = True

    def visit_Call(self, node: cst.Call) -> bool:
        if not _reads(node):
            self.all_read = False
        return self.all_read


def reads_only(node: cst.FunctionDef | cst.With) -> bool:
    """Every call in the body of ``node`` (nested ones included) sends a
    task or is known to read: the view or block writes nothing a task could
    miss."""
    calls = _Calls()
    node.body.visit(calls)
    return calls.all_read
