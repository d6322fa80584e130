"""Is this expression a Redis client or a Django cache?  Judged by how it was
made or imported, never by its variable name alone."""

from __future__ import annotations

import re

import libcst as cst

from ..api.context import FileContext, dotted_name
from ..facts.client_index import CACHE, CACHE_CLASSES, CACHE_MAPPINGS, CACHE_OBJECTS, REDIS, REDIS_CLASSES, REDIS_FACTORIES
from ..api.rule import Regex

__all__ = ["CACHE", "CACHE_MAPPINGS", "CACHE_OBJECTS", "REDIS", "REDIS_FACTORIES", "client_kind", "receiver"]

# Clients are recognised only through an import in the same file, and every
# module they come from (redis, redis.asyncio, django_redis, aioredis) has a
# lowercase "redis" in its name; "redistribute" in licence text does not count.
REDIS_IMPORT_NEEDLE = Regex(rb"redis(?!tribut)")
REDIS_NEEDLES = (REDIS_IMPORT_NEEDLE, b"valkey")  # either, in the prefilters (valkey-py, django-valkey)
# The result backend's client, ``<app>.backend.client`` (``backend_client.py``):
# Redis when the app's result backend is, which the file need not say.
BACKEND_CLIENT_NEEDLE = Regex(rb"\.\s*backend\s*\.\s*client\b")



# A Django cache is known only through a ``django.core.cache`` import, and is
# used as ``cache``/``caches[...]`` (with any prefix: ``django_cache``), or
# through an alias (``import cache as c``) or a name it was assigned to
# (``c = caches["x"]``, ``self.store = cache``), which then appear in the text.
CACHE_ALIAS = (Regex(rb"caches?\s+as\b"), Regex(rb"=\s*caches?\b"))


CACHE_HELPER = Regex(rb"cache\w*(?:\s*\([^()\n]*\))?\s*\.\s*(?:add|set|lock|delete|unlink)\s*\(")


def cache_call(methods: bytes) -> Regex:
    """A call of one of ``methods`` (a regex alternation) on ``cache`` or ``caches[...]``."""
    return Regex(rb"caches?\s*(?:\[[^\[\]\n]*\]\s*)?\.\s*(?:" + methods + rb")\s*\(")


_MAX_DEPTH = 6


def client_kind(node: cst.BaseExpression, ctx: FileContext, depth: int = 0, conditional: bool = False) -> str | None:
    """REDIS, CACHE or None (unknown).  ``conditional`` (for a rule whose
    findings on such a client are judged in the project phase): a client that
    is Redis only when the app's result backend is (``backend_client.py``) is
    REDIS, with the condition in ``ctx.client_conditions`` under ``node``."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(node, cst.Await):
        return _carried(node, node.expression, ctx, depth, conditional)
    if isinstance(node, cst.Call):
        name = ctx.imported_name(node.func)
        if name in REDIS_FACTORIES:
            return REDIS
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "get_client":
            # django-redis: cache.client.get_client() is the raw redis client
            inner = node.func.value
            if isinstance(inner, cst.Attribute) and inner.attr.value == "client":
                return REDIS if client_kind(inner.value, ctx, depth + 1) == CACHE else None
        return _provided(node.func, ctx, "()")
    if isinstance(node, cst.Subscript):
        return CACHE if ctx.imported_name(node.value) in CACHE_MAPPINGS else None
    if isinstance(node, cst.Name):
        parameter, annotation = _parameter(node.value, ctx)
        if parameter:  # a parameter shadows what the module binds: its annotation says what it is
            return annotation_kind(annotation, ctx) if annotation is not None else None
        bound = ctx.lookup(node.value)  # a local variable shadows an import
        if bound is not None:
            return _carried(node, bound, ctx, depth, conditional)
        if node.value in ctx.imports:
            if ctx.imports[node.value] in CACHE_OBJECTS:
                return CACHE
            return _provided(node, ctx, "")
        return None
    if isinstance(node, cst.Attribute):
        if isinstance(node.value, cst.Name) and node.value.value in ("self", "cls") and ctx.classes:
            bound = ctx.lookup_self_attr(node.attr.value)
            kind = None
            if bound is None:
                bound = _class_attr(ctx.classes[-1], node.attr.value)
                if bound is None:
                    kind = _property_kind(ctx.classes[-1], node.attr.value, ctx, depth + 1)
            if bound is not None:
                kind = _carried(node, bound, ctx, depth, conditional)
            return kind if kind is not None else _held(node, ctx)
        if node.attr.value == "client" and conditional:
            from .backend_client import backend_client_app  # deferred: it imports the task model

            app = backend_client_app(node, ctx)
            if app is not None:
                ctx.client_conditions[id(node)] = {"result_backend": "redis", "app": app}
                return REDIS
        if isinstance(node.value, cst.Name) and (node.value.value in ("self", "cls") or _parameter(node.value.value, ctx)[0]):
            return _held(node, ctx)  # an attribute of a parameter: of the class it is an instance of
        if ctx.imported_name(node) in CACHE_OBJECTS:
            return CACHE
        return _provided(node, ctx, "")
    return None


def _carried(node: cst.BaseExpression, inner: cst.BaseExpression, ctx: FileContext, depth: int,
             conditional: bool) -> str | None:
    """The kind of ``inner``, which ``node`` stands for (a name bound to it,
    ``await`` of it), with its condition."""
    kind = client_kind(inner, ctx, depth + 1, conditional)
    condition = ctx.client_conditions.get(id(inner))
    if kind is not None and condition is not None:
        ctx.client_conditions[id(node)] = condition
    return kind


def _held(node: cst.Attribute, ctx: FileContext) -> str | None:
    """``x.attr`` where ``x`` is an instance of a project class
    (``client_holders.instance_class``): what the client index says
    ``<class>.attr`` holds, in a file that mentions that kind."""
    allowed = _mentioned(ctx)
    if not allowed or not isinstance(node.value, cst.Name):
        return None
    from .client_holders import instance_class  # deferred: it imports the task model
    cls = instance_class(node.value, ctx)
    if cls is None:
        return None
    key = f"{cls}.{node.attr.value}"
    kind = ctx.client_index.get(key)
    ctx.client_lookups[key] = kind
    return kind if kind in allowed else None


# A client from a project helper counts in a file whose code names its kind
# (the helper's module, its name, a variable: ``from app.utils.redis import
# get_client``): the rules' prefilters need no knowledge of other files.
# A Django cache helper counts where it is called on directly (a name with
# "cache" in it: ``get_cache().delete(...)``, ``default_cache.add(...)``,
# ``cache.set(...)``): CACHE_HELPER.
_MENTIONS = {REDIS: re.compile(r"redis(?!tribut)|valkey"), CACHE: re.compile(bytes(CACHE_HELPER).decode())}


def _provided(func: cst.BaseExpression, ctx: FileContext, suffix: str) -> str | None:
    """What the project index says a call of (``suffix="()"``) or a reference
    to ``func`` gives: a helper of another module (through its import) or of
    this one (a module function or class).  Every question that can change
    the outcome is recorded (none in a file that mentions neither kind), so
    that a cached result is dropped when the answer changes."""
    allowed = _mentioned(ctx)
    name = dotted_name(func) if allowed else None
    if name is None:
        return None
    head = name.partition(".")[0]
    if _parameter(head, ctx)[0]:
        return None  # a parameter shadows the import or module name
    if head in ctx.imports:
        qualified = ctx.qualify(func)
    elif ctx.lookup(head) is None and head not in ("self", "cls") and ctx.module_name:
        qualified = f"{ctx.module_name}.{name}"
    else:
        return None
    key = qualified + suffix
    kind = ctx.client_index.get(key)
    ctx.client_lookups[key] = kind
    return kind if kind in allowed else None


def _mentioned(ctx: FileContext) -> frozenset[str]:
    """The kinds a helper may give in this file (see ``_MENTIONS``)."""
    found = ctx.__dict__.get("_client_mentions")
    if found is None:
        text = code_text(ctx)
        found = ctx.__dict__["_client_mentions"] = frozenset(k for k, r in _MENTIONS.items() if r.search(text))
    return found


def _parameter(name: str, ctx: FileContext) -> tuple[bool, cst.BaseExpression | None]:
    """Whether ``name`` is, where the current node is, a parameter of a
    function around it (not assigned in that function's body, where the
    assignment decides), and the parameter's annotation."""
    for scope in reversed(ctx.scopes):
        function = scope.node
        if not isinstance(function, cst.FunctionDef):
            continue
        if name in scope.bindings or name in scope.reassigned:
            return False, None
        p = function.params
        for x in (*p.posonly_params, *p.params, *p.kwonly_params, p.star_arg, p.star_kwarg):
            if isinstance(x, cst.Param) and x.name.value == name:
                star = x is p.star_arg or x is p.star_kwarg  # *clients: a tuple of them, not one
                return True, x.annotation.annotation if x.annotation is not None and not star else None
    return False, None


_OPTIONAL = frozenset({"typing.Optional", "typing.Annotated", "typing_extensions.Annotated"})


def annotation_kind(node: cst.BaseExpression, ctx: FileContext, depth: int = 0) -> str | None:
    """REDIS or CACHE when the annotation names a Redis client class
    (``redis.Redis``, ``"Redis"``, ``Redis | None``, ``Optional[Redis]``)
    or Django's ``BaseCache``; None for anything else (a project class, a
    protocol, ``Any``)."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(node, cst.SimpleString):  # a forward reference: "redis.Redis"
        text = node.evaluated_value
        try:
            node = cst.parse_expression(text) if isinstance(text, str) else None
        except (cst.ParserSyntaxError, RecursionError):
            return None
        return annotation_kind(node, ctx, depth + 1) if node is not None else None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        kinds = {annotation_kind(side, ctx, depth + 1) for side in (node.left, node.right) if not _is_none(side)}
        return kinds.pop() if len(kinds) == 1 else None
    if isinstance(node, cst.Subscript):
        head = ctx.imported_name(node.value)
        if head in _OPTIONAL or head == "typing.Union":
            elements = [e.slice.value for e in node.slice if isinstance(e.slice, cst.Index)]
            if head != "typing.Union":
                elements = elements[:1]
            kinds = {annotation_kind(e, ctx, depth + 1) for e in elements if not _is_none(e)}
            return kinds.pop() if len(kinds) == 1 else None
        node = node.value  # redis.Redis[bytes] (types-redis)
    name = ctx.imported_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
    if name in REDIS_CLASSES:
        return REDIS
    if name in CACHE_CLASSES:
        return CACHE
    return None


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def code_text(ctx: FileContext) -> str:
    """The file's text without its leading comment block (what needles search)."""
    text = ctx.__dict__.get("_code_text")
    if text is None:
        text = ctx.__dict__["_code_text"] = _HEADER.sub("", ctx.text, count=1)
    return text


_HEADER = re.compile(r"\A(?:[ \t\f]*(?:#[^\r\n]*)?(?:\r\n|\r|\n))*")


def _class_attr(cls: cst.ClassDef, attr: str) -> cst.BaseExpression | None:
    for stmt in cls.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        if isinstance(target.target, cst.Name) and target.target.value == attr:
                            return small.value
    return None


_PROPERTIES = frozenset({"property", "functools.cached_property", "cached_property",
                         "django.utils.functional.cached_property"})


def _property_kind(cls: cst.ClassDef, attr: str, ctx: FileContext, depth: int) -> str | None:
    """``self.redis`` where the class defines ``redis`` as a property: its
    return annotation (``-> redis.Redis``) says what it is; without one,
    every ``return`` must give a client made or held where the class can see
    it (``redis.Redis(...)``, a provider's call, ``self._client``).  A bare
    local name returned is not followed (it belongs to the property's scope)."""
    for stmt in cls.body.body:
        if not (isinstance(stmt, cst.FunctionDef) and stmt.name.value == attr):
            continue
        names = {ctx.qualify(d.decorator) for d in stmt.decorators}
        if not names & _PROPERTIES:
            return None
        if stmt.returns is not None:
            return annotation_kind(stmt.returns.annotation, ctx, depth)
        returned = [r.value for r in _returns(stmt.body)]
        if not returned or any(v is None or isinstance(v, cst.Name) for v in returned):
            return None
        kinds = {client_kind(v, ctx, depth) for v in returned}
        return kinds.pop() if len(kinds) == 1 else None
    return None


def _returns(node: cst.CSTNode) -> list[cst.Return]:
    """The ``return`` statements of a function body, not of nested functions or classes."""
    found: list[cst.Return] = []
    for child in node.children:
        if isinstance(child, cst.Return):
            found.append(child)
        elif not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            found.extend(_returns(child))
    return found


def receiver(call: cst.Call, methods: frozenset[str] | set[str]) -> tuple[str, cst.BaseExpression] | None:
    """``(method, receiver)`` when ``call`` is ``<receiver>.<method>(...)``."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in methods:
        return func.attr.value, func.value
    return None
