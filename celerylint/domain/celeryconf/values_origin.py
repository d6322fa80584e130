"""Where an unknown setting value comes from, so that two unknown values
read from the same place are known to be *the same* value.

``REDIS_URL = env.str("REDIS_URL")``, then ``CELERY_BROKER_URL = REDIS_URL``
and ``CACHES = {"default": {"LOCATION": REDIS_URL}}``: celerylint cannot
read the URL, but both settings hold the one string the process read at
start-up.  ``traced_value`` is ``setting_value`` plus that origin, as a
``Same``: the environment variable read without a default
(``env:REDIS_URL``), the imported name (``name:proj.base.REDIS_URL``, also
for a name a single star import gives; ``star:...`` for one of several
star imports), or the module-level binding:
``name:<module>.REDIS_URL`` when the module binds the name once (what its
importers see too; the model then reads the value that binding records,
``names.py``), else ``name:<module>.REDIS_URL#<hash of its expression>``, so
that a name bound again to another expression between two reads is another
origin, and the literal text appended after it
(``REDIS_URL + "/1"``, ``f"{REDIS_URL}/1"``).  An f-string of literal text and
fields that all have an origin has its template as origin
(``f"redis://{HOST}:{PORT}/0"``: ``_template_origin``); elsewhere a literal
before the unknown part (``"redis://" + HOST``) or two unknown parts give no
origin: the value stays plainly unknown.
"""

from __future__ import annotations

import re
import zlib
from typing import Any

import libcst as cst

from ..values import Env, evaluate
from ...api.context import FileContext, dotted_name
from .values import Same, Scheme, setting_value

_EMPTY = cst.Module([])


def traced_value(node: cst.BaseExpression | None, ctx: FileContext) -> Any:
    """``setting_value``, with unknown values (and environment values
    without a default) in it replaced by their ``Same`` origin where they
    have one (also inside a dict display: a cache's ``LOCATION``)."""
    if node is None:
        return None
    return _with_origins(node, setting_value(node, ctx), ctx, 0)


def _with_origins(node: cst.BaseExpression, value: Any, ctx: FileContext, depth: int) -> Any:
    if depth > 4:
        return value
    if isinstance(value, dict):
        display = node
        if isinstance(node, cst.Name):
            display = ctx.lookup(node.value)
        if not isinstance(display, cst.Dict):
            return value
        out = dict(value)
        for element in display.elements:
            if isinstance(element, cst.DictElement):
                key = evaluate(element.key, ctx)
                if isinstance(key, (str, int)) and key in out:
                    out[key] = _with_origins(element.value, out[key], ctx, depth + 1)
        return out
    if value is None or (isinstance(value, Env) and value.default is None):
        found = origin_of(node, ctx)
        if found is not None:
            origin, shown, suffix = found
            return Same(origin, shown, suffix, value.name if isinstance(value, Env) else None)
    if isinstance(value, Scheme):  # a URL made of known places: the template is its origin
        found = origin_of(node, ctx)
        if found is not None and found[0].startswith("tmpl:"):
            return Same(*found, None, value.name)
    return value


def origin_of(node: cst.BaseExpression, ctx: FileContext, depth: int = 0) -> tuple[str, str, str] | None:
    """``(origin, name shown to the user, literal suffix)`` of an unknown value."""
    if depth > 6:
        return None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        suffix = evaluate(node.right, ctx)
        found = origin_of(node.left, ctx, depth + 1) if isinstance(suffix, str) else None
        return (found[0], found[1], found[2] + suffix) if found is not None else None
    if isinstance(node, cst.FormattedString):
        return _fstring_origin(node, ctx, depth)
    if isinstance(node, cst.Subscript):  # ``os.environ["REDIS_URL"]``
        if ctx.imported_name(node.value) == "os.environ" and len(node.slice) == 1 \
                and isinstance(node.slice[0].slice, cst.Index):
            key = evaluate(node.slice[0].slice.value, ctx)
            return (f"env:{key}", key, "") if isinstance(key, str) else None
        return None
    if isinstance(node, cst.Call):
        value = setting_value(node, ctx)
        if isinstance(value, Env) and value.default is None:
            return f"env:{value.name}", value.name, ""
        return None
    if isinstance(node, cst.Name):
        if node.value in ("True", "False", "None"):
            return None
        bound = ctx.lookup(node.value)
        if bound is not None:
            inner = origin_of(bound, ctx, depth + 1)
            if inner is not None:
                return inner
            return _bound_origin(node.value, node.value, bound, ctx)
        starred = _star_origin(node.value, ctx)
        if starred is not None:
            return starred
    if isinstance(node, (cst.Name, cst.Attribute)):
        dotted = dotted_name(node)
        if dotted is None:
            return None
        imported = ctx.imported_name(node)
        if imported is not None:  # ``from proj.base import REDIS_URL``, ``settings.REDIS_URL``
            return f"name:{imported}", dotted, ""
        root = dotted.partition(".")[0]
        bound = ctx.lookup(root)
        if bound is not None and root != dotted:  # ``settings = Settings()`` then ``settings.redis_url``
            return _bound_origin(root, dotted, bound, ctx)
    return None


def _bound_origin(name: str, shown: str, bound: cst.BaseExpression, ctx: FileContext) -> tuple[str, str, str] | None:
    if not ctx.at_module_level and ctx.function is not None:
        return None  # a local of a function: not a setting shared by the module
    module = ctx.module_name or ctx.path
    if name == shown and bound_once(name, ctx):
        return f"name:{module}.{name}", shown, ""  # what an importer of the module sees too
    code = _EMPTY.code_for_node(bound)
    digest = zlib.crc32(code.encode("utf-8", "replace"))
    return f"name:{module}.{name}#{digest:08x}", shown, ""


# ``from .base import *`` (also inside a ``try``)
STAR_IMPORT = re.compile(r"^([ \t]*)from[ \t]+(?:(\.+)(\w[\w.]*)?|(\w[\w.]*))[ \t]+import[ \t]+\*", re.MULTILINE)


def other_binding_pattern(name: str) -> re.Pattern[str]:
    """Any way but a plain assignment of binding ``name`` in a module's text."""
    n = re.escape(name)
    return re.compile(rf"\b(?:as|import|def|class|global|nonlocal|for)[ \t]+{n}\b|(?<![\w.]){n}[ \t]*(?:[-+*/%&|^@]|//|>>|<<|\*\*)=|,[ \t]*{n}[ \t]*(?:,|=(?!=))|{n}[ \t]*,[^\n=]*=(?!=)")


def assignment_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"^([ \t]*){re.escape(name)}[ \t]*(?::[^=\n]*)?=(?!=)", re.MULTILINE)


def bound_once(name: str, ctx: FileContext) -> bool:
    """``name`` is bound exactly once in the module's text, by an assignment
    at module level (column 0), with no star import after it that could
    bind it again: every reader, in the module or importing it, sees that
    one value."""
    found = list(assignment_pattern(name).finditer(ctx.text))
    if len(found) != 1 or found[0].group(1) or other_binding_pattern(name).search(ctx.text):
        return False
    return STAR_IMPORT.search(ctx.text, found[0].end()) is None


def _star_origin(name: str, ctx: FileContext) -> tuple[str, str, str] | None:
    """A name the module neither binds nor imports by name, read at module
    level after star imports: the name of the one star-imported module
    (``from .base import *`` then ``REDIS_URL`` is ``base.REDIS_URL``, the
    one object whatever ``base`` binds it to), or, after several,
    ``star:<m1>,<m2>:<name>``: the name the last of them that binds it gives,
    which the model decides (``names.py``; ``?`` marks a star import inside
    a ``try`` or another compound statement).  Two reads after the same star
    imports see the same object either way."""
    if ctx.function is not None or name in ctx.imports or name in ctx.module_functions:
        return None
    stars = ctx.star_imports
    if not stars or assignment_pattern(name).search(ctx.text) or other_binding_pattern(name).search(ctx.text):
        return None
    if any(not module or module.startswith(".") for module, _ in stars):
        return None
    if len(stars) == 1 and not stars[0][1]:
        return f"name:{stars[0][0]}.{name}", name, ""
    listed = ",".join(("?" if guarded else "") + module for module, guarded in stars)
    return f"star:{listed}:{name}", name, ""


def _fstring_origin(node: cst.FormattedString, ctx: FileContext, depth: int) -> tuple[str, str, str] | None:
    parts = list(node.parts)
    if not parts:
        return None
    if not isinstance(parts[0], cst.FormattedStringExpression) or sum(
            isinstance(p, cst.FormattedStringExpression) for p in parts) > 1:
        return _template_origin(parts, ctx, depth)
    head = parts[0]
    if head.format_spec is not None or head.conversion is not None:
        return None
    suffix = ""
    for part in parts[1:]:
        if not isinstance(part, cst.FormattedStringText):
            return None
        suffix += part.value
    found = origin_of(head.expression, ctx, depth + 1)
    return (found[0], found[1], found[2] + suffix) if found is not None else None


def _template_origin(parts: list, ctx: FileContext, depth: int) -> tuple[str, str, str] | None:
    """``f"redis://{REDIS_HOST}:{REDIS_PORT}/0"`` with every field read from
    a known place: the template of literal text and the fields' origins
    (``tmpl:redis://{env:REDIS_HOST}:{name:proj.settings.REDIS_PORT}``), the
    names shown, and the literal text after the last field as the suffix.
    Two values made from one template of the same places are one string;
    any other literal text (another port) makes another origin."""
    fields = [i for i, p in enumerate(parts) if isinstance(p, cst.FormattedStringExpression)]
    if not fields:
        return None
    last = fields[-1]
    template, shown = "tmpl:", []
    for part in parts[:last + 1]:
        if isinstance(part, cst.FormattedStringText):
            template += part.value
            continue
        if not isinstance(part, cst.FormattedStringExpression) or part.format_spec is not None \
                or part.conversion is not None:
            return None
        found = origin_of(part.expression, ctx, depth + 1)
        if found is None:
            return None
        template += "{" + found[0] + found[2] + "}"
        if found[1] not in shown:
            shown.append(found[1])
    suffix = "".join(p.value for p in parts[last + 1:] if isinstance(p, cst.FormattedStringText))
    return template, " and ".join(shown), suffix

