"""How a function uses a Celery app it makes."""

from __future__ import annotations

import libcst as cst


# What an app that runs no tasks is used for: sending by name, inspecting
# and controlling workers, reading events and results, opening a connection
# to the broker (a health check).
_WORK = frozenset({"send_task", "control", "events", "AsyncResult", "GroupResult",
                   "connection", "connection_for_read", "connection_for_write", "broker_connection"})
_ALLOWED = _WORK | {"conf", "pool", "config_from_object", "producer_pool", "amqp"}


class _Uses(cst.CSTVisitor):
    """How a function (or a module) uses the name ``var`` of the app it makes."""

    def __init__(self, var: str) -> None:
        self.var = var
        self.names = 0  # every Name ``var`` (the assignment making the app too)
        self.allowed = 0  # ``var.<attr>`` for an attribute of ``_ALLOWED``
        self.sends = 0  # ``var.<attr>`` for an attribute of ``_WORK``

    def visit_Name(self, node: cst.Name) -> None:
        self.names += node.value == self.var

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.names -= node.attr.value == self.var  # ``x.var`` is no use of the name
        if isinstance(node.value, cst.Name) and node.value.value == self.var and node.attr.value in _ALLOWED:
            self.allowed += 1
            self.sends += node.attr.value in _WORK

    def visit_Arg(self, node: cst.Arg) -> None:
        self.names -= node.keyword is not None and node.keyword.value == self.var


def send_only(scope: cst.FunctionDef | cst.Module, var: str) -> bool:
    """An app made in a function (or a module) that runs no tasks: besides
    the assignment that makes it, ``var`` is used only through ``_ALLOWED``
    attributes (``var.send_task(...)``, ``var.control.inspect()``,
    ``var.events.State()``, ``var.connection()``, ``var.conf...``), at least
    once for what it is for (``_WORK``).  Any other use (``@var.task``, ``var.autodiscover_tasks``,
    ``var`` passed on or returned) counts as running tasks.  No worker runs
    it, so worker settings mean nothing for it (CL101-CL104 skip it)."""
    uses = _Uses(var)
    scope.visit(uses)
    return uses.sends > 0 and uses.names - 1 == uses.allowed
