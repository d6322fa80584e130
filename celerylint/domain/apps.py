"""How a function uses a Celery app it makes."""

from __future__ import annotations

import libcst as cst


class _Uses(cst.CSTVisitor):
    """How a function uses the local name ``var`` of the app it makes."""

    def __init__(self, var: str) -> None:
        self.var = var
        self.names = 0  # every Name ``var`` (the assignment making the app too)
        self.allowed = 0  # ``var.send_task`` and ``var.conf``
        self.sends = 0

    def visit_Name(self, node: cst.Name) -> None:
        self.names += node.value == self.var

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.names -= node.attr.value == self.var  # ``x.var`` is no use of the name
        if isinstance(node.value, cst.Name) and node.value.value == self.var and node.attr.value in ("send_task", "conf"):
            self.allowed += 1
            self.sends += node.attr.value == "send_task"

    def visit_Arg(self, node: cst.Arg) -> None:
        self.names -= node.keyword is not None and node.keyword.value == self.var


def send_only(function: cst.FunctionDef, var: str) -> bool:
    """An app made in a function only to send tasks to a broker: besides the
    assignment that makes it, ``var`` is used only as ``var.send_task(...)``
    and ``var.conf...``.  It runs no worker, so worker settings mean nothing
    for it (CL101-CL104 skip it)."""
    uses = _Uses(var)
    function.visit(uses)
    return uses.sends > 0 and uses.names - 1 == uses.allowed
