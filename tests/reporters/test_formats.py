"""The human-readable formats as a user sees them: ``full`` (the default,
source lines with a caret range and the fix as a diff), ``concise``,
``grouped``, colour, the terminal's width, ``--show-fixes``, and
``--list-rules --output-format json``."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import textwrap

import pytest

from conftest import write_file as write

# A tab in the indentation and a wide character before the span: the carets
# must still sit under `r.lock("lock-a")`.
WIDE = 'import redis\n\nr = redis.Redis()\n\n\ndef f(k):\n\tx = "表"; r.lock("lock-a")\n'
DELAY = textwrap.dedent("""\
    from celery import shared_task


    @shared_task
    def send(order_id):
        pass


    def later(order_id):
        send.delay(order_id, countdown=60)
""")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_full_is_the_default_with_carets_under_the_span_and_the_fix_as_a_diff(cli, tmp_path):
    write(tmp_path, "app/locks.py", WIDE)
    done = cli("--select", "CL203", ".")
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("app/locks.py:7:11: CL203 [lock-without-ttl] ")
    assert lines[1:5] == [
        "  |",
        "6 | def f(k):",
        '7 |     x = "表"; r.lock("lock-a")',  # the tab shown as four spaces
        # '    x = "' is 9 columns, 表 two, '"; ' three: the span starts at column 14
        "  | " + " " * 14 + "^" * len('r.lock("lock-a")') + " CL203",
    ]
    assert lines[5] == "  |"
    assert lines[6] == "  = fix (unsafe, --fix --unsafe-fixes): add `timeout=60`"
    assert lines[7:9] == ['  7 -     x = "表"; r.lock("lock-a")', '  7 +     x = "表"; r.lock("lock-a", timeout=60)']
    assert lines[-1] == "1 finding in 1 file, 0 fixable with --fix (1 more with --unsafe-fixes)."
    # `text` is `full`; --output-format and --format are one option
    for args in (("--format", "text"), ("--output-format", "full"), ("--format", "full")):
        assert cli(*args, "--select", "CL203", ".").stdout == done.stdout
    env = {"CELERYLINT_OUTPUT_FORMAT": "full"}
    assert cli("--select", "CL203", ".", env=env).stdout == done.stdout


def test_full_multiline_span_hint_and_a_fix_in_another_file(cli, tmp_path):
    write(tmp_path, "locks.py", 'import redis\n\nr = redis.Redis()\n\n\ndef f(k):\n    with r.lock(\n'
                                '        "lock-a",\n    ):\n        pass\n')
    done = cli("--select", "CL203", ".")
    lines = done.stdout.splitlines()
    assert lines[1:11] == [
        "   |",
        " 6 | def f(k):",
        " 7 |     with r.lock(",
        "   |          ^^^^^^^",  # each line of the span from its first character, the first from the column
        ' 8 |         "lock-a",',
        "   |         ^^^^^^^^^",
        " 9 |     ):",
        "   |     ^ CL203",  # the code after the last line's carets
        "10 |         pass",
        "   |",
    ]
    write(tmp_path, "tasks.py", textwrap.dedent("""\
        from celery import shared_task


        @shared_task(autoretry_for=(Exception,))
        def charge(order_id):
            import requests
            requests.post("https://pay", json={})
            charge.delay(order_id)
    """))
    done = cli("--select", "CL207", "--output-format", "full", "tasks.py")
    assert done.returncode == 1, done.stderr
    assert "\n  = hint: retry only on the exceptions" in done.stdout

    write(tmp_path, "proj/celeryconfig.py", 'broker_url = "redis://localhost:6379/0"\ntask_ack_late = True\n')
    write(tmp_path, "proj/celery.py", 'from celery import Celery\napp = Celery("p")\napp.config_from_object("proj.celeryconfig")\n')
    done = cli("--select", "CL101", ".")
    assert "  = fix (unsafe, --fix --unsafe-fixes) in proj/celeryconfig.py: " in done.stdout
    assert "  2 - task_ack_late = True\n  2 + task_acks_late = True\n" in done.stdout


def test_full_cuts_long_context_lines_but_not_the_span(cli, tmp_path):
    long = "x = [" + ", ".join(str(i) for i in range(200)) + "]"
    write(tmp_path, "a.py", f'import redis\n\nr = redis.Redis()\n{long}\n{long}; r.lock("a")\n')
    lines = cli("--select", "CL203", ".").stdout.splitlines()
    [context] = [line for line in lines if line.startswith("4 | ")]
    assert context.endswith("…") and len(context) == len("4 | ") + 200 + 1
    [span] = [line for line in lines if line.startswith("5 | ")]
    assert span == f'5 | {long}; r.lock("a")'
    assert lines[lines.index(span) + 1] == "  | " + " " * (len(long) + 2) + "^" * len('r.lock("a")') + " CL203"


def test_concise_and_grouped(cli, tmp_path):
    write(tmp_path, "a.py", WIDE)
    write(tmp_path, "b.py", WIDE)
    concise = cli("--output-format", "concise", "--select", "CL203", ".").stdout.splitlines()
    assert concise == [
        'a.py:7:11: CL203 [lock-without-ttl] `lock()` without `timeout`: a worker that dies holding it blocks the lock forever',
        "    fix (unsafe, --fix --unsafe-fixes): add `timeout=60`",
        'b.py:7:11: CL203 [lock-without-ttl] `lock()` without `timeout`: a worker that dies holding it blocks the lock forever',
        "    fix (unsafe, --fix --unsafe-fixes): add `timeout=60`",
        "2 findings in 2 files, 0 fixable with --fix (2 more with --unsafe-fixes).",
    ]
    grouped = cli("--output-format", "grouped", "--select", "CL203", ".").stdout.splitlines()
    assert grouped == [
        "a.py:",
        "  7:11 CL203 [lock-without-ttl] `lock()` without `timeout`: a worker that dies holding it blocks the lock forever",
        "      fix (unsafe, --fix --unsafe-fixes): add `timeout=60`",
        "",
        "b.py:",
        "  7:11 CL203 [lock-without-ttl] `lock()` without `timeout`: a worker that dies holding it blocks the lock forever",
        "      fix (unsafe, --fix --unsafe-fixes): add `timeout=60`",
        "",
        "2 findings in 2 files, 0 fixable with --fix (2 more with --unsafe-fixes).",
    ]


def test_colour_choices_and_environment(cli, tmp_path):
    write(tmp_path, "a.py", WIDE)

    def coloured(*args, env=None):
        base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
        done = subprocess.run([sys.executable, "-m", "celerylint", "--select", "CL203", *args, "."], cwd=tmp_path,
                              capture_output=True, text=True, env={**base, **(env or {})})
        assert done.returncode == 1, done.stderr
        return bool(ANSI.search(done.stdout)), done.stdout

    assert coloured() == (False, coloured("--color", "never")[1])  # a pipe: no colour
    on, text = coloured("--color", "always")
    assert on and ANSI.sub("", text) == coloured()[1]  # the same report, with colour
    assert coloured(env={"FORCE_COLOR": "1"})[0]
    assert not coloured(env={"FORCE_COLOR": "1", "NO_COLOR": "1"})[0]
    assert not coloured("--color", "never", env={"FORCE_COLOR": "1"})[0]
    assert coloured("--color", "always", env={"NO_COLOR": "1"})[0]
    assert not coloured(env={"FORCE_COLOR": ""})[0]  # empty means unset
    for fmt in ("concise", "grouped"):
        assert coloured("--output-format", fmt, "--color", "always")[0]
    assert not coloured("--output-format", "json", "--color", "always")[0]


def on_terminal(cwd, *args, columns=60, env=None):
    """Run celerylint with its stdout on a pseudo-terminal; returns its output."""
    master, slave = pty.openpty()
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    proc = subprocess.Popen([sys.executable, "-m", "celerylint", *args], cwd=cwd, stdout=slave,
                            stderr=subprocess.PIPE, env={**base, "COLUMNS": str(columns), **(env or {})})
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the other end closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    proc.wait(timeout=120)
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def test_on_a_terminal_colour_and_long_messages_fit_its_width(tmp_path):
    write(tmp_path, "a.py", WIDE)
    full = on_terminal(tmp_path, "--select", "CL203", ".")
    assert ANSI.search(full)  # auto: colour on a terminal
    plain = ANSI.sub("", full)
    header = plain.split("\n  |")[0].splitlines()
    assert len(header) > 1 and all(len(line) <= 60 for line in header)  # wrapped...
    assert " ".join(line.strip() for line in header).endswith("blocks the lock forever")  # ...and whole
    narrow = ANSI.sub("", on_terminal(tmp_path, "--select", "CL203", ".", columns=40)).splitlines()
    at = narrow.index("  = fix (unsafe, --fix --unsafe-fixes):")  # the fix's line wrapped too
    assert narrow[at + 1] == "      add `timeout=60`"
    concise = ANSI.sub("", on_terminal(tmp_path, "--output-format", "concise", "--select", "CL203", "."))
    first = concise.splitlines()[0]
    assert len(first) <= 60 and first.endswith("…") and first.startswith("a.py:7:11: CL203 [lock-without-ttl] ")
    # never on a terminal with NO_COLOR; a file gets every line whole
    assert not ANSI.search(on_terminal(tmp_path, "--select", "CL203", ".", env={"NO_COLOR": "1"}))
    on_terminal(tmp_path, "--select", "CL203", "--output-format", "concise", "--output", "r.txt", ".")
    report = (tmp_path / "r.txt").read_text()
    assert not ANSI.search(report) and "blocks the lock forever\n" in report
    on_terminal(tmp_path, "--select", "CL203", "--output", "r.txt", ".", env={"FORCE_COLOR": "1"})
    assert not ANSI.search((tmp_path / "r.txt").read_text())  # FORCE_COLOR is for standard output
    on_terminal(tmp_path, "--select", "CL203", "--output", "r.txt", "--color", "always", ".")
    assert ANSI.search((tmp_path / "r.txt").read_text())


def test_show_fixes_lists_the_fixes_applied(cli, tmp_path):
    write(tmp_path, "jobs.py", DELAY)
    write(tmp_path, "locks.py", WIDE)
    done = cli("--fix", "--unsafe-fixes", "--show-fixes", "--select", "CL209,CL203", ".")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "Fixed 2 findings:",
        "- jobs.py:",
        "    1 × CL209 (execution-option-as-task-argument)",
        "- locks.py:",
        "    1 × CL203 (lock-without-ttl)",
        "Fixed 2 findings in 2 files. No findings in 2 files checked.",
    ]
    write(tmp_path, "jobs.py", DELAY)
    without = cli("--fix", "--select", "CL209", ".")
    assert "×" not in without.stdout and "Fixed 1 finding in 1 file." in without.stdout
    write(tmp_path, "jobs.py", DELAY)
    concise = cli("--fix", "--show-fixes", "--output-format", "concise", "--select", "CL209", ".")
    assert "    1 × CL209 (execution-option-as-task-argument)" in concise.stdout
    before = write(tmp_path, "jobs.py", DELAY).read_text()
    patch = cli("--diff", "--show-fixes", "--select", "CL209", ".")  # the list on stderr, the patch alone on stdout
    assert patch.returncode == 1 and patch.stdout.startswith("--- a/jobs.py\n") and "×" not in patch.stdout
    assert patch.stderr.splitlines() == ["Would fix 1 finding:", "- jobs.py:", "    1 × CL209 (execution-option-as-task-argument)"]
    assert (tmp_path / "jobs.py").read_text() == before
    assert cli("--diff", "--select", "CL209", ".").stderr == ""


def test_list_rules_as_json(cli):
    done = cli("--list-rules", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    rules = json.loads(done.stdout)
    table = cli("--list-rules").stdout.splitlines()
    assert [r["code"] for r in rules] == [line.split()[0] for line in table]
    by_code = {r["code"]: r for r in rules}
    assert by_code["CL203"]["name"] == "lock-without-ttl" and by_code["CL203"]["fix"] == "unsafe"
    assert by_code["CL112"]["default_enabled"] is False and by_code["CL203"]["default_enabled"] is True
    assert by_code["CL203"]["url"].endswith("/rules/CL203.md")
    assert {r["severity"] for r in rules} <= {"error", "warning", "note"}
    assert all(r["summary"] for r in rules)
    # any other format (say from $CELERYLINT_OUTPUT_FORMAT, meant for the report) prints the table
    other = cli("--list-rules", env={"CELERYLINT_OUTPUT_FORMAT": "sarif"})
    assert other.returncode == 0 and other.stdout.splitlines() == table


def test_unknown_format_is_a_usage_error(cli, tmp_path):
    done = cli("--output-format", "xml", ".")
    assert done.returncode == 2 and "'xml' is not one of" in done.stderr
    env = cli(".", env={"CELERYLINT_OUTPUT_FORMAT": "xml"})
    assert env.returncode == 2


@pytest.mark.parametrize("fmt", ["full", "concise", "grouped", "json", "json-lines", "junit", "gitlab", "rdjson",
                                 "sarif", "github"])
def test_url_passwords_in_quoted_source_are_masked(cli, tmp_path, fmt):
    write(tmp_path, "celeryconfig.py", 'broker_url = "amqp://svc:Wm5tR8yNq@mq.example.com:5672//"\n')
    write(tmp_path, "proj.py", 'from celery import Celery\napp = Celery("p")\napp.config_from_object("celeryconfig")\n')
    done = cli("--select", "CL115", "--output-format", fmt, "--no-cache", ".")
    assert done.returncode == 1, done.stderr
    assert "svc:****@mq.example.com" in done.stdout
    assert "Wm5tR8yNq" not in done.stdout + done.stderr
