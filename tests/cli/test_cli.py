"""The command line as a user runs it: exit codes, formats, selection,
suppression, configuration errors, fixes."""

from __future__ import annotations

import json
import re
import textwrap

from conftest import write_file as write
from conftest import REPO

LOCK = textwrap.dedent("""\
    import redis

    r = redis.Redis()


    def run(job):
        lock_key = f"lock:{job}"
        if r.set(lock_key, "1", nx=True):
            r.delete(lock_key)
""")
ETA = "from proj.tasks import report\nreport.apply_async(countdown=7200)\n"


def test_clean_run_exits_zero(cli, tmp_path):
    write(tmp_path, "ok.py", "import redis\nr = redis.Redis()\nr.set('k', 1, nx=True, ex=5)\n")
    done = cli(".")
    assert done.returncode == 0, done.stderr
    assert "No findings in 1 file checked." in done.stdout


def test_findings_exit_one_and_concise_format(cli, tmp_path):
    write(tmp_path, "jobs.py", LOCK)
    done = cli("--output-format", "concise", "--select", "CL203", ".")
    assert done.returncode == 1
    first = done.stdout.splitlines()[0]
    assert first.startswith("jobs.py:8:8: CL203 [lock-without-ttl] ")
    assert "fix (unsafe, --fix --unsafe-fixes): add `ex=60`" in done.stdout
    assert done.stdout.rstrip().endswith("1 finding in 1 file, 0 fixable with --fix (1 more with --unsafe-fixes).")
    assert "\x1b[" not in done.stdout  # no colour when not a TTY


def test_exit_zero(cli, tmp_path):
    write(tmp_path, "jobs.py", LOCK)
    assert cli("--exit-zero", ".").returncode == 0


def test_json_format_is_stable(cli, tmp_path):
    write(tmp_path, "pkg/jobs.py", LOCK)
    done = cli("--format", "json", "--select", "CL203", ".")
    assert done.returncode == 1
    [finding] = json.loads(done.stdout)
    assert set(finding) == {"code", "name", "message", "path", "line", "column", "end_line", "end_column",
                            "severity", "fix", "hint", "fingerprint"}
    assert (finding["code"], finding["path"], finding["line"], finding["column"]) == ("CL203", "pkg/jobs.py", 8, 8)
    assert finding["fix"]["safe"] is False
    [edit] = finding["fix"]["edits"]
    assert edit["content"] == 'r.set(lock_key, "1", nx=True, ex=60)'


def test_github_format(cli, tmp_path):
    write(tmp_path, "jobs.py", LOCK)
    done = cli("--format", "github", ".")
    assert done.stdout.startswith("::error file=jobs.py,line=8,endLine=8,col=8,endColumn=37,title=celerylint (CL203)::CL203")


def test_output_file(cli, tmp_path):
    write(tmp_path, "jobs.py", LOCK)
    done = cli("--format", "json", "--output", "report.json", ".")
    assert done.returncode == 1 and done.stdout == ""
    assert json.loads((tmp_path / "report.json").read_text())[0]["code"] == "CL203"


def test_select_and_ignore(cli, tmp_path):
    write(tmp_path, "jobs.py", LOCK + ETA)
    codes = lambda *a: sorted(f["code"] for f in json.loads(cli("--format", "json", *a, ".").stdout))  # noqa: E731
    assert codes() == ["CL203", "CL204", "CL206"]
    assert codes("--select", "CL206") == ["CL206"]
    assert codes("--ignore", "CL2") == []
    assert codes("--select", "CL2", "--ignore", "cl203,CL204") == ["CL206"]


BEAT = textwrap.dedent("""\
    from celery import Celery

    app = Celery("proj", broker="redis://localhost")
    app.conf.task_acks_late = True
    app.conf.task_reject_on_worker_lost = True
    app.conf.worker_prefetch_multiplier = 1
    app.conf.worker_cancel_long_running_tasks_on_connection_loss = True
    app.conf.task_always_eager = True
    app.conf.beat_schedule = {"poll": {"task": "proj.poll", "schedule": 30}}
""")


def test_rules_off_by_default(cli, tmp_path):
    """As in ruff: without select the rules that are on by default run; a
    selected code, prefix or ALL runs every rule it names; extend-select adds
    to the selection, ignore removes from it."""
    write(tmp_path, "proj.py", BEAT)

    def codes(*args, cwd=tmp_path):
        done = cli("--format", "json", "--exit-zero", "--no-cache", *args, ".", cwd=cwd)
        assert done.returncode == 0, done.stderr
        return sorted({f["code"] for f in json.loads(done.stdout)})

    assert codes() == ["CL113"]  # CL112 is off by default
    assert codes("--select", "CL112") == ["CL112"]
    assert codes("--select", "CL11") == ["CL112", "CL113"]
    assert codes("--select", "ALL") == ["CL112", "CL113"]
    assert codes("--extend-select", "CL112") == ["CL112", "CL113"]
    assert codes("--select", "CL113", "--extend-select", "cl112") == ["CL112", "CL113"]
    assert codes("--extend-select", "CL112", "--ignore", "CL11") == []
    assert codes("--select", "ALL", "--ignore", "CL112") == ["CL113"]

    conf = tmp_path / "conf"
    write(conf, "proj.py", BEAT)
    write(conf, "celerylint.toml", 'extend-select = ["CL112"]\n')
    assert codes(cwd=conf) == ["CL112", "CL113"]
    assert codes("--select", "CL113", cwd=conf) == ["CL113"]  # --select replaces select and extend-select
    write(conf, "celerylint.toml", 'select = ["CL1"]\nignore = ["CL113"]\n')
    assert codes(cwd=conf) == ["CL112"]
    write(conf, "celerylint.toml", 'extend-select = ["CL9"]\n')
    done = cli(".", cwd=conf)
    assert done.returncode == 2 and "extend-select: unknown rule code or prefix 'CL9'" in done.stderr
    done = cli("--extend-select", "XX", ".")
    assert done.returncode == 2 and "--extend-select: unknown rule code or prefix 'XX'" in done.stderr


def test_password_in_url_is_never_printed(cli, tmp_path):
    write(tmp_path, "celeryconfig.py", 'broker_url = "amqp://svc:Wm5tR8yNq@mq.example.com:5672//"\n')
    write(tmp_path, "proj.py", 'from celery import Celery\napp = Celery("p")\napp.config_from_object("celeryconfig")\n')
    for fmt in ("text", "json", "sarif", "github"):
        done = cli("--select", "CL115", "--format", fmt, "--no-cache", ".")
        assert done.returncode == 1, done.stderr
        assert "svc:****@mq.example.com:5672" in done.stdout
        assert "Wm5tR8yNq" not in done.stdout + done.stderr


def test_list_rules_and_pages_say_off_by_default(cli):

    listing = cli("--list-rules").stdout
    assert re.search(r"^CL112 +beat-entry-without-expires .*\[off by default\]$", listing, re.MULTILINE)
    assert not re.search(r"^CL113 .*off by default", listing, re.MULTILINE)
    assert "Off by default: enable it with `--extend-select CL112`" in cli("--explain", "CL112").stdout
    assert "Off by default" not in cli("--explain", "CL113").stdout
    rules = REPO / "rules"
    assert "- Off by default: enable it with `--extend-select CL112`" in (rules / "CL112.md").read_text()
    assert "- On by default" in (rules / "CL113.md").read_text()
    index = (rules / "README.md").read_text()
    assert re.search(r"^\| \[CL112\]\(CL112.md\) .*\| \*off\* \|", index, re.MULTILINE)
    assert re.search(r"^\| \[CL113\]\(CL113.md\) .*\| on \|", index, re.MULTILINE)


def test_unknown_code_is_usage_error(cli, tmp_path):
    done = cli("--select", "CL999", ".")
    assert done.returncode == 2
    assert "--select: unknown rule code or prefix 'CL999'" in done.stderr


def test_noqa_and_skip_file(cli, tmp_path):
    write(tmp_path, "a.py", LOCK.replace('nx=True):', 'nx=True):  # noqa: CL203'))
    write(tmp_path, "b.py", LOCK.replace('nx=True):', 'nx=True):  # noqa'))
    write(tmp_path, "c.py", LOCK.replace('nx=True):', 'nx=True):  # noqa: CL206'))
    write(tmp_path, "d.py", "# celerylint: skip-file\n" + LOCK)
    found = json.loads(cli("--format", "json", "--select", "CL203", ".").stdout)
    assert [f["path"] for f in found] == ["c.py"]


def test_config_file_options(cli, tmp_path):
    write(tmp_path, "pyproject.toml", textwrap.dedent("""\
        [tool.celerylint]
        select = ["CL203", "CL206"]
        lock-ttl = 30
        countdown-threshold = 10000
        exclude = ["generated/**"]
        per-file-ignores = {"tests/**" = ["CL2"]}
    """))
    write(tmp_path, "jobs.py", LOCK + ETA)
    write(tmp_path, "tests/test_jobs.py", LOCK)
    write(tmp_path, "generated/jobs.py", LOCK)
    found = json.loads(cli("--format", "json", ".").stdout)
    assert [(f["path"], f["code"]) for f in found] == [("jobs.py", "CL203")]  # 7200 s < 10000 s
    assert found[0]["fix"]["description"] == "add `ex=30`"
    # an excluded file named on the command line is still linted, unless --force-exclude
    assert json.loads(cli("--format", "json", "generated/jobs.py").stdout)[0]["path"] == "generated/jobs.py"
    assert cli("--force-exclude", "generated/jobs.py").returncode == 0


def test_celerylint_toml_and_explicit_config(cli, tmp_path):
    write(tmp_path, "celerylint.toml", "select = ['CL206']\n")
    write(tmp_path, "other.toml", "select = ['CL203']\n")
    write(tmp_path, "jobs.py", LOCK + ETA)
    assert [f["code"] for f in json.loads(cli("--format", "json", ".").stdout)] == ["CL206"]
    assert [f["code"] for f in json.loads(cli("--format", "json", "--config", "other.toml", ".").stdout)] == ["CL203"]


def test_bad_configuration_exits_two(cli, tmp_path):
    write(tmp_path, "jobs.py", LOCK)
    cases = {
        "[tool.celerylint]\nlock-tll = 5\n": "pyproject.toml:2: unknown key 'lock-tll' (did you mean 'lock-ttl'?)",
        "[tool.celerylint]\nlock-ttl = 'soon'\n": "pyproject.toml:2: lock-ttl: expected a positive integer",
        "[tool.celerylint]\nselect = ['XX1']\n": "pyproject.toml:2: select: unknown rule code or prefix 'XX1'",
        "[tool.celerylint\n": "pyproject.toml: invalid TOML",
    }
    for text, message in cases.items():
        write(tmp_path, "pyproject.toml", text)
        done = cli(".")
        assert done.returncode == 2, text
        assert message in done.stderr, done.stderr
    assert "no such file" in cli("--config", "missing.toml", ".").stderr


def test_fix_and_diff(cli, tmp_path):
    path = write(tmp_path, "jobs.py", LOCK)
    diff = cli("--diff", "--unsafe-fixes", ".")
    assert diff.returncode == 1
    assert '+    if r.set(lock_key, "1", nx=True, ex=60):' in diff.stdout
    assert path.read_text() == LOCK  # --diff changes nothing
    safe_only = cli("--fix", "--select", "CL203", ".")
    assert safe_only.returncode == 1 and path.read_text() == LOCK  # the fix is unsafe
    done = cli("--fix", "--unsafe-fixes", "--select", "CL203", ".")
    assert done.returncode == 0, done.stdout
    assert "Fixed 1 finding in 1 file." in done.stdout
    assert 'nx=True, ex=60)' in path.read_text()
    again = cli("--fix", "--unsafe-fixes", "--select", "CL203", ".")
    assert again.returncode == 0 and "Fixed" not in again.stdout


def test_explain_and_list_rules(cli):
    done = cli("--explain", "CL203")
    assert done.returncode == 0
    assert done.stdout.startswith("CL203 lock-without-ttl")
    assert "## Why is this bad?" in done.stdout
    assert cli("--explain", "lock-without-ttl").stdout == done.stdout
    assert cli("--explain", "CL999").returncode == 2
    listing = cli("--list-rules").stdout
    assert re.search(r"^CL206 +far-future-eta +no fix +A countdown", listing, re.MULTILINE)
    assert re.search(r"^CL203 +lock-without-ttl +unsafe fix ", listing, re.MULTILINE)


def test_version_and_module_entry(cli):
    from celerylint import __version__

    assert cli("--version").stdout.strip() == f"celerylint, version {__version__}"


def test_missing_path_is_a_usage_error(cli, tmp_path):
    done = cli("nope.py")
    assert done.returncode == 2
    assert "nope.py: no such file or directory" in done.stderr


def test_a_file_reached_twice_is_linted_once(cli, tmp_path):
    write(tmp_path, "pkg/jobs.py", LOCK)
    for args in (["pkg/", "pkg/jobs.py"], ["./pkg", "pkg/jobs.py"], ["pkg", "pkg/../pkg/jobs.py", "."]):
        done = cli("--select", "CL203", "--format", "json", *args)
        findings = json.loads(done.stdout)
        assert [(f["path"], f["code"]) for f in findings] == [("pkg/jobs.py", "CL203")], args


def test_paths_are_relative_to_the_repository_root_from_any_directory(cli, tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path, "app/jobs.py", LOCK)
    write(tmp_path, "other/eta.py", ETA)
    for cwd, args in ((tmp_path, ["app"]), (tmp_path / "app", ["."]), (tmp_path / "app", ["jobs.py"]),
                      (tmp_path / "other", ["../app/jobs.py"]), (tmp_path / "other", [str(tmp_path / "app")])):
        done = cli("--format", "json", "--select", "CL203", *args, cwd=cwd)
        assert [f["path"] for f in json.loads(done.stdout)] == ["app/jobs.py"], (cwd, args, done.stdout)
