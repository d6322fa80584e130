"""Locks taken inside Celery tasks, with their TTL and the task's time
limits: what CL205 compares."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..api.context import FileContext
from .calls import has_star
from .clients import client_kind, receiver
from .locks import RELEASE_METHODS, RENEW_METHODS, LockHelper, LockTake, key_says_lock, key_texts, lock_helper, lock_take
from .tasks import TimeLimit, task_time_limit
from .values import evaluate, seconds


@dataclass
class _Frame:
    node: cst.FunctionDef
    task: TimeLimit | None
    takes: list[LockTake] = field(default_factory=list)
    released: set[str] = field(default_factory=set)
    renewed: bool = False  # the function extends a TTL: it manages the expiry itself


class TaskLocks:
    """A visitor that calls ``lock_in_task(node, take, ttl, task, via)`` for
    each lock a task takes with a TTL that evaluates to a positive number of
    seconds (``node``: the TTL's expression, or the helper call that leaves
    it to its default): directly, or through a lock helper of the same
    module (``via``, its name), followed one level.  A ``set(..., nx=True)``
    or ``cache.add`` counts when its result is used and its key is named
    like a lock or deleted again in the same function; a function that
    renews a TTL (``lock.extend``, ``expire``, ``cache.touch``) is left out."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.frames: list[_Frame] = []
        self.statements: set[int] = set()
        self.helpers: dict[str, LockHelper] = {}
        self.helper_calls: list[tuple[cst.Call, TimeLimit, list, dict]] = []

    def lock_in_task(self, node: cst.CSTNode, take: LockTake, ttl: float, task: TimeLimit,
                     via: str | None) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.frames.append(_Frame(node, task_time_limit(node, self.ctx)))

    def visit_Expr(self, node: cst.Expr) -> None:
        value = node.value.expression if isinstance(node.value, cst.Await) else node.value
        self.statements.add(id(value))

    def visit_Call(self, node: cst.Call) -> None:
        if not self.frames:
            return
        frame = self.frames[-1]
        take = lock_take(node, self.ctx)
        if take is not None:
            if take.ttl is not None and (take.always or id(node) not in self.statements):
                frame.takes.append(take)
            return
        if receiver(node, RENEW_METHODS) is not None:
            frame.renewed = True
            return
        found = receiver(node, RELEASE_METHODS)
        if found is not None:
            if client_kind(found[1], self.ctx, conditional=True) is None:
                return
            for a in node.args:
                frame.released.update(key_texts(a.value, self.ctx))
        elif frame.task is not None and isinstance(node.func, cst.Name) and not has_star(node):
            # a call of a lock helper of this module, perhaps: remember the
            # values of its arguments, evaluated here, in the task's scope
            positional = [seconds(evaluate(a.value, self.ctx)) for a in node.args if a.keyword is None]
            keywords = {a.keyword.value: (a.value, seconds(evaluate(a.value, self.ctx))) for a in node.args if a.keyword is not None}
            self.helper_calls.append((node, frame.task, positional, keywords))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        frame = self.frames.pop()
        if frame.renewed:
            return
        for take in frame.takes:
            if not take.always and not (take.key is not None and (
                    key_says_lock(take.key, self.ctx) or frame.released & set(key_texts(take.key, self.ctx)))):
                continue
            if frame.task is not None:
                ttl = seconds(evaluate(take.ttl.value, self.ctx))
                if ttl is not None and ttl > 0:
                    self.lock_in_task(take.ttl.value, take, ttl * take.ttl_unit, frame.task, None)
            elif not self.frames and not self.ctx.classes and isinstance(take.ttl.value, cst.Name):
                helper = lock_helper(frame.node, take, self.ctx)
                if helper is not None:
                    self.helpers[frame.node.name.value] = helper

    def leave_Module(self, original_node: cst.Module) -> None:
        for call, task, positional, keywords in self.helper_calls:
            helper = self.helpers.get(call.func.value)
            if helper is None:
                continue
            if helper.param in keywords:
                node, ttl = keywords[helper.param]
            elif helper.position is not None and helper.position < len(positional):
                node, ttl = call.args[helper.position].value, positional[helper.position]
            else:
                node, ttl = call, helper.default
            if ttl is not None and ttl > 0:
                self.lock_in_task(node, helper.take, ttl * helper.take.ttl_unit, task, call.func.value)
