"""The ``client-providers`` fact (see ``client_index.py``): which module
functions, module attributes and class attributes of this file return or hold
a Redis client or a Django cache.  Read from CPython's ``ast``.

A function is a provider when every ``return`` with a value (``return None``
aside) returns a client: one made there (``redis.Redis(...)``,
``Redis.from_url(...)``, ``get_redis_connection()``, ``caches["x"]``), a local
variable every assignment of which makes one, a ``global`` set to one
(the lazy singleton), or another provider (resolved over the project).  Its
decorators may only be ``functools.cache``/``lru_cache``, ``staticmethod``,
``classmethod``: any other may change what a call returns.  An ``async def``
counts as what ``await``-ing it gives."""

from __future__ import annotations

import ast
import builtins
import re
import sys

from ..api.needles import Regex
from ..api.syntax import SyntaxCollector, dotted
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED
from .client_index import CACHE, CACHE_MAPPINGS, CACHE_OBJECTS, LIBRARY_PREFIXES, PROVIDERS_FACT, REDIS, REDIS_CLASSES, REDIS_FACTORIES

_DECORATORS = frozenset({"functools.cache", "functools.lru_cache", "staticmethod", "classmethod"})
# what the module walk looks for, in the text first: a call of a capitalised
# name (``Lock(``, ``locks.Lock(``; ``self.``/``cls.`` calls are not class
# calls), an assignment to an attribute of ``self``/``cls``
_CAPITALISED_CALL = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)[ \t]*\(")
_SELF_ASSIGNMENT = re.compile(r"\b(?:self|cls)\.\w+[ \t]*(?::[^=\n]*)?=(?!=)")
# statements without a body: walked into only when a call of a project class
# may start in their lines
_SIMPLE = (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.Raise, ast.Assert, ast.Delete)


def _spans(node: ast.stmt, lines: set[int], first: int, last: int) -> bool:
    start, end = node.lineno, node.end_lineno or node.lineno
    if end < first or start > last:
        return False
    return any(n in lines for n in range(start, end + 1)) if end - start < len(lines) else any(
        start <= n <= end for n in lines)


# nodes that hold no call and no assignment: not walked into
_LEAVES = (ast.Name, ast.Constant, ast.expr_context, ast.operator, ast.cmpop, ast.unaryop, ast.boolop, ast.alias,
           ast.Import, ast.ImportFrom, ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal)
_PROPERTIES = frozenset({"property", "functools.cached_property", "cached_property",
                         "django.utils.functional.cached_property"})


def _module_statements(body: list[ast.stmt]):
    """The statements run at import: the module's, and those of its if/try blocks."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                yield from _module_statements(getattr(node, field, []))
            for handler in getattr(node, "handlers", []):
                yield from _module_statements(handler.body)


def _own_nodes(function: ast.AST):
    """The nodes of a function's body, without those of nested functions and classes."""
    todo = list(ast.iter_child_nodes(function))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


def _is_none(node: ast.AST | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value is None)


class ClientProviders(SyntaxCollector):
    PATHS = TEST_PATHS_EXCLUDED
    REQUIRES = (Regex(rb"redis(?!tribut)"), b"valkey", b"core.cache")

    def collect(self, tree: ast.Module) -> None:
        module = self.file.module_name or self.file.path
        self.module = module
        self.defined: set[str] = set()
        self.top: dict[str, ast.AST] = {}
        for node in _module_statements(tree.body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defined.add(node.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.defined.add(target.id)
        self.returns = _returns_by_function(tree)
        providers: dict[str, list[str]] = {}
        classes: dict[str, dict[str, list[str]]] = {}
        for node in _module_statements(tree.body):
            self._statement(node, module, providers, None)
            if isinstance(node, ast.ClassDef):
                for inner in node.body:
                    self._statement(inner, f"{module}.{node.name}", providers, node.name)
                classes[f"{module}.{node.name}"] = self._class(node, providers)
        self._walk(tree, providers, classes)
        if providers or classes:
            for alias in _aliases(self.file.path, module):
                for name, sources in list(providers.items()):
                    if name.startswith(module + "."):
                        providers.setdefault(alias + name[len(module):], sources)
                for name, info in list(classes.items()):
                    classes.setdefault(alias + name[len(module):], info)
        if providers or classes:  # a class without bases too: a later base may be looked up past it
            self.file.fact(PROVIDERS_FACT, providers=providers, **({"classes": classes} if classes else {}))

    def _class(self, node: ast.ClassDef, providers: dict[str, list[str]]) -> dict[str, list[str]]:
        """A class's bases (project-wide names), the names its body defines
        (class attributes, methods; ``_walk`` adds the ``self.x`` its methods
        assign), and, as providers, what its properties return."""
        prefix = f"{self.module}.{node.name}"
        names: set[str] = set()
        for inner in node.body:
            if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(inner.name)
            elif isinstance(inner, (ast.Assign, ast.AnnAssign)):
                for target in inner.targets if isinstance(inner, ast.Assign) else [inner.target]:
                    if isinstance(target, ast.Name):
                        names.add(target.id)
            if not isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if self._is_property(inner):
                annotation = dotted(inner.returns) if inner.returns is not None else None
                if annotation is not None and self.file.qualify(annotation) in REDIS_CLASSES:
                    sources = [REDIS]  # ``-> redis.Redis``
                else:
                    sources = self._returns(inner, node.name, properties=True)
                providers.setdefault(f"{prefix}.{inner.name}", []).extend(sources or ["?"])
        bases = [self._base(dotted(x)) for x in node.bases]
        if any(b in REDIS_CLASSES for b in bases):  # ``class AppRedis(redis.StrictRedis)``: calling it makes a client
            providers.setdefault(f"{prefix}()", []).append(REDIS)
        return {"bases": bases, "names": sorted(names)}  # a list: ``_walk`` appends to it

    def _base(self, name: str | None) -> str:
        """A base class's project-wide name; ``builtins.X`` for a builtin,
        ``?`` for one this file cannot name (``class T(make_base(), Lock)``):
        it may define any name."""
        qualified = self._qualified(name, None) if name is not None else None
        if qualified is not None:
            return qualified
        if name is not None and "." not in name and hasattr(builtins, name):
            return "object" if name == "object" else f"builtins.{name}"
        return "?"

    def _attribute_source(self, value: ast.AST, method: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str],
                          assigned: dict[str, list[ast.AST]], cls: str) -> str | None:
        """What ``self.x = value`` stores: an ``__init__`` parameter (never
        assigned in it) is what the callers of the class pass for it."""
        if isinstance(value, ast.Name) and value.id not in assigned:
            annotated = self._annotated(method, value.id)
            if annotated is not None:
                return annotated  # ``def __init__(self, redis: StrictRedis)``: what the annotation says
        if isinstance(value, ast.Name) and value.id in params[1:] and value.id not in assigned:
            if method.name != "__init__" or value.id in {a.arg for a in method.args.kwonlyargs}:
                return None
            return f"args:{self.module}.{cls}|{params.index(value.id) - 1}|{value.id}"
        if isinstance(value, ast.Name) and value.id in params:
            return None
        return self._source(value, assigned, set(), cls)

    def _annotated(self, method: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> str | None:
        """REDIS when the parameter ``name`` is annotated with a Redis client
        class (``redis.Redis``, ``"StrictRedis"``, ``Optional[Redis]``, ``Redis | None``)."""
        a = method.args
        found = next((x for x in (*a.posonlyargs, *a.args, *a.kwonlyargs) if x.arg == name), None)
        return self._annotation_kind(found.annotation, 0) if found is not None and found.annotation else None

    def _annotation_kind(self, node: ast.AST, depth: int) -> str | None:
        if depth > 4:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a forward reference
            try:
                node = ast.parse(node.value, mode="eval").body
            except (SyntaxError, ValueError, RecursionError):
                return None
            return self._annotation_kind(node, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            sides = [x for x in (node.left, node.right) if not _is_none(x)]
            return self._annotation_kind(sides[0], depth + 1) if len(sides) == 1 else None
        if isinstance(node, ast.Subscript) and self.file.qualify(dotted(node.value) or "") == "typing.Optional":
            return self._annotation_kind(node.slice, depth + 1)
        name = dotted(node)
        return REDIS if name is not None and self.file.qualify(name) in REDIS_CLASSES else None

    def _is_property(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        names = {self.file.qualify(d) for d in (dotted(x) for x in node.decorator_list) if d is not None}
        return bool(names & _PROPERTIES) and len(node.decorator_list) == 1

    def _walk(self, tree: ast.Module, providers: dict[str, list[str]], classes: dict[str, dict[str, list[str]]]) -> None:
        """One walk of the module: each call of a project class (``_call_site``)
        and each ``self.x = value``/``cls.x = value`` of a method, recorded
        as a provider of ``<class>.x`` (an ``__init__`` parameter: what the
        class's callers pass, see ``client_index.build``; ``None``: not made
        yet; anything unknown: ``?``)."""
        text = self.file.text
        lines: set[int] = set()  # where a call of a project class may start
        line, position = 1, 0
        for m in _CAPITALISED_CALL.finditer(text):
            if self._project_class(m.group(1)):
                line += text.count("\n", position, m.start())
                position = m.start()
                lines.add(line)
        calls = bool(lines)
        if not calls and not (classes and _SELF_ASSIGNMENT.search(text)):
            return  # nothing to record: most files, without walking them
        first, last = (min(lines), max(lines)) if lines else (0, -1)
        assigned_of: dict[int, dict[str, list[ast.AST]]] = {}
        todo: list[tuple[ast.AST, ast.AST | None, str | None]] = [(tree, None, None)]
        if not calls:  # only what the methods of the module's classes assign
            todo = [(m, m, c.name) for c in _module_statements(tree.body) if isinstance(c, ast.ClassDef)
                    for m in c.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
        while todo:
            node, function, cls = todo.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef):
                    todo.append((child, None, child.name))
                    continue
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    todo.append((child, child, cls if function is None and isinstance(node, ast.ClassDef) else None))
                    continue
                if isinstance(child, ast.Call):
                    self._call_site(child, function, cls, assigned_of, providers)
                elif isinstance(child, (ast.Assign, ast.AnnAssign)) and function is not None and cls is not None:
                    self._attribute(child, function, cls, assigned_of, providers, classes)
                elif isinstance(child, _LEAVES):
                    continue
                if isinstance(child, _SIMPLE) and not _spans(child, lines, first, last):
                    continue  # a statement with no call of a project class in its lines
                todo.append((child, function, cls))

    def _attribute(self, node: ast.Assign | ast.AnnAssign, method, cls: str, assigned_of, providers, classes) -> None:
        params = [a.arg for a in method.args.args]
        if not params or params[0] not in ("self", "cls"):
            return
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == params[0]):
                continue
            info = classes.get(f"{self.module}.{cls}")
            if info is not None and target.attr not in info["names"]:
                info["names"].append(target.attr)
            if node.value is None or _is_none(node.value):
                continue  # ``self._client = None``: not made yet
            if id(method) not in assigned_of:
                assigned_of[id(method)] = _assigned(list(_own_nodes(method)))
            source = self._attribute_source(node.value, method, params, assigned_of[id(method)], cls)
            providers.setdefault(f"{self.module}.{cls}.{target.attr}", []).append(source or "?")

    def _project_class(self, name: str, cls: str | None = None) -> str | None:
        """The project-wide name of a capitalised callable of the project
        (``Lock``, ``locks.Lock``), or None."""
        if not name.rpartition(".")[2][:1].isupper():
            return None
        qualified = self._qualified(name, cls)
        if qualified is None or qualified.startswith(LIBRARY_PREFIXES) or qualified in REDIS_FACTORIES:
            return None
        head = qualified.partition(".")[0]
        if "." in self.module:  # a package: classes of its own top-level package only, never a library's
            return qualified if head == self.module.partition(".")[0] else None
        return qualified if head not in sys.stdlib_module_names else None  # a flat layout: any module but the stdlib's

    def _call_site(self, call: ast.Call, function: ast.AST | None, cls: str | None,
                   assigned_of: dict[int, dict[str, list[ast.AST]]], providers: dict[str, list[str]]) -> None:
        name = dotted(call.func)
        qualified = self._project_class(name, cls) if name is not None else None
        if qualified is None:
            return
        assigned: dict[str, list[ast.AST]] = {}
        if function is not None and any(isinstance(a, ast.Name) for a in (*call.args, *(k.value for k in call.keywords))):
            if id(function) not in assigned_of:  # only a local name passed needs the function's bindings
                assigned_of[id(function)] = _assigned(list(_own_nodes(function)))
            assigned = assigned_of[id(function)]
        for i, a in enumerate(call.args):
            key = "*" if isinstance(a, ast.Starred) else str(i)
            providers.setdefault(f"{qualified}(@{key})", []).append(
                "?" if key == "*" else self._source(a, assigned, set(), cls) or "?")
        for k in call.keywords:
            providers.setdefault(f"{qualified}(@{k.arg or '*'})", []).append(
                self._source(k.value, assigned, set(), cls) or "?" if k.arg else "?")

    def _statement(self, node: ast.stmt, prefix: str, providers: dict[str, list[str]], cls: str | None) -> None:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            source = self._source(node.value, {}, set(), cls)
            if source is not None:
                for target in targets:
                    if isinstance(target, ast.Name):
                        providers.setdefault(f"{prefix}.{target.id}", []).append(source)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            sources = self._returns(node, cls)
            if sources:
                providers[f"{prefix}.{node.name}()"] = sources

    def _returns(self, node: ast.FunctionDef | ast.AsyncFunctionDef, cls: str | None,
                 properties: bool = False) -> list[str] | None:
        for decorator in node.decorator_list if not properties else ():
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            name = dotted(target)
            if name is None or self.file.qualify(name) not in _DECORATORS:
                return None
        # an ``async def`` counts too: ``await get_redis()`` is what its users write
        returns = self.returns.get(id(node), [])
        values = [r.value for r in returns if not _is_none(r.value)]
        if not values or any(self._source(v, {}, set(), cls) is None for v in values if not isinstance(v, ast.Name)):
            return None  # most functions: settled without walking their bodies
        own = list(_own_nodes(node))
        globals_ = {n for g in own if isinstance(g, ast.Global) for n in g.names}
        assigned = _assigned(own)
        sources = []
        for value in values:
            source = self._source(value, assigned, globals_, cls)
            if source is None:
                return None
            sources.append(source)
        return sources


    def _source(self, node: ast.AST, assigned: dict[str, list[ast.AST]], globals_: set[str],
                cls: str | None, depth: int = 0) -> str | None:
        """A kind, a reference, or None (not a client, or unknown)."""
        if depth > 4:
            return None
        if isinstance(node, ast.Call):
            name = dotted(node.func)
            if name is None:
                return None
            qualified = self._qualified(name, cls)
            if qualified in REDIS_FACTORIES:
                return REDIS
            return None if qualified is None else qualified + "()"
        if isinstance(node, ast.Subscript):
            name = dotted(node.value)
            return CACHE if name is not None and self.file.qualify(name) in CACHE_MAPPINGS else None
        if isinstance(node, ast.IfExp):
            a = self._source(node.body, assigned, globals_, cls, depth + 1)
            b = self._source(node.orelse, assigned, globals_, cls, depth + 1)
            return a if a == b else None
        if isinstance(node, ast.Name) and node.id in assigned and node.id not in self.file.imports:
            values = [v for v in assigned[node.id] if not _is_none(v)]
            found = {self._source(v, {}, set(), cls, depth + 1) for v in values}
            if len(found) != 1 or None in found:
                return None
            return found.pop()
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = dotted(node)
            if name is None:
                return None
            qualified = self.file.qualify(name)
            if qualified in CACHE_OBJECTS:
                return CACHE
            if isinstance(node, ast.Name) and node.id in globals_:
                return None  # a global set elsewhere too: only through assignments seen above
            return self._qualified(name, cls)
        return None

    def _qualified(self, name: str, cls: str | None) -> str | None:
        """The project-wide name of a dotted name used in this file."""
        head = name.partition(".")[0]
        if head in self.file.imports:
            return self.file.qualify(name)
        if head in ("self", "cls") and cls is not None:
            if name == "cls":  # ``return cls(...)`` in a classmethod: the class itself
                return f"{self.module}.{cls}"
            return f"{self.module}.{cls}.{name.partition('.')[2]}" if "." in name else None
        if head in self.defined:
            return f"{self.module}.{name}"
        return None


def _assigned(own: list[ast.AST]) -> dict[str, list[ast.AST]]:
    """What each local name of a function is bound to (a loop, ``with`` or
    unpacking: the binding node itself, which is unknown)."""
    assigned: dict[str, list[ast.AST]] = {}
    for n in own:
        if isinstance(n, ast.Assign):
            for target in n.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(n.value)
                else:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            assigned.setdefault(name.id, []).append(target)  # unpacked: unknown
        elif isinstance(n, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and isinstance(n.target, ast.Name):
            assigned.setdefault(n.target.id, []).append(n.value if not isinstance(n, ast.AugAssign) else n)
        elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension, ast.withitem)):
            bound = n.optional_vars if isinstance(n, ast.withitem) else n.target
            for name in ast.walk(bound) if bound is not None else ():
                if isinstance(name, ast.Name):
                    assigned.setdefault(name.id, []).append(n)  # bound by a loop or with: unknown
    return assigned


def _aliases(path: str, module: str) -> list[str]:
    """The names the module may be imported by when its package chain has no
    ``__init__.py`` (namespace packages, a source root below the project's):
    the dotted suffixes of its path, ``a/b/c.py`` -> ``a.b.c``, ``b.c``."""
    parts = path[:-3].split("/") if path.endswith(".py") else []
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return []
    return [n for n in (".".join(parts[i:]) for i in range(max(0, len(parts) - 4), len(parts))) if n != module]


def _returns_by_function(tree: ast.Module) -> dict[int, list[ast.Return]]:
    """The ``return`` statements of each function (by ``id``), not those of
    the functions nested in it: one walk of the module."""
    found: dict[int, list[ast.Return]] = {}
    todo: list[tuple[ast.AST, int | None]] = [(tree, None)]
    while todo:
        node, owner = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Return) and owner is not None:
                found.setdefault(owner, []).append(child)
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                todo.append((child, id(child)))
            elif isinstance(child, (ast.Lambda, ast.ClassDef)):
                todo.append((child, None))
            elif isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                todo.append((child, owner))
    return found
