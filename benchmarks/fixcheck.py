"""Check every fix celerylint makes on real trees, never touching them: each
project is copied to a scratch directory twice; one copy gets
``--fix --unsafe-fixes``, the other ``--diff --unsafe-fixes``.  Per project:

- no traceback, exit status 0, 1 or 2;
- every changed Python file compiles with CPython and defines the same
  module-level names as before, but for Celery setting names a fix adds or
  renames (``same_names``);
- ``--diff`` leaves its copy alone, applies to it with ``git apply`` and
  gives exactly the ``--fix`` result;
- a second ``--fix`` changes nothing.

    python benchmarks/fixcheck.py /work/corpus/* [--celerylint PATH] [--timeout 900] [--json]

Prints one line of counts per project; exits 1 when a check failed.  The
fuzz test (tests/run/test_fix_fuzz.py) runs ``check_tree`` on generated trees.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

IGNORED = shutil.ignore_patterns(".git", "node_modules", ".celerylint_cache", "__pycache__")
BASE = ("--no-cache", "--select", "CL", "--output-format", "concise")


def _run(command: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, capture_output=True, timeout=timeout,
                          env={**os.environ, "NO_COLOR": "1"})


def _state(root: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime) of every file under ``root``, by relative path."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            st = os.lstat(path)
            out[os.path.relpath(path, root)] = (st.st_size, st.st_mtime_ns)
    return out


def _changed(root: Path, before: dict[str, tuple[int, int]]) -> list[str]:
    after = _state(root)
    return sorted(rel for rel in set(before) | set(after) if before.get(rel) != after.get(rel))


def module_names(source: bytes) -> set[str] | None:
    """The names a module binds at module level (imports, definitions,
    assignment targets, at any depth of ``if``/``try``/``with``/``for``),
    or None when CPython cannot parse it."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: set[str] = set()
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            stack.extend(node.decorator_list)
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        stack.extend(ast.iter_child_nodes(node))
    return names


def same_names(before: bytes, after: bytes) -> str | None:
    """None when the fixed module binds the names it bound before, but for
    Celery setting names (a fix adds a setting, or renames one: each name
    gone has a setting name in its place); else what differs."""
    from celerylint.domain.celeryconf.settings_table import table

    old, new = module_names(before), module_names(after)
    if old is None:
        return None if new is not None else "CPython cannot parse it before nor after"
    if new is None:
        return "CPython cannot parse the fixed file"
    t = table()
    added, gone = new - old, old - new
    foreign = sorted(n for n in added if not (t.known(n) or t.canonical(n, "CELERY")))
    if foreign or len(gone) > len(added):
        return f"module-level names changed: gone {sorted(gone)}, added {sorted(added)}"
    return None


def compiles(data: bytes) -> str | None:
    try:
        compile(data, "<fixed>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def check_tree(tree: Path, celerylint: list[str], *, timeout: float = 900, second: bool = True) -> dict:
    """Run the checks on a scratch copy of ``tree``; a row of counts, with
    ``problems`` (empty when every check passed)."""
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="fixcheck-") as scratch:
        fixed, diffed = Path(scratch) / "fix", Path(scratch) / "diff"
        shutil.copytree(tree, fixed, symlinks=True, ignore=IGNORED)
        shutil.copytree(tree, diffed, symlinks=True, ignore=IGNORED)
        before = _state(fixed)
        runs = {}
        for name, root, flag in (("fix", fixed, "--fix"), ("diff", diffed, "--diff")):
            proc = _run([*celerylint, *BASE, flag, "--unsafe-fixes", "."], root, timeout)
            runs[name] = proc
            if proc.returncode not in (0, 1, 2) or b"Traceback" in proc.stderr:
                problems.append(f"--{name}: exit {proc.returncode}: {proc.stderr.decode(errors='replace')[-2000:]}")
        changed = _changed(fixed, before)
        for rel in changed:
            path = fixed / rel
            if not rel.endswith(".py") or not path.is_file():
                problems.append(f"{rel}: changed by --fix, and not a Python file")
                continue
            new, old = path.read_bytes(), (diffed / rel).read_bytes()
            why = compiles(new) or same_names(old, new)
            if why:
                problems.append(f"{rel}: {why}")
        if _changed(diffed, before):
            problems.append(f"--diff changed files: {_changed(diffed, before)[:5]}")
        patch = runs["diff"].stdout
        if patch:
            applied = subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=diffed, input=patch,
                                     capture_output=True, timeout=timeout)
            if applied.returncode != 0:
                problems.append(f"git apply failed: {applied.stderr.decode(errors='replace')[-2000:]}")
        elif changed:
            problems.append("--fix changed files and --diff printed no patch")
        patched = _changed(diffed, before)
        if patched != changed:
            problems.append(f"--diff touches {patched[:5]}, --fix {changed[:5]}")
        differ = [rel for rel in changed if (fixed / rel).is_file() and (diffed / rel).is_file()
                  and (fixed / rel).read_bytes() != (diffed / rel).read_bytes()]
        if differ:
            problems.append(f"--diff applied differs from --fix in {differ[:5]}")
        again: list[str] = []
        if second:
            settled = _state(fixed)
            proc = _run([*celerylint, *BASE, "--fix", "--unsafe-fixes", "."], fixed, timeout)
            again = _changed(fixed, settled)
            if again:
                problems.append(f"a second --fix changed {again[:5]}")
            if proc.returncode not in (0, 1, 2) or b"Traceback" in proc.stderr:
                problems.append(f"second --fix: exit {proc.returncode}")
        return {"project": tree.name, "files_changed": len(changed), "diff_lines": patch.count(b"\n"),
                "notices": sum(1 for line in runs["fix"].stderr.splitlines() if line.startswith(b"celerylint:")),
                "second_fix_changed": len(again), "problems": problems}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("projects", nargs="+", type=Path)
    parser.add_argument("--celerylint", help="the celerylint command (default: this Python's)")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--json", action="store_true", help="one JSON object per project")
    args = parser.parse_args()
    command = [args.celerylint] if args.celerylint else [sys.executable, "-m", "celerylint"]
    failed = 0
    for project in args.projects:
        if not project.is_dir():
            continue
        row = check_tree(project.resolve(), command, timeout=args.timeout)
        failed += bool(row["problems"])
        if args.json:
            print(json.dumps(row), flush=True)
            continue
        print(f"{row['project']}: {row['files_changed']} files fixed, {row['diff_lines']} diff lines, "
              f"{row['notices']} notices, second --fix changed {row['second_fix_changed']}, "
              f"{len(row['problems'])} problems", flush=True)
        for problem in row["problems"]:
            print(f"    {problem}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
