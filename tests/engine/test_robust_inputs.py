"""Broken, hostile and odd input files: one clear CL001 finding each, or a
notice on stderr, never a traceback, and the other files are still linted.

One run of the real CLI over a tree holding every kind of bad input next to a
good file with a known finding; then the cases that need in-process control
(a file that vanishes, a file that cannot be read while running as root).
"""

from __future__ import annotations

import codecs
import json
import os
from pathlib import Path

import pytest

from celerylint.config.settings import Settings
from celerylint.run.runner import run

GOOD = "import redis\nr = redis.Redis()\ndef f(key):\n    r.set('lock:' + key, 1, nx=True)\n"


def deep_if(n: int) -> bytes:
    return ("import celery\n" + "".join(" " * i + "if x:\n" for i in range(n)) + " " * n + "pass\n").encode()


# name -> (bytes, expected CL001 message fragment, or None for "no finding")
BAD: dict[str, tuple[bytes, str | None]] = {
    "syntax.py": (b"from celery import shared_task\ndef f(:\n    pass\n", "syntax error"),
    "undecodable.py": (b"import celery\nx = '\xff\xfe\xfa'\n", "cannot decode byte 0xff as utf-8"),
    "unknown_cookie.py": (b"# -*- coding: klingon -*-\nimport celery\n", "unknown encoding: klingon"),
    "wrong_cookie.py": (b"# coding: ascii\nimport celery\nname = 'caf\xc3\xa9'\n", "cannot decode byte 0xc3 as ascii"),
    "transform_cookie.py": (b"# coding: rot13\nvzcbeg pryrel\n", "unsupported source encoding rot13"),
    "latin1_cookie.py": (b"# coding: latin-1\nimport celery\nname = 'caf\xe9'\n", None),
    "bom_utf8.py": (codecs.BOM_UTF8 + b"import celery\n", None),
    "bom_utf8_cookie_clash.py": (codecs.BOM_UTF8 + b"# coding: latin-1\nimport celery\n", "encoding problem"),
    "bom_utf16.py": (codecs.BOM_UTF16_LE + "import celery\n".encode("utf-16-le"), "UTF-16/UTF-32 byte order mark"),
    "bom_utf16_be.py": (codecs.BOM_UTF16_BE + "import celery\n".encode("utf-16-be"), "UTF-16/UTF-32 byte order mark"),
    "nul.py": (b"import celery\nx = 1\x00\n", "NUL byte"),
    "crlf.py": (b"import celery\r\nx = 1\r\n", None),
    "mixed_endings.py": (b"import celery\r\nx = 1\ny = 2\rz = 3\n", None),
    "empty.py": (b"", None),
    "only_bom.py": (codecs.BOM_UTF8, None),
    "parens.py": (b"import celery\nx = " + b"(" * 5000 + b"1" + b")" * 5000 + b"\n", "nested too deeply"),
    "brackets_after_error.py": (b"import celery\ndef f(:\nx = " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested too deeply"),
    "deep_if.py": (deep_if(300), "too many levels of indentation"),
    "deep_if_2000.py": (deep_if(2000), "too large to analyse"),  # 2 MB of indentation
    # redis: a rule wants these files, so they reach libcst (a file only CL001
    # wants is checked by CPython's parser, which accepts long elif chains)
    "elif_chain.py": (b"import redis\nif x:\n    pass\n" + b"elif x:\n    pass\n" * 2000, "nested too deeply"),
    "elif_chain_10000.py": (b"import redis\nif x:\n    pass\n" + b"elif x:\n    pass\n" * 10000, "nested too deeply"),
    "statement_too_long_after_error.py": (b"import celery\ndef f(:\nx = 1" + b" + 1" * 20000 + b"\n", "syntax error"),
    "unary.py": (b"import celery\nx = " + b"-" * 20000 + b"1\n", "nested too deeply"),
    "lambdas.py": (b"import celery\nx = " + b"lambda: " * 6000 + b"1\n", "nested too deeply"),
    "long_sum.py": (b"import celery\nx = 1" + b" + 1" * 20000 + b"\n", "nested too deeply"),
    "attr_chain.py": (b"import celery\nx = a" + b".b" * 20000 + b"\n", "nested too deeply"),
    "jinja_block.py": (b"{% if cookiecutter.use_celery == 'y' %}\nfrom celery import Celery\n{% endif %}\n", "Jinja template"),
    "jinja_import.py": (b"import celery\nfrom {{ cookiecutter.project_slug }}.users import tasks\n", "Jinja template, not Python ('{{ cookiecutter.project_slug }}')"),
    "jinja_expr.py": (b"from celery import Celery\napp = Celery('{{ cookiecutter.project_slug }}')\nx = {{ cookiecutter.n }}\n", None),
    "trailing_backslash.py": (b"import celery\nx = 1 \\", "syntax error"),
    "lone_surrogate_escape.py": (b"import celery\nx = '\\ud800'\n", None),
    # syntax newer than this interpreter (PEP 758) next to a long but shallow literal: libcst decides
    "newer_syntax_long_literal.py": (b"import celery\nDATA = [" + b"'x', " * 3000 + b"]\ntry:\n    pass\n"
                                     b"except KeyError, TypeError:\n    pass\n", None),
    "form_feed.py": (b"import celery\n\x0c\ndef f():\n    pass\n", None),
    "invalid_escape.py": (b"import celery\nx = '\\d' is 1\n", None),  # CPython would warn twice
    "tabs.py": (b"import celery\nif x:\n\tif y:\n\t\tpass\n", None),
}


def _tree(root: Path) -> None:
    (root / "good.py").write_text(GOOD)
    bad = root / "bad"
    bad.mkdir()
    for name, (data, _) in BAD.items():
        (bad / name).write_bytes(data)
    (bad / "big.py").write_bytes(b"import redis\n" + b"x = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n" * 600_000)  # 22 MB
    (bad / "dir.py").mkdir()
    (bad / "dir.py" / "inner.py").write_text(GOOD)
    (bad / "loop.py").symlink_to("loop.py")
    (bad / "loop_a.py").symlink_to("loop_b.py")
    (bad / "loop_b.py").symlink_to("loop_a.py")
    (bad / "dangling.py").symlink_to("nowhere.py")
    (bad / "subdir_loop").mkdir()
    (bad / "subdir_loop" / "up").symlink_to("..")
    os.mkfifo(bad / "fifo.py")
    (bad / "devzero.py").symlink_to("/dev/zero")


def test_bad_inputs_through_the_cli(cli, tmp_path):
    _tree(tmp_path)
    proc = cli("--format", "json", "--no-cache", ".")
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Warning" not in proc.stderr, proc.stderr
    assert proc.returncode == 1, proc.stderr
    findings = json.loads(proc.stdout)
    by_path: dict[str, list[dict]] = {}
    for f in findings:
        by_path.setdefault(f["path"], []).append(f)
    # the good files are still linted
    assert [f["code"] for f in by_path["good.py"]] == ["CL203"]
    assert [f["code"] for f in by_path["bad/dir.py/inner.py"]] == ["CL203"]
    for name, (_, expected) in BAD.items():
        got = by_path.get(f"bad/{name}", [])
        if expected is None:
            assert [f for f in got if f["code"] == "CL001"] == [], name
        else:
            assert len(got) == 1 and got[0]["code"] == "CL001", (name, got)
            assert expected in got[0]["message"], (name, got[0]["message"])
    big = by_path["bad/big.py"]
    assert len(big) == 1 and "too large" in big[0]["message"]
    assert "bad/dangling.py: skipped: a broken symbolic link" in proc.stderr
    for name in ("loop.py", "loop_a.py", "loop_b.py"):
        got = by_path.get(f"bad/{name}", [])
        assert len(got) == 1 and got[0]["code"] == "CL001" and "cannot read" in got[0]["message"], (name, got)
    assert "bad/fifo.py: skipped: is not a regular file" in proc.stderr
    assert "bad/devzero.py: skipped: is not a regular file" in proc.stderr
    # SARIF reads the reported files again (columns, line hashes): as quick and quiet
    sarif = cli("--format", "sarif", "--no-cache", ".")
    assert sarif.returncode == 1 and "Traceback" not in sarif.stderr, sarif.stderr
    assert len(json.loads(sarif.stdout)["runs"][0]["results"]) == len(findings)


def test_positions_of_decode_errors(cli, tmp_path):
    (tmp_path / "a.py").write_bytes(b"import celery\n\nx = 'ok'  # caf\xe9\n")
    proc = cli("--format", "json", "--no-cache", "a.py")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    [finding] = json.loads(proc.stdout)
    assert (finding["code"], finding["line"], finding["column"]) == ("CL001", 3, 16)


def test_directory_named_on_the_command_line_as_file(cli, tmp_path):
    (tmp_path / "x.py").mkdir()
    (tmp_path / "x.py" / "m.py").write_text(GOOD)
    proc = cli("--no-cache", "x.py")
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 1
    assert "CL203" in proc.stdout
    missing = cli("--no-cache", "x.py", "missing.py")  # a path that does not exist is a usage error
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "missing.py: no such file or directory" in missing.stderr


def _settings(root: Path) -> Settings:
    return Settings(root=root, config_dir=root)


def test_file_disappearing_between_discovery_and_reading(tmp_path, monkeypatch):
    import celerylint.run.runner as runner

    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "gone.py").write_text(GOOD)
    real = runner.discover

    def discover_then_delete(paths, settings, cache_dir=None, nested=None):
        found = real(paths, settings, cache_dir, nested)
        (tmp_path / "gone.py").unlink()
        return found

    monkeypatch.setattr(runner, "discover", discover_then_delete)
    result = run([tmp_path], _settings(tmp_path))
    assert [(f.path, f.code) for f in result.findings] == [("good.py", "CL203")]
    assert result.notices == ["gone.py: skipped: the file disappeared"]
    assert result.errors == []


def test_unreadable_file(tmp_path, monkeypatch):
    """Tests run as root, where chmod 000 does not stop a read: simulate EACCES."""
    import celerylint.run.linter as linter

    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "secret.py").write_text(GOOD)
    real = linter.read_source

    def read(path):
        if Path(path).name == "secret.py":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(linter, "read_source", read)
    result = run([tmp_path], _settings(tmp_path))
    got = sorted((f.path, f.code, f.message) for f in result.findings)
    assert got[0][:2] == ("good.py", "CL203")
    assert got[1] == ("secret.py", "CL001", "cannot read the file: Permission denied")
    assert result.errors == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file_for_real(cli, tmp_path):  # pragma: no cover - not root
    (tmp_path / "good.py").write_text(GOOD)
    secret = tmp_path / "secret.py"
    secret.write_text(GOOD)
    secret.chmod(0)
    proc = cli("--format", "json", "--no-cache", ".")
    assert "Traceback" not in proc.stderr and proc.returncode == 1
    assert "Permission denied" in proc.stdout


def test_recursion_limit_anywhere_in_the_engine_is_a_finding():
    """Whatever part of the engine runs out of Python stack (parse, traversal,
    positions, building a fix), the file gets CL001 and nothing escapes."""
    import sys

    from celerylint.engine.analysis import lint_source
    from celerylint.run.linter import enabled_entries

    settings = Settings(root=Path("/nonexistent"))
    entries = enabled_entries(settings)
    data = b"import redis\nr = redis.Redis()\nr.set('lock:x', " + b"[" * 40 + b"1" + b"]" * 40 + b", nx=True)\n"
    lint_source("warm.py", data, settings, entries)  # import everything first
    depth = len(__import__("inspect").stack(0))
    seen = set()
    old = sys.getrecursionlimit()
    try:
        for headroom in range(20, 400, 7):
            sys.setrecursionlimit(depth + headroom)
            result = lint_source("x.py", data, settings, entries)
            sys.setrecursionlimit(old)
            assert result.errors == []
            seen.add(tuple(f.code for f in result.findings))
    finally:
        sys.setrecursionlimit(old)
    assert ("CL001",) in seen and ("CL203",) in seen


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_file_names_that_are_not_utf8(cli, tmp_path, fmt):
    import subprocess
    import sys

    Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9.py")).write_text(GOOD)
    (tmp_path / "caf\xe9.py").write_text(GOOD)  # the same name in UTF-8: a different file
    (tmp_path / "new\nline.py").write_text(GOOD)
    proc = subprocess.run([sys.executable, "-m", "celerylint", "--format", fmt, "--no-cache", "."],
                          cwd=tmp_path, capture_output=True, timeout=120)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr, proc.stderr
    out = proc.stdout.decode("utf-8")  # valid UTF-8 whatever the names
    if fmt == "json":
        assert sorted(f["path"] for f in json.loads(out)) == sorted(["caf\ufffd.py", "café.py", "new\nline.py"])
    if fmt == "sarif":
        uris = sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                      for r in json.loads(out)["runs"][0]["results"])
        assert uris == sorted(["caf%C3%A9.py", "caf%E9.py", "new%0Aline.py"])
