"""Setting values as plain JSON-able data (facts survive the cache).

An encoded value is ``None`` (unknown), ``{"const": x}`` (a literal; a
timedelta becomes seconds), ``{"env": NAME, "default": <encoded>}`` (read
from the environment), ``{"same": origin, "shown": NAME, "suffix": s}`` (unknown,
read from a known place: ``values_origin.py``; with ``env`` too when read
from the environment without a default), ``{"scheme": "amqp"}`` (an unknown URL
of a known scheme), ``{"dict": {key: <encoded>}}``, or ``{"call": ...}``:
a call of a function of the project that a settings file may define
(``HelperCall``), which the model resolves (``helpers.py``) or makes unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import libcst as cst

from ..values import ENV_CALLS, NONE, Env, FromNow, agreed, evaluate, seconds
from ...api.context import FileContext
from .values_env import env_value, helper_return


@dataclass(frozen=True)
class HelperCall:
    """``f(args)`` with ``f`` a function of the project, imported or of this
    file, that ``facts/settings_helpers.py`` may have read; ``item``: the
    element an unpacking takes."""

    name: str
    args: tuple
    kwargs: tuple
    item: int | None = None


@dataclass(frozen=True)
class Scheme:
    """An unknown URL whose scheme its literal head gives:
    ``f"amqp://{user}:{password}@{host}//"``, ``"redis://{}:{}".format(...)``.
    Enough to know the broker's transport; its value stays unknown."""

    name: str  # ``amqp``


def _scheme(head: str) -> Scheme | None:
    scheme, sep, _ = head.partition("://")
    return Scheme(scheme.lower()) if sep and scheme and scheme.replace("+", "").isalnum() else None


@dataclass(frozen=True)
class Same:
    """An unknown value and where it comes from (``values_origin.py``):
    two values of one ``origin`` and ``suffix`` are the same string."""

    origin: str
    shown: str  # the name a message gives: ``REDIS_URL``
    suffix: str  # literal text appended after it
    env: str | None  # the environment variable, when read without a default
    scheme: str | None = None  # a template's literal URL scheme (``f"redis://{HOST}:{PORT}"``)


def _helper_call(node: cst.Call, ctx: FileContext, depth: int) -> HelperCall | None:
    name = ctx.imported_name(node.func)
    if (name is None and isinstance(node.func, cst.Name) and ctx.module_name
            and node.func.value in ctx.module_functions and ctx.lookup(node.func.value) is None):
        name = f"{ctx.module_name}.{node.func.value}"  # a function of this file
    # a function of the project: of the file's own top-level package (a
    # library's calls, ``gettext_lazy("...")``, are never a settings helper)
    if not name or "." not in name or not ctx.module_name:
        return None
    if name.partition(".")[0] != ctx.module_name.partition(".")[0]:
        return None
    if any(a.star for a in node.args):
        return None
    args = tuple(setting_value(a.value, ctx, depth) for a in node.args if a.keyword is None)
    kwargs = tuple((a.keyword.value, setting_value(a.value, ctx, depth)) for a in node.args if a.keyword is not None)
    return HelperCall(name, args, kwargs)


def setting_value(node: cst.BaseExpression | None, ctx: FileContext, depth: int = 0) -> Any:
    """``evaluate``, plus string concatenation and f-strings over environment
    lookups (``REDIS_URL + "/1"``), which stay environment values."""
    if depth > 8:
        return None
    depth += 1
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        left, right = setting_value(node.left, ctx, depth), setting_value(node.right, ctx, depth)
        if isinstance(left, Env) or isinstance(right, Env):
            return _concat(left, right)
    if isinstance(node, cst.FormattedString):
        return _fstring(node, ctx, depth)
    if isinstance(node, cst.IfExp):
        return agreed(setting_value(node.body, ctx, depth), setting_value(node.orelse, ctx, depth))
    if isinstance(node, cst.Dict):
        out = {}
        for element in node.elements:
            if isinstance(element, cst.StarredDictElement):  # ``{**BASE, ...}``: a known dict, in order
                inner = setting_value(element.value, ctx, depth)
                if not isinstance(inner, dict):
                    return None
                out.update(inner)
                continue
            key = evaluate(element.key, ctx)
            if not isinstance(key, (str, int)):
                return None
            out[key] = setting_value(element.value, ctx, depth)
        return out
    if isinstance(node, (cst.List, cst.Tuple)):
        return [setting_value(e.value, ctx, depth) for e in node.elements if isinstance(e, cst.Element)]
    if isinstance(node, cst.Call):
        from_env = env_value(node, ctx, depth)
        if from_env is not None:
            return from_env
        returned = helper_return(node, ctx)
        if returned is not None:
            from_helper = setting_value(returned, ctx, depth + 1)
            if isinstance(from_helper, (str, int, float, bool)):
                return from_helper
        value = evaluate(node, ctx)
        if isinstance(value, Env) and value.default is None and len(node.args) >= 2 \
                and ctx.imported_name(node.func) in ENV_CALLS:  # ``os.environ.get("B", f"amqp://{host}//")``
            default = setting_value(node.args[1].value, ctx, depth)
            value = Env(value.name, default) if isinstance(default, Scheme) else value
        if value is None and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format" \
                and isinstance(node.func.value, cst.SimpleString):  # ``"amqp://{}:{}@{}//".format(...)``
            value = _scheme(str(node.func.value.evaluated_value).partition("{")[0])
        return value if value is not None else _helper_call(node, ctx, depth)
    if isinstance(node, cst.Name) and node.value not in ("True", "False", "None"):
        bound = ctx.lookup(node.value)
        if bound is not None and isinstance(bound, (cst.BinaryOperation, cst.FormattedString, cst.Dict, cst.List,
                                                    cst.Tuple, cst.Call, cst.IfExp)):
            return setting_value(bound, ctx, depth)
        if bound is None and (unpacked := ctx.lookup_unpacked(node.value)) is not None:
            call = setting_value(unpacked[0], ctx, depth)  # ``A, B = helper(...)``
            if isinstance(call, HelperCall) and call.item is None:
                return HelperCall(call.name, call.args, call.kwargs, unpacked[1])
            return None
    return evaluate(node, ctx)


def _concat(left: Any, right: Any) -> Any:
    def parts(v):
        if isinstance(v, Env):
            return v.name, v.default
        return None, v

    lname, ldef = parts(left)
    rname, rdef = parts(right)
    if lname and rname and lname != rname:
        return None
    default = ldef + rdef if isinstance(ldef, str) and isinstance(rdef, str) else None
    return Env(lname or rname, default)


def _fstring(node: cst.FormattedString, ctx: FileContext, depth: int) -> Any:
    out: list[Any] = []
    for part in node.parts:
        if isinstance(part, cst.FormattedStringText):
            out.append(part.value)
        elif isinstance(part, cst.FormattedStringExpression) and part.format_spec is None and part.conversion is None:
            out.append(setting_value(part.expression, ctx, depth))
        else:
            return None
    value = joined(out)
    if (value is None or (isinstance(value, Env) and value.default is None)) and isinstance(node.parts[0], cst.FormattedStringText):
        return _scheme(node.parts[0].value) or value  # ``f"amqp://{user}@{host}//"``: the scheme is known
    return value


def joined(items: list[Any], numbers: bool = True) -> Any:
    """Strings (and integers, when ``numbers``: an f-string's) joined; parts
    read from one environment variable keep it, as an ``Env``."""
    value: Any = ""
    for item in items:
        if item is None or not isinstance(item, (str, int, Env)) or isinstance(item, bool):
            return None
        if isinstance(item, int):
            if not numbers:
                return None
            item = str(item)
        value = _concat(value, item) if isinstance(value, Env) or isinstance(item, Env) else value + item
        if value is None:
            return None
    return value


def encode(value: Any) -> Any:
    if value is None or isinstance(value, FromNow):
        return None
    if value is NONE:
        return {"const": None}
    if isinstance(value, (bool, int, float, str)):
        return {"const": value}
    if isinstance(value, timedelta):
        return {"const": value.total_seconds()}
    if isinstance(value, Env):
        return {"env": value.name, "default": encode(value.default)}
    if isinstance(value, dict):
        return {"dict": {str(k): encode(v) for k, v in value.items()}}
    if isinstance(value, Same):
        same = {"same": value.origin, "shown": value.shown, "suffix": value.suffix,
                **({"scheme": value.scheme} if value.scheme else {})}
        return {**same, "env": value.env, "default": None} if value.env else same
    if isinstance(value, Scheme):
        return {"scheme": value.name}
    if isinstance(value, HelperCall):
        return {"call": value.name, "args": [encode(a) for a in value.args],
                "kwargs": {k: encode(v) for k, v in value.kwargs}, "item": value.item}
    if isinstance(value, list):
        items = [encode(v) for v in value]
        if all(i is not None and "const" in i for i in items):
            return {"const": [i["const"] for i in items]}
    return None


def plain(encoded: Any) -> tuple[Any, str | None]:
    """``(value, env)``: the Python value (an environment value gives its
    default, ``env`` names the variable); ``(None, None)`` when unknown.  A
    literal ``None`` is returned as the string-free sentinel ``NULL``."""
    if not isinstance(encoded, dict):
        return None, None
    if "const" in encoded:
        return (NULL if encoded["const"] is None else encoded["const"]), None
    if "env" in encoded:
        value, _ = plain(encoded.get("default"))
        return value, encoded["env"]
    if "dict" in encoded:
        return {k: v for k, v in encoded["dict"].items()}, None
    return None, None


class _Null:
    def __repr__(self) -> str:
        return "None"


NULL = _Null()


def describe(encoded: Any) -> str:
    value, env = plain(encoded)
    shown = "None" if value is NULL else repr(value)
    if env:
        return f"{shown} (from the environment variable {env}, default)" if value is not None else f"the environment variable {env}"
    return shown


def number(value) -> float | None:
    """A setting's decoded value as a number of seconds, when it is one
    (a finite one: ``float("inf")`` or ``nan`` is not a duration anyone can
    compare or write back)."""
    return seconds(value) if isinstance(value, (int, float)) else None
