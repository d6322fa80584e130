"""Setting values computed by a helper function of a settings file (the
same or another, ``facts/settings_helpers.py``), run on the encoded
arguments of the call.

A call is encoded by ``values.encode`` as ``{"call": qualified name,
"args": [...], "kwargs": {...}, "item": i or None}`` (``item``: the element
a tuple unpacking takes).  ``resolve`` replaces every call in an encoded
value by the helper's result, or by None (unknown) when no helper of that
name was read, an argument it needs is unknown, or the path through the
function reaches a statement it cannot follow.

An argument read from the environment (``os.getenv("X", None)``) is taken
at its default, as every value read from the environment is: the helper's
conditions are decided for the variable unset, and the result is an
environment value of ``X`` whose default is what the helper returns then.
"""

from __future__ import annotations

from typing import Any

from ..values import Env
from .values import NULL, encode, joined, plain

_MAX_DEPTH = 8


def calls_resolver(facts: list[dict[str, Any]], path_of):
    """``encoded -> encoded`` with every helper call resolved (``path_of``:
    module -> path of its file, the model's)."""
    helpers = Helpers(facts, path_of)
    return lambda encoded: helpers.resolve(encoded) if _has_call(encoded) else encoded


def _has_call(encoded: Any) -> bool:
    if not isinstance(encoded, dict) or "const" in encoded:
        return False
    if "call" in encoded:
        return True
    if "dict" in encoded:
        return any(_has_call(v) for v in encoded["dict"].values())
    return _has_call(encoded.get("default"))


class Helpers:
    def __init__(self, facts: list[dict[str, Any]], path_of) -> None:
        self.by_path: dict[tuple[str, str], dict[str, Any]] = {(f["path"], f["name"]): f for f in facts}
        self.names = {f["name"] for f in facts}
        self.path_of = path_of  # module -> path of its file (the model's ``path_of``)

    def resolve(self, encoded: Any, depth: int = 0) -> Any:
        if not isinstance(encoded, dict) or depth > _MAX_DEPTH:
            return None if depth > _MAX_DEPTH else encoded
        if "call" in encoded:
            return self._call(encoded, depth + 1)
        if "dict" in encoded:
            return {"dict": {k: self.resolve(v, depth + 1) for k, v in encoded["dict"].items()}}
        if "env" in encoded:
            return {"env": encoded["env"], "default": self.resolve(encoded.get("default"), depth + 1)}
        return encoded

    def helper(self, qualified: str) -> dict[str, Any] | None:
        module, _, name = qualified.rpartition(".")
        path = self.path_of(module) if module and name in self.names else None
        return self.by_path.get((path, name)) if path else None

    def _call(self, call: dict[str, Any], depth: int) -> Any:
        helper = self.helper(call["call"])
        if helper is None:
            return None
        params = helper["params"]
        args = [self.resolve(a, depth) for a in call["args"]]
        kwargs = {k: self.resolve(v, depth) for k, v in call["kwargs"].items()}
        if len(args) > len(params) or any(k not in [p[0] for p in params[len(args):]] for k in kwargs):
            return None
        bound = []
        for i, (name, has_default, default) in enumerate(params):
            if i < len(args):
                bound.append(args[i])
            elif name in kwargs:
                bound.append(kwargs[name])
            elif has_default:
                bound.append(default)
            else:
                return None
        envs = {b["env"] for b in bound if isinstance(b, dict) and "env" in b}
        if len(envs) > 1:
            return None
        result = _Run(bound).function(helper["body"])
        if result is None:
            return None
        item = call.get("item")
        if item is not None:
            elements = result.get("tuple") if isinstance(result, dict) else None
            if isinstance(result, dict) and isinstance(result.get("const"), list):
                elements = [{"const": v} for v in result["const"]]
            if elements is None or not 0 <= item < len(elements):
                return None
            result = elements[item]
        result = _final(result)
        return _from_env(result, envs.pop()) if envs and result is not None else result


class _Run:
    """The function's body run for the bound arguments (encoded values)."""

    def __init__(self, bound: list[Any]) -> None:
        self.bound = bound

    def function(self, body: list[dict[str, Any]]) -> Any:
        result = self.block(body)
        return {"const": None} if result is _NEXT else result  # falling off the end returns None

    def block(self, statements: list[dict[str, Any]]) -> Any:
        """The returned value, None (unknown) or ``_NEXT`` (the block ends
        without returning)."""
        for statement in statements:
            if "return" in statement:
                return self.expr(statement["return"])
            if "if" not in statement:
                return None  # a statement the encoding does not follow
            taken = self.decide(statement["if"])
            if taken is None:
                return None
            result = self.block(statement["then"] if taken else statement["else"])
            if result is not _NEXT:
                return result
        return _NEXT

    def decide(self, cond: list | None) -> bool | None:
        if cond is None:
            return None
        test, index = cond
        value, _ = plain(self.bound[index])
        if value is None:
            return None
        if test in ("is_none", "not_none"):
            return (value is NULL) == (test == "is_none")
        truthy = False if value is NULL else bool(value)
        return truthy if test == "truthy" else not truthy

    def expr(self, expr: Any) -> Any:
        if not isinstance(expr, dict):
            return None
        if "param" in expr:
            return self.bound[expr["param"]]
        if "tuple" in expr:
            return {"tuple": [self.expr(e) for e in expr["tuple"]]}
        if "concat" in expr:
            return _concat([self.expr(e) for e in expr["concat"]], expr["fstring"])
        return expr


_NEXT = object()


def _concat(parts: list[Any], fstring: bool) -> Any:
    """``values.joined`` over encoded parts."""
    decoded = []
    for part in parts:
        value, env = plain(part)
        decoded.append(Env(env, value) if env is not None else value)
    return encode(joined(decoded, numbers=fstring))


def _final(result: Any) -> Any:
    """A result as ``values.encode`` writes values: a tuple of literals is a list."""
    if isinstance(result, dict) and "tuple" in result:
        items = [_final(e) for e in result["tuple"]]
        if all(isinstance(i, dict) and "const" in i for i in items):
            return {"const": [i["const"] for i in items]}
        return None
    return result


def _from_env(result: Any, env: str) -> Any:
    """What a helper returns for an argument read from ``env``: its value
    when the variable is unset, and the environment's otherwise."""
    if isinstance(result, dict) and "env" in result:
        return result if result["env"] == env else None
    if isinstance(result, dict) and "const" in result:
        return {"env": env, "default": result}
    return None
