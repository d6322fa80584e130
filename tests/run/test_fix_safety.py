"""``--fix`` under faults: atomic writes that keep mode, line endings, BOM
and encoding; read-only files and directories; files edited while celerylint
runs; fixes that would break the file; SIGKILL at random moments; a second
run with nothing left to do.  CL203's unsafe fix (``ex=60``) makes files fixable."""

from __future__ import annotations

import codecs
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from celerylint.config.settings import Settings
from celerylint.core.model import Edit, Finding, Fix
from celerylint.run.runner import run

BEFORE = 'import redis\nr = redis.Redis()\ndef f(key):\n    if r.set("lock:" + key, 1, nx=True):\n        r.delete("lock:" + key)\n'
AFTER = BEFORE.replace("nx=True)", "nx=True, ex=60)")
FIX = ("--fix", "--unsafe-fixes", "--no-cache", "--select", "CL203")  # the fixable rule these files exercise


def _settings(root: Path) -> Settings:
    return Settings(root=root, config_dir=root, select=("CL001", "CL203"))  # the fixable rule these files exercise


@pytest.mark.parametrize(
    ("name", "before", "after"),
    [
        ("lf.py", BEFORE.encode(), AFTER.encode()),
        ("crlf.py", BEFORE.replace("\n", "\r\n").encode(), AFTER.replace("\n", "\r\n").encode()),
        ("cr.py", BEFORE.replace("\n", "\r").encode(), AFTER.replace("\n", "\r").encode()),
        ("mixed.py", BEFORE.replace("\n", "\r\n", 2).encode(), AFTER.replace("\n", "\r\n", 2).encode()),
        ("bom.py", codecs.BOM_UTF8 + BEFORE.encode(), codecs.BOM_UTF8 + AFTER.encode()),
        ("latin1.py", ("# coding: latin-1\n# café\n" + BEFORE).encode("latin-1"),
         ("# coding: latin-1\n# café\n" + AFTER).encode("latin-1")),
        ("utf8.py", ("# ☃ 𝄞\n" + BEFORE).encode(), ("# ☃ 𝄞\n" + AFTER).encode()),
        ("no_final_newline.py", BEFORE.rstrip("\n").encode(), AFTER.rstrip("\n").encode()),
    ],
)
def test_fix_keeps_bytes_mode_and_encoding(cli, tmp_path, name, before, after):
    path = tmp_path / name
    path.write_bytes(before)
    path.chmod(0o751)
    proc = cli(*FIX, name)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert path.read_bytes() == after
    assert path.stat().st_mode & 0o7777 == 0o751
    assert [p.name for p in tmp_path.iterdir()] == [name]  # no temporary file left


def test_a_symlink_is_reported_not_fixed(cli, tmp_path):
    """A fix never writes through a symbolic link (issue 12, F8)."""
    (tmp_path / "real.py").write_text(BEFORE)
    (tmp_path / "link.py").symlink_to("real.py")
    proc = cli(*FIX, "link.py")
    assert proc.returncode == 1
    assert "link.py: not fixed: it is a symbolic link" in proc.stderr
    assert (tmp_path / "link.py").is_symlink()
    assert (tmp_path / "real.py").read_text() == BEFORE


def test_read_only_file_is_reported_and_the_rest_fixed(cli, tmp_path):
    for name in ("a.py", "ro.py", "z.py"):
        (tmp_path / name).write_text(BEFORE)
    (tmp_path / "ro.py").chmod(0o444)
    proc = cli(*FIX, ".")
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 1  # the finding in ro.py remains
    assert "ro.py: not fixed: the file is read-only; not changed" in proc.stderr
    assert (tmp_path / "ro.py").read_text() == BEFORE
    assert (tmp_path / "a.py").read_text() == AFTER and (tmp_path / "z.py").read_text() == AFTER
    assert "ro.py:4:" in proc.stdout


def test_read_only_directory_is_reported_and_the_rest_fixed(tmp_path, monkeypatch):
    """Root may write anywhere: simulate a directory where no file can be created."""
    import tempfile

    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "a.py").write_text(BEFORE)
    (tmp_path / "b.py").write_text(BEFORE)
    real = tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if Path(dir).name == "locked":
            raise PermissionError(13, "Permission denied")
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    result = run([tmp_path], _settings(tmp_path), fix=True, unsafe=True)
    assert result.notices == ["locked/a.py: not fixed: cannot write next to it: Permission denied"]
    assert (tmp_path / "locked" / "a.py").read_text() == BEFORE
    assert (tmp_path / "b.py").read_text() == AFTER
    assert [(f.path, f.code) for f in result.findings] == [("locked/a.py", "CL203")]
    assert result.fixed == {"b.py": 1}


def test_file_changed_after_reading_is_not_overwritten(tmp_path, monkeypatch):
    import celerylint.run.fixing as fixing

    (tmp_path / "a.py").write_text(BEFORE)
    (tmp_path / "b.py").write_text(BEFORE)
    edited = "# edited by someone else\n" + BEFORE
    real = fixing.parses

    def parses_then_edit(text):  # runs after the fix phase read the file, before the write
        if not (tmp_path / "a.py").read_text().startswith("#"):
            (tmp_path / "a.py").write_text(edited)
        return real(text)

    monkeypatch.setattr(fixing, "parses", parses_then_edit)
    result = run([tmp_path], _settings(tmp_path), fix=True, unsafe=True)
    assert "a.py: not fixed: it changed on disk while celerylint ran; not overwritten" in result.notices
    assert (tmp_path / "a.py").read_text() == edited
    assert (tmp_path / "b.py").read_text() == AFTER


def test_file_changed_between_lint_and_fix_is_fixed_as_it_is_now(tmp_path, monkeypatch):
    """The fix applies to the bytes it writes over, not to positions from an older version."""
    import celerylint.run.runner as runner

    (tmp_path / "a.py").write_text(BEFORE)
    shifted = "import os\n\n\n" + BEFORE.replace("def f(key):", "def f(key):  # moved")
    real = runner._read_other

    def read_other_then_edit(paths, linter):  # after the lint pass, before the fix pass
        (tmp_path / "a.py").write_text(shifted)
        return real(paths, linter)

    monkeypatch.setattr(runner, "_read_other", read_other_then_edit)
    result = run([tmp_path], _settings(tmp_path), fix=True, unsafe=True)
    assert (tmp_path / "a.py").read_text() == shifted.replace("nx=True)", "nx=True, ex=60)")
    assert result.findings == [] and result.fixed == {"a.py": 1}


def test_fix_that_would_not_parse_is_dropped_and_reported(tmp_path, monkeypatch):
    import celerylint.run.jobs as jobs

    (tmp_path / "a.py").write_text(BEFORE)
    real = jobs.analyze

    def with_a_broken_fix(path, data, *args, **kwargs):
        result = real(path, data, *args, **kwargs)
        broken = Fix("break it", (Edit(1, 0, 1, 0, "def ("),), safe=False)
        result.findings.append(Finding("CL203", "lock-without-ttl", "x", path, 1, 0, 1, 6, fix=broken))
        return result

    monkeypatch.setattr(jobs, "analyze", with_a_broken_fix)
    result = run([tmp_path], _settings(tmp_path), fix=True, unsafe=True)
    assert result.notices == ["a.py: a fix was dropped because CPython or libcst could not compile its result"]
    assert (tmp_path / "a.py").read_text() == AFTER  # the good fix still applied
    assert result.errors == []


def test_only_broken_fixes_leave_the_file_alone(tmp_path, monkeypatch):
    import celerylint.run.jobs as jobs

    source = "import redis\nredis.Redis().lock('x', timeout=5)\n"  # analysed (CL203's gate: a lock call), no finding
    (tmp_path / "a.py").write_text(source)
    real = jobs.analyze

    def broken_only(path, data, *args, **kwargs):
        result = real(path, data, *args, **kwargs)
        broken = Fix("break it", (Edit(1, 0, 1, 6, "(((("),), safe=True)
        result.findings.append(Finding("CL203", "lock-without-ttl", "x", path, 1, 0, 1, 6, fix=broken))
        return result

    monkeypatch.setattr(jobs, "analyze", broken_only)
    result = run([tmp_path], _settings(tmp_path), fix=True)
    assert result.notices == ["a.py: a fix was dropped because CPython or libcst could not compile its result"]
    assert (tmp_path / "a.py").read_text() == source
    assert result.fixed == {}


def test_fix_twice_second_run_has_nothing_to_do(cli, tmp_path):
    for i in range(3):
        (tmp_path / f"m{i}.py").write_text(BEFORE.replace("f(", f"f{i}(") * 2)
    first = cli(*FIX, ".")
    assert first.returncode == 0 and "Fixed 6 findings in 3 files" in first.stdout, first.stdout
    snapshot = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    second = cli(*FIX, ".")
    assert second.returncode == 0 and "Fixed" not in second.stdout, second.stdout
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == snapshot
    diff = cli("--diff", "--unsafe-fixes", "--no-cache", ".")
    assert (diff.returncode, diff.stdout) == (0, "")


def test_diff_writes_nothing(cli, tmp_path):
    (tmp_path / "a.py").write_text(BEFORE)
    proc = cli("--diff", "--unsafe-fixes", "--no-cache", ".")
    assert proc.returncode == 1 and "+    if r.set(\"lock:\" + key, 1, nx=True, ex=60):" in proc.stdout
    assert (tmp_path / "a.py").read_text() == BEFORE


@pytest.mark.slow
def test_sigkill_during_fix_leaves_every_file_old_or_new(tmp_path):
    """Kill ``--fix`` runs over many files at random moments of their write
    phase (and once at a random moment before it): every file is afterwards
    byte for byte its old or its new content.  Bounded: a few kills by
    default, more with CELERYLINT_KILL_ROUNDS."""
    rounds = int(os.environ.get("CELERYLINT_KILL_ROUNDS", "2"))
    rng = random.Random(os.environ.get("CELERYLINT_KILL_SEED", "6"))
    count = 30
    old = {f"m{i:03}.py": (BEFORE + f"\n\ndef g{i}():\n    return {i}\n" * (1 + i % 7)).encode() for i in range(count)}
    new = {name: data.replace(b"nx=True)", b"nx=True, ex=60)") for name, data in old.items()}
    command = [sys.executable, "-m", "celerylint", *FIX, "."]
    states_seen = set()
    for round_ in range(rounds + 1):
        for name, data in old.items():
            (tmp_path / name).write_bytes(data)
        mtimes = {name: (tmp_path / name).stat().st_mtime_ns for name in old}
        proc = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        if round_ == 0:  # a random moment of the lint phase
            time.sleep(rng.uniform(0.2, 1.5))
        else:  # wait for the first write, then kill a moment later
            while proc.poll() is None and time.monotonic() < deadline:
                if any(os.stat(tmp_path / name).st_mtime_ns != m for name, m in mtimes.items()):
                    break
                time.sleep(0.002)
            time.sleep(rng.uniform(0, 0.05))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        fixed = 0
        for name in old:
            data = (tmp_path / name).read_bytes()
            assert data in (old[name], new[name]), f"{name} is neither old nor new after SIGKILL"
            fixed += data == new[name]
        states_seen.add(fixed)
        for leftover in tmp_path.glob(".*.celerylint.tmp"):  # a killed writer may leave its temporary file
            leftover.unlink()
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(old)
    # the kills did land in the middle of writing at least once (timing permitting)
    print("files fixed when killed:", sorted(states_seen))


def test_fix_files_whose_names_are_not_utf8(cli, tmp_path):
    latin = Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9.py"))
    latin.write_text(BEFORE)
    (tmp_path / "café.py").write_text(BEFORE.replace("key", "name"))
    proc = cli(*FIX, ".")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert latin.read_text() == AFTER
    assert (tmp_path / "café.py").read_text() == AFTER.replace("key", "name")
