"""Adopting celerylint on existing code, and the small command-line comforts
(issue 16, items 4 and 6): the real CLI in a subprocess, its real output."""

from __future__ import annotations

import json
import subprocess

from conftest import write_file as write
from celerylint.run.fixing import parses

LOCKS = (
    "import redis\n"
    "r = redis.Redis()\n"
    "\n"
    "def export():\n"
    "    with r.lock('export'):  # the nightly job\n"
    "        pass\n"
    "    if r.set('lock:k', 1, nx=True):  # noqa: E501\n"
    "        pass\n"
    "    r.lock('''a\n"
    "b''').acquire()\n"
)


def codes(proc):
    return [f["code"] for f in json.loads(proc.stdout)]


def test_add_noqa_silences_every_finding_and_keeps_comments(cli, tmp_path):
    path = write(tmp_path, "jobs.py", LOCKS)
    before = codes(cli("--no-cache", "--format", "json", "."))
    assert before == ["CL203", "CL203", "CL203"]
    done = cli("--no-cache", "--add-noqa", ".")
    assert done.returncode == 0, done.stderr
    assert "Added 3 noqa directives." in done.stderr
    text = path.read_text()
    assert "    with r.lock('export'):  # the nightly job  # noqa: CL203\n" in text
    assert "    if r.set('lock:k', 1, nx=True):  # noqa: E501, CL203\n" in text
    # the call starts on a line that ends inside a string: the comment goes on its last line
    assert "    r.lock('''a\nb''').acquire()  # noqa: CL203\n" in text
    assert parses(text)
    after = cli("--no-cache", "--format", "json", ".")
    assert after.returncode == 0 and codes(after) == []
    again = cli("--no-cache", "--add-noqa", ".")
    assert "Added 0 noqa directives." in again.stderr and path.read_text() == text


def test_unused_noqa_after_the_code_was_fixed(cli, tmp_path):
    path = write(tmp_path, "jobs.py", "import redis\nr = redis.Redis()\nwith r.lock('x'):  # noqa: CL203, E501\n    pass\n")
    assert codes(cli("--no-cache", "--format", "json", "--extend-select", "CL002", ".")) == []  # the noqa is used
    path.write_text(path.read_text().replace("r.lock('x')", "r.lock('x', timeout=5)"))
    found = json.loads(cli("--no-cache", "--format", "json", "--extend-select", "CL002", ".").stdout)
    assert [(f["code"], f["line"]) for f in found] == [("CL002", 3)]
    assert codes(cli("--no-cache", "--format", "json", ".")) == []  # off by default
    fixed = cli("--no-cache", "--extend-select", "CL002", "--fix", ".")
    assert fixed.returncode == 0, fixed.stdout
    assert path.read_text() == "import redis\nr = redis.Redis()\nwith r.lock('x', timeout=5):  # noqa: E501\n    pass\n"


def test_extend_chain_and_extend_keys(cli, tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    write(tmp_path, "shared/base.toml", 'ignore = ["CL206"]\nexclude = ["legacy/**"]\nlock-ttl = 30\n')
    write(tmp_path, "app/pyproject.toml",
          '[tool.celerylint]\nextend = "../shared/base.toml"\nextend-ignore = ["CL204"]\n'
          'extend-exclude = ["gen/**"]\nextend-per-file-ignores = { "tests/**" = ["CL203"] }\n')
    body = ("import redis\nfrom datetime import timedelta\nfrom celery import shared_task\nr = redis.Redis()\n"
            "@shared_task\ndef t():\n    pass\n"
            "def f():\n    if r.set('lock', 1, nx=True):\n        pass\n    t.apply_async(countdown=timedelta(days=3).total_seconds())\n")
    for name in ("app/jobs.py", "app/legacy/old.py", "app/gen/g.py", "app/tests/test_jobs.py"):
        write(tmp_path, name, body)
    app = tmp_path / "app"
    found = json.loads(cli("--no-cache", "--format", "json", ".", cwd=app).stdout)
    assert sorted((f["path"], f["code"]) for f in found) == [("app/jobs.py", "CL203")]
    shown = cli("--show-settings", cwd=app).stdout
    assert 'extends = ["' + str(tmp_path / "shared" / "base.toml") + '"]' in shown
    assert 'ignore = ["CL206", "CL204"]' in shown and "lock-ttl = 30" in shown
    assert 'exclude = ["legacy/**", "gen/**"]' in shown
    files = cli("--show-files", ".", cwd=app).stdout.split()
    assert files == ["jobs.py", "tests/test_jobs.py"]
    # a child's plain key replaces the base's value
    write(tmp_path, "app/pyproject.toml", '[tool.celerylint]\nextend = "../shared/base.toml"\nignore = []\n')
    found = json.loads(cli("--no-cache", "--format", "json", "jobs.py", cwd=app).stdout)
    assert sorted(f["code"] for f in found) == ["CL203", "CL206"]


def test_extend_cycle_and_missing_base_are_errors(cli, tmp_path):
    write(tmp_path, "a.py", "import redis\n")
    write(tmp_path, "celerylint.toml", 'extend = "more/b.toml"\n')
    write(tmp_path, "more/b.toml", 'extend = "../celerylint.toml"\n')
    done = cli(".")
    assert done.returncode == 2 and "extend: a cycle:" in done.stderr and "Traceback" not in done.stderr
    write(tmp_path, "celerylint.toml", 'extend = "nowhere.toml"\n')
    done = cli(".")
    assert done.returncode == 2 and "extend:" in done.stderr and "no such file" in done.stderr


def test_configuration_errors_name_the_line_and_suggest(cli, tmp_path):
    write(tmp_path, "a.py", "import redis\n")
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n\n[tool.celerylint]\nselect = ["CL2"]\nlock_ttl = 5\n')
    done = cli(".")
    assert done.returncode == 2
    assert done.stderr.strip().endswith("pyproject.toml:6: unknown key 'lock_ttl' (did you mean 'lock-ttl'?)")
    (tmp_path / "pyproject.toml").unlink()
    done = cli("--select", "CL2O3", ".")
    assert "did you mean 'CL203' (lock-without-ttl)?" in done.stderr and done.returncode == 2
    done = cli("--explain", "lock-without-tll")
    assert done.returncode == 2 and "did you mean 'CL203' (lock-without-ttl)?" in done.stderr


def test_exit_non_zero_on_fix(cli, tmp_path):
    source = "from celery import shared_task\n@shared_task\ndef t(x):\n    pass\nt.delay(1, countdown=5)\n"
    write(tmp_path, "a.py", source)
    assert cli("--no-cache", "--fix", ".").returncode == 0
    write(tmp_path, "a.py", source)
    done = cli("--no-cache", "--fix", "--exit-non-zero-on-fix", ".")
    assert done.returncode == 1 and "Fixed 1 finding" in done.stdout
    assert cli("--no-cache", "--fix", "--exit-non-zero-on-fix", ".").returncode == 0  # nothing left to fix


def test_statistics(cli, tmp_path):
    write(tmp_path, "jobs.py", LOCKS)
    write(tmp_path, "more.py", "from celery import shared_task\n@shared_task\ndef t(x):\n    pass\nt.delay(1, countdown=5)\n")
    text = cli("--no-cache", "--statistics", ".")
    assert text.returncode == 1
    assert text.stdout.splitlines() == ["3\tCL203\t[ ] lock-without-ttl", "1\tCL209\t[*] execution-option-as-task-argument"]
    table = json.loads(cli("--no-cache", "--statistics", "--format", "json", ".").stdout)
    assert table[0] == {"code": "CL203", "name": "lock-without-ttl", "count": 3, "fixable": False}


def test_check_alias_and_a_directory_named_check(cli, tmp_path):
    write(tmp_path, "check/jobs.py", LOCKS)
    alias = cli("check", "--no-cache", "--format", "json", ".")
    assert alias.returncode == 1 and codes(alias) == ["CL203"] * 3
    plain = cli("--no-cache", "--format", "json", "./check")
    assert codes(plain) == ["CL203"] * 3
    assert "Usage: celerylint check" in cli("check", "--help").stdout


def test_stdin(cli, tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.celerylint]\nper-file-ignores = { "tests/**" = ["CL203"] }\n')
    done = cli("--no-cache", "--format", "json", "--stdin-filename", "proj/jobs.py", "-", input=LOCKS)
    assert done.returncode == 1
    assert {(f["path"], f["code"]) for f in json.loads(done.stdout)} == {("proj/jobs.py", "CL203")}
    assert not (tmp_path / "proj").exists()
    ignored = cli("--no-cache", "--format", "json", "--stdin-filename", "tests/test_jobs.py", "-", input=LOCKS)
    assert ignored.returncode == 0 and json.loads(ignored.stdout) == []
    source = "from celery import shared_task\n@shared_task\ndef t(x):\n    pass\nt.delay(1, countdown=5)\n"
    fixed = cli("--no-cache", "--fix", "--stdin-filename", "a.py", "-", input=source)
    assert fixed.stdout == source.replace("t.delay(1, countdown=5)", "t.apply_async((1,), countdown=5)")
    assert "Fixed 1 finding" in fixed.stderr and fixed.returncode == 0
    unnamed = cli("--no-cache", "-", input=LOCKS)
    assert unnamed.stdout.startswith("-:5:") and unnamed.returncode == 1


def test_quiet_and_silent(cli, tmp_path):
    write(tmp_path, "jobs.py", LOCKS)
    loud = cli("--no-cache", ".").stdout.splitlines()
    quiet = cli("--no-cache", "-q", ".")
    assert quiet.returncode == 1 and quiet.stdout.splitlines() == loud[:-1] and "finding" in loud[-1]
    silent = cli("--no-cache", "--silent", ".")
    assert silent.returncode == 1 and silent.stdout == "" and silent.stderr == ""
    write(tmp_path, "jobs.py", "import redis\n")
    assert cli("--no-cache", "-q", ".").stdout == ""


def test_cache_dir_option_and_key(cli, tmp_path):
    write(tmp_path, "jobs.py", LOCKS)
    done = cli("--cache-dir", str(tmp_path / "elsewhere"), ".")
    assert done.returncode == 1
    assert (tmp_path / "elsewhere").is_dir() and not (tmp_path / ".celerylint_cache").exists()
    write(tmp_path, "conf/celerylint.toml", 'cache-dir = "../from-config"\n')
    cli("--config", "conf/celerylint.toml", ".")
    assert (tmp_path / "from-config").is_dir()
    assert 'cache-dir = "' + str(tmp_path / "from-config") + '"' in cli("--config", "conf/celerylint.toml", "--show-settings").stdout
