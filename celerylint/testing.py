"""Run a rule's embedded cases through the real engine and fix loop.

A case's source may hold several files, each starting with a line
``# file: path/to/module.py``; otherwise it is one file at ``case.path``.
Used by the test suite; public for authors of rules.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from .api.cases import Case, Invalid, Valid, django_project
from .config.extend import load_settings
from .docs import rule_doc, sections
from .registry import known_codes
from .run.runner import RunResult, parses, run

FILE_MARKER = re.compile(r"^# file: (\S+)[ \t]*\n", re.MULTILINE)
_FENCED = re.compile(r"```\w+\n(.*?)```", re.DOTALL)


_NAMED = re.compile(r"\A# ([\w./-]+\.(?:py|ya?ml|conf))[ \t]*\n")


def cases(rule: type) -> tuple[tuple[Case, ...], tuple[Case, ...]]:
    """The rule's ``VALID`` and ``INVALID`` cases: its own, then those of the
    module beside it named ``_<rule module>_cases.py`` when there is one
    (a rule whose cases outgrow its module keeps the rest there; the
    registry skips modules whose name starts with ``_``)."""
    import importlib

    package, _, name = rule.__module__.rpartition(".")
    try:
        extra = importlib.import_module(f"{package}._{name}_cases")
    except ModuleNotFoundError as exc:
        if exc.name != f"{package}._{name}_cases":
            raise
        extra = None
    return ((*rule.VALID, *getattr(extra, "VALID", ())), (*rule.INVALID, *getattr(extra, "INVALID", ())))


def doc_cases(rule: type) -> tuple[Case, Case]:
    """The rule's ``## Example`` as an invalid case and its ``Use instead``
    block as a valid one: the documentation runs, so it cannot drift.

    A block may start with ``# file: path`` sections, or with a comment
    naming its file (``# celeryconfig.py``).  A configuration module shown
    alone is loaded by an app the harness adds: ``config_from_object`` for a
    ``celeryconfig``, the Django settings (``namespace="CELERY"``) for a
    ``settings.py``."""
    example = sections(rule_doc(rule))["Example"]
    bad, _, good = example.partition("Use instead:")
    return Invalid(_runnable(_FENCED.findall(bad)[0])), Valid(_runnable(_FENCED.findall(good)[0]))


def _runnable(block: str) -> str:
    named = _NAMED.match(block)
    if named is None:
        return block
    path = named.group(1)
    source = f"# file: {path}\n" + block[named.end():]
    if "Celery(" in source or not path.endswith(".py"):
        return source
    module = path[:-3].replace("/", ".")
    if path.endswith("settings.py"):
        return django_project(block[named.end():], module=module)
    return source + ("# file: proj.py\nfrom celery import Celery\n"
                     f'app = Celery("proj")\napp.config_from_object("{module}")\n')


def split_files(source: str, default: str) -> dict[str, str]:
    parts = FILE_MARKER.split(source)
    if len(parts) == 1:
        return {default: source}
    files = {}
    if parts[0].strip():
        files[default] = parts[0]
    for i in range(1, len(parts), 2):
        files[parts[i]] = parts[i + 1]
    return files


def write_case(case: Case, root: Path) -> dict[str, str]:
    files = split_files(case.source, case.path)
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    if case.config:
        lines = [f"{k} = {_toml(v)}" for k, v in case.config.items()]
        (root / "celerylint.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return files


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f'"{k}" = {_toml(v)}' for k, v in value.items()) + "}"
    raise TypeError(value)


def lint_case(root: Path, code: str, *, fix: bool = False) -> RunResult:
    config = root / "celerylint.toml"
    settings = load_settings(config if config.exists() else None, root, known_codes())
    settings = replace(settings, root=root, config_dir=root, select=(code,) if code not in ("CL001", "CL002") else ("CL",))  # the run itself: with every rule
    return run([root], settings, fix=fix, unsafe=fix)


def check_case(rule: type, case: Case, root: Path, valid: bool) -> None:
    """Assert what the case says; raises AssertionError with the findings."""
    files = write_case(case, root)
    result = lint_case(root, rule.CODE)
    assert not result.errors, result.errors
    mine = [f for f in result.findings if f.code == rule.CODE]
    shown = "\n".join(f"{f.path}:{f.line}:{f.col + 1}: {f.code} {f.message}" for f in result.findings)
    if valid:
        assert not mine, f"valid case reported:\n{shown}"
        return
    if case.count is not None:
        assert len(mine) == case.count, f"expected {case.count} findings, got:\n{shown}"
    else:
        assert mine, f"invalid case not reported:\n{case.source}"
    styled = [f.fix.description for f in mine if f.fix is not None and not f.fix.description[:1].islower()]
    assert not styled, f"fix descriptions are lower case and imperative (\"add `x`\"): {styled}"
    if case.message is not None:
        assert all(case.message in f.message for f in mine), f"expected {case.message!r} in:\n{shown}"
    if case.at is not None:
        first = min(mine, key=lambda f: (f.path, f.line, f.col))
        assert f"{first.line}:{first.col + 1}" == case.at, f"expected the first at {case.at}:\n{shown}"
    if case.expected is ...:
        return
    fixable = [f for f in mine if f.fix is not None]
    if case.expected is None:
        assert not fixable, f"case offers a fix it should not: {fixable[0].fix}"
        return
    assert fixable, "case expects a fix but none is offered"
    result = lint_case(root, rule.CODE, fix=True)
    assert not result.errors, result.errors
    expected = split_files(case.expected, case.path)
    for rel, text in expected.items():  # the case itself: what it expects is code CPython compiles
        assert not rel.endswith(".py") or parses(text), f"expected fixed {rel} does not compile:\n{text}"
    for rel in files:
        text = (root / rel).read_text(encoding="utf-8")
        assert parses(text), f"fixed {rel} does not parse or compile:\n{text}"
        if rel in expected:
            assert text == expected[rel], f"fixed {rel}:\n{text}\n--- expected:\n{expected[rel]}"
    left = [f for f in result.findings if f.code == rule.CODE and f.fix is not None]
    assert not left, f"fixable findings remain after --fix: {left}"
    before = {rel: (root / rel).read_bytes() for rel in files}
    again = lint_case(root, rule.CODE, fix=True)
    assert not again.fixed, f"a second --fix changed files: {again.fixed}"
    assert before == {rel: (root / rel).read_bytes() for rel in files}
