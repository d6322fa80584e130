"""Prefilters, the result cache and the process pool must never lose a finding.

Every rule's INVALID cases go through the real CLI three times -- without the
cache, filling it, and served from it (with libcst forbidden) -- and must be
reported each time, identically.  All file-rule cases together then go
through the process pool and must come back in the same order as serially.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import lint_json
from celerylint.run import linter, pool, runner
from celerylint.run.cache import ENV as CACHE_ENV
from celerylint.cli.commands import main
from celerylint.registry import discover_classes
from celerylint.rule import ProjectRule
from celerylint.testing import write_case

RULES = [c for c in discover_classes() if getattr(c, "CODE", "")]
CASES = [
    pytest.param(rule, case, id=f"{rule.CODE}-invalid-{i}")
    for rule in RULES
    for i, case in enumerate(rule.INVALID)
]


def lint(root: Path, *args: str, cache_dir: Path | None = None) -> tuple[int, list[dict]]:
    status, findings, _ = lint_json(root, *args, cache_dir=cache_dir)
    return status, findings


def age(root: Path, seconds: int = 60) -> None:
    """Date every file back: the stat index does not trust files modified
    in the last two seconds."""
    for path in [root, *root.rglob("*")]:  # the root too: the first run made its cache directory there
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 10**9))


def parsed_by_libcst(root: Path) -> bool:
    from celerylint.config.settings import Settings

    check = linter.Linter(Settings(root=root, config_dir=root))
    return any(check.prepare(p, p.read_bytes())[1] is not None for p in root.rglob("*.py"))


def forbid_reading(monkeypatch) -> None:
    def fail(self, path):
        raise AssertionError(f"{path} was read although the stat index knows it")

    monkeypatch.setattr(runner.Linter, "read", fail)


def select(rule) -> list[str]:
    return ["--select", "CL" if rule.CODE in ("CL001", "CL002") else rule.CODE]  # the run itself: with every rule


def mine(findings: list[dict], rule) -> list[dict]:
    return [f for f in findings if f["code"] == rule.CODE]


def forbid_libcst(monkeypatch) -> None:
    def fail(*args, **kwargs):
        raise AssertionError("a cached file was analysed again")

    monkeypatch.setattr(linter, "analyze_job", fail)


@pytest.mark.parametrize(("rule", "case"), CASES)
def test_invalid_case_survives_prefilter_and_cache(rule, case, tmp_path, monkeypatch):
    root = tmp_path / "project"
    root.mkdir()
    write_case(case, root)
    cache = tmp_path / "cache"
    _, uncached = lint(root, "--no-cache", *select(rule))
    found = mine(uncached, rule)
    if case.count is not None:
        assert len(found) == case.count, uncached
    else:
        assert found, f"{rule.CODE} lost an invalid case through the CLI:\n{case.source}"
    _, filling = lint(root, *select(rule), cache_dir=cache)
    assert filling == uncached
    if parsed_by_libcst(root):  # only what libcst analyses is cached (CL002's cases may need none)
        assert any(p.is_file() and p.name != ".gitignore" for p in cache.rglob("*"))
        assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    with monkeypatch.context() as m:
        forbid_libcst(m)
        _, warm = lint(root, *select(rule), cache_dir=cache)
    assert warm == uncached
    # the stat index (used for large trees) serves the same without reading a file
    age(root)
    with monkeypatch.context() as m:
        m.setattr(runner, "INDEX_MIN_FILES", 1)
        _, indexing = lint(root, *select(rule), cache_dir=cache)
        forbid_reading(m)
        _, indexed = lint(root, *select(rule), cache_dir=cache)
    assert indexing == uncached
    assert indexed == uncached


def write_cases(root: Path, *, file_rules_only: bool = False) -> Path:
    """Every default rule's INVALID case without configuration, each in its own directory."""
    for rule in RULES:
        if (file_rules_only and issubclass(rule, ProjectRule)) or not rule.DEFAULT_ENABLED:
            continue
        for i, case in enumerate(rule.INVALID):
            if not case.config:
                write_case(case, root / f"{rule.CODE.lower()}_{i}")
    return root


def test_pool_gives_the_serial_result_in_order(tmp_path, monkeypatch):
    root = write_cases(tmp_path / "project", file_rules_only=True)
    count = sum(1 for _ in root.iterdir())
    monkeypatch.setattr(pool, "PARALLEL_MIN_FILES", 2)
    monkeypatch.setattr(pool, "PARALLEL_MIN_BYTES", 0)
    _, serial = lint(root, "--no-cache", "--jobs", "1")
    calls = []
    real = pool.run_pool
    monkeypatch.setattr(pool, "run_pool", lambda *a: calls.append(a) or real(*a))
    _, parallel = lint(root, "--no-cache", "--jobs", "2")
    assert calls, "the pool was not used"
    assert parallel == serial
    codes = {f["path"].split("/")[0] for f in serial}
    assert len(codes) == count  # every case directory reported something


def test_triage_pool_gives_the_serial_result_in_order(tmp_path, monkeypatch):
    """A large tree is read and prefiltered by workers in chunks, then the
    files to parse go to a second pool."""
    root = write_cases(tmp_path / "project")
    _, serial = lint(root, "--no-cache", "--jobs", "1")
    monkeypatch.setattr(pool, "PARALLEL_MIN_PATHS", 2)
    monkeypatch.setattr(pool, "PARALLEL_MIN_FILES", 2)
    monkeypatch.setattr(pool, "PARALLEL_MIN_BYTES", 0)
    calls = []
    for name in ("triage_chunks", "run_pool"):
        real = getattr(pool, name)
        monkeypatch.setattr(pool, name, lambda *a, real=real, name=name: calls.append(name) or real(*a))
    _, parallel = lint(root, "--no-cache", "--jobs", "2")
    # then perhaps a second analysis round: the files a task class of another case answers differently
    assert calls[:2] == ["triage_chunks", "run_pool"] and set(calls[2:]) <= {"run_pool"}, calls
    assert parallel == serial
    assert {f["code"] for f in serial} >= {"CL201", "CL203", "CL209", "CL101"}


def test_results_served_from_the_cache_survive_the_triage_pool(tmp_path, monkeypatch):
    """A file the stat index does not know but the content cache does (its
    mtime changed, its bytes did not) comes back from a triage worker with
    its cached facts: the project phase must see them."""
    root = write_cases(tmp_path / "project")
    _, serial = lint(root, "--no-cache", "--jobs", "1")
    assert any(f["code"].startswith("CL1") for f in serial)  # project findings from facts
    monkeypatch.setattr(pool, "PARALLEL_MIN_PATHS", 2)
    monkeypatch.setattr(runner, "INDEX_MIN_FILES", 10**9)  # no stat index: every file is triaged
    cache = tmp_path / "cache"
    lint(root, "--jobs", "2", cache_dir=cache)  # fill
    forbid_libcst(monkeypatch)
    _, served = lint(root, "--jobs", "2", cache_dir=cache)
    assert served == serial


def _plainly(needle, data: bytes) -> bool:
    """What a requirement means, written out plainly: the oracle for the
    compiled prefilter (which shares and orders the searches)."""
    from celerylint.api.needles import All, Regex

    if isinstance(needle, All):
        return all(_plainly(part, data) for part in needle)
    if isinstance(needle, tuple):
        return any(_plainly(part, data) for part in needle)
    if isinstance(needle, Regex):
        return re.search(bytes(needle), data) is not None
    return needle in data


def test_compiled_prefilter_agrees_with_the_requirements():
    """prefilter.py's compiled function gives, for every rule case and for
    texts with one requirement part each, the entries the plain meaning gives."""
    from celerylint.engine.analysis import code_bytes
    from celerylint.engine.prefilter import prefilter
    from celerylint.registry import All, entries

    def atoms(needle):
        if isinstance(needle, tuple):  # All and alternatives
            for part in needle:
                yield from atoms(part)
        elif not isinstance(needle, All):
            yield needle

    texts = [case.source for rule in discover_classes() for case in (*getattr(rule, "VALID", ()), *getattr(rule, "INVALID", ()))]
    texts += [bytes(a).decode("latin-1") for e in entries() for n in e.requires for a in atoms(n)]
    texts += ["", "x = 1\n", "@shared_task\ndef f(): pass\n", "import redis\nr.set('lock', 1, nx=True)\n"]
    every = entries()
    check = prefilter(every)
    # test paths too: an entry may require several path patterns (``PATHS`` as a tuple)
    for path in ("tasks.py", "proj/settings.py", "conf/base.py", "tests/settings.py", "proj/conftest.py"):
        for text in texts:
            data = code_bytes(text.encode("utf-8", "surrogateescape"))
            expected = [e for e in every if any(_plainly(n, data) for n in e.requires) and e.wanted_for(path)]
            assert check(data, path) == expected, text


def test_needle_in_licence_header_does_not_parse(tmp_path, monkeypatch):
    header = "# This program is free software: you can redistribute it and/or modify\n# it (celery).\n\n"
    (tmp_path / "plain.py").write_text(header + "def f(:\n    pass\n")
    (tmp_path / "real.py").write_text(header + "import redis\nx = (\n")
    _, findings = lint(tmp_path, "--no-cache")
    assert [(f["path"], f["code"]) for f in findings] == [("real.py", "CL001")]


def test_fix_with_a_warm_cache(tmp_path):
    rule = next(r for r in RULES if r.CODE == "CL203")
    case = next(c for c in rule.INVALID if isinstance(c.fixed, str))
    write_case(case, tmp_path)
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    lint(tmp_path, "--select", "CL203", cache_dir=cache)  # fill
    runner_ = CliRunner()
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        fixed = runner_.invoke(main, ["--select", "CL203", "--fix", "--unsafe-fixes", "."], env={CACHE_ENV: str(cache)})
    finally:
        os.chdir(old)
    assert fixed.exit_code in (0, 1), fixed.output
    assert (tmp_path / case.path).read_text() == case.expected
    _, after = lint(tmp_path, "--select", "CL203", cache_dir=cache)
    _, uncached = lint(tmp_path, "--select", "CL203", "--no-cache")
    assert after == uncached
    assert not [f for f in after if f["fix"]]


def test_broken_cache_entries_are_misses(tmp_path):
    rule = next(r for r in RULES if r.CODE == "CL206")
    write_case(rule.INVALID[0], tmp_path / "p")
    cache = tmp_path / "cache"
    _, first = lint(tmp_path / "p", cache_dir=cache)
    for entry in cache.rglob("*"):
        if entry.is_file() and entry.name != ".gitignore":
            entry.write_bytes(b"{not json")
    _, second = lint(tmp_path / "p", cache_dir=cache)
    assert second == first and first


def test_two_runs_share_one_cache(tmp_path):
    for rule in RULES:
        if not issubclass(rule, ProjectRule):
            for i, case in enumerate(rule.INVALID):
                if not case.config:
                    write_case(case, tmp_path / "p" / f"{rule.CODE}_{i}")
    env = {**os.environ, CACHE_ENV: str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "celerylint", "--format", "json", "."]
    procs = [subprocess.Popen(cmd, cwd=tmp_path / "p", env=env, stdout=subprocess.PIPE) for _ in range(2)]
    outputs = [json.loads(p.communicate(timeout=300)[0]) for p in procs]
    _, uncached = lint(tmp_path / "p", "--no-cache")
    assert outputs[0] == outputs[1] == uncached
    assert not list((tmp_path / "cache").rglob(".tmp-*"))
    shutil.rmtree(tmp_path / "cache")


PATTERNS = [rb"\beta\s*=", rb"redis(?!tribut)", rb"(?<=\.)delay\(", rb"x\w+eta", rb"a|bc", rb"(?i)Eta", rb"^\s*CELERY_[A-Z_]+\s*=",
            rb"\.(?:apply_async|delay)\("]
TEXTS = [b"", b"eta", b"meta=1", b"x.eta = 3", b"(eta =", b"beta=1; eta\n=", b"zeta=1\neta\t=", b"redistribute redis",
         b"t.delay(1)", b"delay(", b"xyeta", b"  CELERY_BROKER_URL = 1", b"a\nCELERY_X=", b"ETA=", b"bc", b"eta" * 50 + b"=",
         b"f.apply_async(", b".delay"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_regex_needle_shortcut_is_exact(pattern):
    from celerylint.api.needles import Regex, search

    for text in TEXTS:
        assert search(Regex(pattern), text) == bool(re.search(pattern, text))
