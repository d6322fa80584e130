"""The layout CONTRIBUTING.md describes.

- Imports point one way: every import of one celerylint module by another,
  deferred ones inside functions and ``if TYPE_CHECKING:`` ones included,
  goes to a layer at or below the importer's (``LAYERS``).
- No import cycle among the imports that run (module level and deferred);
  a type-only import may point sideways within one package.
- Rules import the framework only through ``celerylint.rule`` (shared
  analysis from ``domain``, fact constants from ``facts``), never another rule.
- No module is over 400 lines of code (docstrings and rule cases do not count).
"""

from __future__ import annotations

import ast

import pytest

from conftest import REPO

PACKAGE = REPO / "celerylint"
RULES = sorted([*(PACKAGE / "rules").glob("cl*.py"), *(PACKAGE / "rules").glob("_cl*_cases.py")])

# Lowest first.  A module may import modules of its own layer or of a lower one.
LAYERS = (
    ("celerylint", "celerylint.core"),
    ("celerylint.api",),
    ("celerylint.domain", "celerylint.facts"),
    ("celerylint.rule",),
    ("celerylint.rules",),
    ("celerylint.registry", "celerylint.catalog"),
    ("celerylint.config",),
    ("celerylint.docs",),
    ("celerylint.engine",),
    ("celerylint.run",),
    ("celerylint.reporters",),
    ("celerylint.doctor",),
    ("celerylint.cli", "celerylint.server"),
    ("celerylint.testing", "celerylint.devtools", "celerylint.__main__"),
)


def _modules() -> dict[str, object]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _layer(module: str) -> int:
    best, rank = -1, None
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), index
    assert rank is not None, f"{module} is in no layer of LAYERS"
    return rank


def _type_only(tree: ast.Module) -> set[int]:
    """The ids of the imports under ``if TYPE_CHECKING:``."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            ids.update(id(n) for statement in node.body for n in ast.walk(statement))
    return ids


def _imports(module: str) -> list[tuple[str, bool, int]]:
    """(imported module, type only, line) for every celerylint import of ``module``."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typed = _type_only(tree)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module
            names = [f"{target}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
            target = None
        else:
            continue
        for name in names:
            hit = name if name in MODULES else target
            if hit in MODULES and hit != module:
                out.append((hit, id(node) in typed, node.lineno))
    return out


EDGES = {module: _imports(module) for module in MODULES}


def test_every_module_is_in_a_layer():
    for module in MODULES:
        _layer(module)


def test_imports_point_down_the_layers():
    upward = [f"{module}:{line} imports {target}" for module, edges in EDGES.items()
              for target, _, line in edges if _layer(target) > _layer(module)]
    assert not upward, "\n".join(upward)


def test_no_import_cycle_among_the_imports_that_run():
    graph = {m: sorted({t for t, typed, _ in edges if not typed}) for m, edges in EDGES.items()}
    state: dict[str, int] = {}  # 1 on the path, 2 done
    for start in graph:
        if start in state:
            continue
        path, stack = [start], [iter(graph[start])]
        state[start] = 1
        while stack:
            target = next(stack[-1], None)
            if target is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(target) == 1:
                cycle = path[path.index(target):] + [target]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            elif target not in state:
                state[target] = 1
                path.append(target)
                stack.append(iter(graph[target]))


def test_type_only_imports_stay_in_their_package():
    sideways = [f"{module}:{line} imports {target} for types" for module, edges in EDGES.items()
                for target, typed, line in edges
                if typed and _layer(target) == _layer(module) and target.split(".")[:2] != module.split(".")[:2]]
    assert not sideways, "\n".join(sideways)


def test_the_top_level_keeps_only_the_public_faces():
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= 12, modules


@pytest.mark.parametrize("path", RULES, ids=lambda p: p.stem)
def test_a_rule_imports_the_framework_only_through_rule(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            module = node.module or ""
            assert node.level == 2 and (module == "rule" or module.startswith(("domain", "facts"))), (
                f"{path.name} imports {'.' * node.level}{module}")


def _code_lines(text: str) -> int:
    tree = ast.parse(text)
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            skip.update(range(node.lineno, node.end_lineno + 1))
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in ("VALID", "INVALID")
                                                for t in node.targets):
            skip.update(range(node.lineno, node.end_lineno + 1))
    return sum(1 for number, line in enumerate(text.splitlines(), 1) if line.strip() and number not in skip)


def test_no_module_is_over_400_lines_of_code():
    long = {}
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "generated" in text[:400].lower():
            continue
        if (n := _code_lines(text)) > 400:
            long[path.relative_to(REPO).as_posix()] = n
    assert not long, long
