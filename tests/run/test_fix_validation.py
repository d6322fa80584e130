"""A fix is applied only when CPython compiles its result (not only libcst,
not only CPython's parser): in ``--fix``, ``--diff``, standard input and the
rule-case harness; and the renames of CL107/CL109 keep a key's kind and
never land on a name already set (issue 34 items 1, 2 and the fix
validation)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from celerylint.api.cases import Invalid
from celerylint.cli.commands import main
from celerylint.core.model import Edit, Finding, Fix
from celerylint.rules.cl109_deprecated_setting_name import DeprecatedSettingName
from celerylint.testing import check_case

LOCK = 'import redis\nr = redis.Redis()\ndef f(key):\n    r.set("lock:" + key, 1, nx=True)\n'
# parses (libcst, and CPython's parser) but CPython's compiler refuses it
REPEATED = "print(a=1, a=2)\n"


def _celerylint(root: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "celerylint", "--no-cache", *args], cwd=root, input=input,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})


def _compiles(text: str) -> bool:
    try:
        compile(text, "<fixed>", "exec", dont_inherit=True)
    except SyntaxError:
        return False
    return True


# -- items 1 and 2: the renames, through the real command ---------------------


def test_config_from_object_dict_keys_stay_strings(tmp_path):
    source = ("from celery import Celery\napp = Celery('proj')\n"
              "app.config_from_object({'BROKER_URL': 'amqp://h', 'CELERY_RESULT_BACKEND': 'amqp://'})\n")
    (tmp_path / "proj.py").write_text(source)
    proc = _celerylint(tmp_path, "--fix", "--select", "CL109", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fixed = (tmp_path / "proj.py").read_text()
    assert fixed == source.replace("'BROKER_URL'", "'broker_url'").replace("'CELERY_RESULT_BACKEND'", "'result_backend'")


@pytest.mark.parametrize(("source", "line"), [
    ("app.conf.update(CELERYD_PREFETCH_MULTIPLIER=1, worker_prefetch_multiplier=4)\n", 3),
    ("app.conf.update({'CELERYD_PREFETCH_MULTIPLIER': 1, 'worker_prefetch_multiplier': 4})\n", 3),
    ("app.config_from_object({'CELERYD_PREFETCH_MULTIPLIER': 1, 'worker_prefetch_multiplier': 4})\n", 3),
])
def test_no_rename_onto_a_name_set_in_the_same_call_or_dict(tmp_path, source, line):
    text = "from celery import Celery\napp = Celery('proj')\n" + source
    (tmp_path / "proj.py").write_text(text)
    proc = _celerylint(tmp_path, "--fix", "--unsafe-fixes", "--select", "CL107,CL109", "--output-format", "concise", ".")
    assert (tmp_path / "proj.py").read_text() == text
    assert f"`worker_prefetch_multiplier` is already set at line {line}, so no rename is offered" in proc.stdout
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr


def test_no_rename_onto_a_module_name_already_set(tmp_path):
    text = "CELERY_ACKS_LATE = x\ntask_acks_late = y\ntask_ack_late = z\n"
    (tmp_path / "celeryconfig.py").write_text(text)
    proc = _celerylint(tmp_path, "--fix", "--unsafe-fixes", "--select", "CL107,CL109", "--output-format", "concise", ".")
    assert (tmp_path / "celeryconfig.py").read_text() == text
    assert proc.stdout.count("`task_acks_late` is already set at line 2") == 2, proc.stdout


# -- the fix validation ---------------------------------------------------------


@pytest.fixture
def compile_only_error(monkeypatch):
    """Every linted file gets a fix adding a line CPython's parser accepts
    and its compiler refuses, besides its real fixes."""
    import celerylint.run.jobs as jobs

    real = jobs.analyze

    def with_a_broken_fix(path, data, *args, **kwargs):
        result = real(path, data, *args, **kwargs)
        broken = Fix("repeat a keyword", (Edit(1, 0, 1, 0, REPEATED),), safe=True)
        result.findings.append(Finding("CL203", "lock-without-ttl", "x", path, 1, 0, 1, 6, fix=broken))
        return result

    monkeypatch.setattr(jobs, "analyze", with_a_broken_fix)


def _invoke(root: Path, monkeypatch, *args: str, input: str | None = None):
    monkeypatch.chdir(root)
    return CliRunner().invoke(main, ["--no-cache", "--select", "CL203", *args], input=input, catch_exceptions=False,
                              env={"NO_COLOR": "1"})


NOTICE = "a fix was dropped because CPython or libcst could not compile its result"


def test_fix_does_not_write_what_cpython_cannot_compile(tmp_path, monkeypatch, compile_only_error):
    (tmp_path / "a.py").write_text(LOCK)
    result = _invoke(tmp_path, monkeypatch, "--fix", "--unsafe-fixes", ".")
    fixed = (tmp_path / "a.py").read_text()
    assert fixed == LOCK.replace("nx=True)", "nx=True, ex=60)")  # the good fix alone
    assert f"a.py: {NOTICE}" in result.stderr


def test_diff_holds_only_what_cpython_compiles(tmp_path, monkeypatch, compile_only_error):
    (tmp_path / "a.py").write_text(LOCK)
    result = _invoke(tmp_path, monkeypatch, "--diff", "--unsafe-fixes", ".")
    assert "ex=60" in result.stdout and REPEATED.strip() not in result.stdout
    assert f"a.py: {NOTICE}" in result.stderr
    assert (tmp_path / "a.py").read_text() == LOCK


def test_stdin_fix_outputs_only_what_cpython_compiles(tmp_path, monkeypatch, compile_only_error):
    result = _invoke(tmp_path, monkeypatch, "--fix", "--unsafe-fixes", "-", "--stdin-filename", "a.py", input=LOCK)
    assert result.stdout == LOCK.replace("nx=True)", "nx=True, ex=60)")
    assert _compiles(result.stdout)
    assert f"a.py: {NOTICE}" in result.stderr


def test_the_case_harness_refuses_an_expected_fix_cpython_cannot_compile(tmp_path):
    code = """
        # file: proj.py
        from celery import Celery
        app = Celery("proj")
        app.conf.update(CELERYD_PREFETCH_MULTIPLIER=1, worker_prefetch_multiplier=4)
        """
    repeated = code.replace("CELERYD_PREFETCH_MULTIPLIER", "worker_prefetch_multiplier")
    assert not _compiles(textwrap.dedent(repeated))
    with pytest.raises(AssertionError):
        check_case(DeprecatedSettingName, Invalid(code, fixed=repeated), tmp_path, valid=False)


@pytest.mark.parametrize(("written", "string", "expected"), [
    ("BROKER_URL", False, "broker_url"),
    ("'BROKER_URL'", True, "'broker_url'"),
    ('"BROKER_URL"', True, '"broker_url"'),
    ("'''BROKER_URL'''", True, "'''broker_url'''"),
    ('r"BROKER_URL"', True, 'r"broker_url"'),
    ("BROKER_URL", True, None),  # a constant used as a key stays what it is: no fix
    ("'BROKER_URL'", False, None),
    ("b'BROKER_URL'", True, None),
    ("f'BROKER_URL'", True, None),
    ("'BROKER_' 'URL'", True, None),
    ("'BROKER\\x5fURL'", True, None),
    ("BROKER_URL  # x", False, None),
])
def test_a_rename_is_written_in_the_kind_of_the_old_name(written, string, expected):
    from celerylint.domain.celeryconf.renames import respelled

    assert respelled(written, "BROKER_URL", "broker_url", string) == expected
