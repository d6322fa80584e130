"""The command-line habits a ruff user brings: repeated options merge,
``celerylint rule``, ``-o``, configuration keys on the command line,
``--fix-only``, fixability, ``-e``, ``--ignore-noqa``, ``--add-noqa=REASON``,
file-level ``# celerylint: noqa``, configuration keys for the output
format and fixes, and ``--statistics`` JSON."""

from __future__ import annotations

import json
import textwrap

from conftest import write_file as write

from test_cli import ETA, LOCK


def codes(cli, *args: str) -> list[tuple[str, str]]:
    done = cli("--output-format", "json", *args, ".")
    assert done.returncode in (0, 1), done.stderr
    return sorted((f["path"], f["code"]) for f in json.loads(done.stdout))


def test_repeated_selection_options_merge(cli, tmp_path):
    write(tmp_path, "jobs.py", LOCK + ETA)
    assert codes(cli) == [("jobs.py", "CL203"), ("jobs.py", "CL204"), ("jobs.py", "CL206")]
    assert codes(cli, "--ignore", "CL203", "--ignore", "CL204") == [("jobs.py", "CL206")]
    assert codes(cli, "--select", "CL203", "--select", "CL206") == [("jobs.py", "CL203"), ("jobs.py", "CL206")]
    assert codes(cli, "--select", "CL203", "--extend-select", "CL204", "--extend-select", "CL206,CL112") == [
        ("jobs.py", "CL203"), ("jobs.py", "CL204"), ("jobs.py", "CL206")]
    write(tmp_path, "b.py", LOCK)
    merged = codes(cli, "--per-file-ignores", "jobs.py:CL203", "--per-file-ignores", "b.py:CL204,CL203")
    assert merged == [("jobs.py", "CL204"), ("jobs.py", "CL206")]
    bad = cli("--per-file-ignores", "jobs.py", ".")
    assert bad.returncode == 2 and "expected GLOB:CODE" in bad.stderr


def test_rule_command(cli, tmp_path):
    done = cli("rule", "CL203")
    assert done.returncode == 0
    assert done.stdout.startswith("CL203 lock-without-ttl (error;")
    assert "## What it does" in done.stdout and done.stdout == cli("--explain", "CL203").stdout
    assert cli("rule", "lock-without-ttl").stdout == done.stdout
    one = json.loads(cli("rule", "CL203", "--output-format", "json").stdout)
    assert (one["code"], one["name"], one["fix"]) == ("CL203", "lock-without-ttl", "unsafe")
    assert "## Why is this bad?" in one["explanation"]
    every = json.loads(cli("rule", "--all", "--output-format", "json").stdout)
    listed = json.loads(cli("--list-rules", "--output-format", "json").stdout)
    assert [r["code"] for r in every] == [r["code"] for r in listed]
    assert all(r["explanation"].startswith(r["code"]) for r in every)
    assert cli("rule", "--all").stdout.count("## What it does") == len(every)
    unknown = cli("rule", "CL2O3")
    assert unknown.returncode == 2 and "did you mean 'CL203'" in unknown.stderr
    assert cli("rule").returncode == 2
    # a directory named rule is still linted as ./rule
    write(tmp_path, "rule/jobs.py", LOCK)
    assert cli("./rule").returncode == 1


def test_output_file_short_option_and_environment(cli, tmp_path):
    write(tmp_path, "jobs.py", LOCK)
    for args, env in ((("-o", "a.json"), None), (("--output-file", "b.json"), None),
                      (("--output", "c.json"), None), ((), {"CELERYLINT_OUTPUT_FILE": "d.json"})):
        done = cli("--output-format", "json", *args, ".", env=env)
        assert done.returncode == 1 and done.stdout == ""
        name = args[1] if args else "d.json"
        assert json.loads((tmp_path / name).read_text())[0]["code"] == "CL203"


def test_exclude_and_gitignore_on_the_command_line(cli, tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.celerylint]\nexclude = ["old/**"]\n')
    for name in ("jobs.py", "old/jobs.py", "gen/jobs.py", "vendored/jobs.py"):
        write(tmp_path, name, LOCK)
    write(tmp_path, ".gitignore", "vendored/\n")
    (tmp_path / ".git").mkdir()
    paths = lambda *a: sorted({p for p, _ in codes(cli, *a)})  # noqa: E731
    assert paths() == ["gen/jobs.py", "jobs.py"]
    assert paths("--exclude", "gen/**") == ["jobs.py", "old/jobs.py"]  # replaces the configuration's
    assert paths("--extend-exclude", "gen/**") == ["jobs.py"]  # adds to it
    assert paths("--no-respect-gitignore") == ["gen/jobs.py", "jobs.py", "vendored/jobs.py"]
    assert paths("--config", "respect-gitignore = false", "--respect-gitignore") == ["gen/jobs.py", "jobs.py"]


def test_fix_only_fixes_and_reports_nothing_left(cli, tmp_path):
    write(tmp_path, "jobs.py", LOCK)
    done = cli("--fix-only", "--unsafe-fixes", ".")
    assert done.returncode == 0, done.stderr  # CL204 is left, and not reported
    assert done.stdout.strip() == "Fixed 1 finding."
    assert "ex=60" in (tmp_path / "jobs.py").read_text()
    again = cli("--fix-only", "--unsafe-fixes", "--output-format", "json", ".")
    assert again.returncode == 0 and json.loads(again.stdout) == []
    assert cli("--fix-only", "--exit-non-zero-on-fix", "--unsafe-fixes", ".").returncode == 0  # nothing fixed now


def test_fixable_unfixable_extend_fixable(cli, tmp_path):
    write(tmp_path, "jobs.py", LOCK)
    done = cli("--fix", "--unsafe-fixes", "--unfixable", "CL203", "--output-format", "json", ".")
    assert "ex=60" not in (tmp_path / "jobs.py").read_text()
    assert [f["fix"] for f in json.loads(done.stdout) if f["code"] == "CL203"] == [None]  # as ruff: no fix shown
    cli("--fix", "--unsafe-fixes", "--fixable", "CL206", ".")
    assert "ex=60" not in (tmp_path / "jobs.py").read_text()
    write(tmp_path, "pyproject.toml", '[tool.celerylint]\nfixable = ["CL206"]\nextend-fixable = ["CL2"]\n'
          'unfixable = ["CL204"]\nunsafe-fixes = true\n')
    assert cli("--show-settings").stdout.count('fixable = ["CL206"]') == 1
    cli("--fix", ".")
    assert "ex=60" in (tmp_path / "jobs.py").read_text()
    bad = cli("--unfixable", "CL999", ".")
    assert bad.returncode == 2 and "--unfixable" in bad.stderr


def test_fixable_unfixable_extend_fixable_on_standard_input(cli, tmp_path):
    """``celerylint - --stdin-filename jobs.py --fix`` fixes what a run on
    the file fixes, with every way of setting fixability, and shows no fix
    for a code that is not fixable."""
    write(tmp_path, "pyproject.toml", "[tool.celerylint]\n")
    config = '[tool.celerylint]\nfixable = ["CL206"]\nextend-fixable = ["CL2"]\nunfixable = ["CL204"]\n'
    # (configuration, options, whether CL203's unsafe fix `ex=60` is applied)
    for toml, args, applied in (("", ["--unfixable", "CL203"], False), ("", ["--fixable", "CL206"], False),
                                ("", ["--fixable", "CL203"], True), ("", ["--fixable", "CL206", "--extend-fixable",
                                                                          "CL203"], True),
                                (config, [], True), (config, ["--unfixable", "CL203"], False), ("", [], True)):
        write(tmp_path, "pyproject.toml", toml or "[tool.celerylint]\n")
        write(tmp_path, "jobs.py", LOCK)
        cli("--fix", "--unsafe-fixes", *args, "jobs.py")
        on_disk = (tmp_path / "jobs.py").read_text()
        write(tmp_path, "jobs.py", LOCK)
        piped = cli("--fix", "--unsafe-fixes", *args, "--stdin-filename", "jobs.py", "-", input=LOCK)
        assert piped.stdout == on_disk, (toml, args, piped.stderr)
        assert ("ex=60" in piped.stdout) == applied, (toml, args)
    write(tmp_path, "pyproject.toml", "[tool.celerylint]\n")
    shown = cli("--unsafe-fixes", "--unfixable", "CL203", "--output-format", "json", "--stdin-filename", "jobs.py", "-",
                input=LOCK)
    assert [f["fix"] for f in json.loads(shown.stdout) if f["code"] == "CL203"] == [None]  # as for the file


def test_config_key_value_overrides(cli, tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.celerylint]\nselect = ["CL203"]\nlock-ttl = 30\n')
    write(tmp_path, "other.toml", 'select = ["CL206"]\n')
    write(tmp_path, "jobs.py", LOCK + ETA)
    assert codes(cli) == [("jobs.py", "CL203")]
    assert codes(cli, "--config", 'select = ["CL204"]') == [("jobs.py", "CL204")]
    assert codes(cli, "--config", "other.toml") == [("jobs.py", "CL206")]  # a file still works
    both = codes(cli, "--config", "other.toml", "--config", "extend-select = ['CL203']")
    assert both == [("jobs.py", "CL203"), ("jobs.py", "CL206")]
    fixes = json.loads(cli("--output-format", "json", "--config", "lock-ttl = 90", ".").stdout)
    assert fixes[0]["fix"]["description"] == "add `ex=90`"
    # the command line's own options apply after the overrides
    assert codes(cli, "--config", 'select = ["CL204"]', "--select", "CL206") == [("jobs.py", "CL206")]
    for value, message in (("lock-tl = 3", "unknown key 'lock-tl' (did you mean 'lock-ttl'?)"),
                           ("lock-ttl = -1", "expected a positive integer"),
                           ("select = [", "neither a file nor a valid `KEY = VALUE`"),
                           ("extend = 'other.toml'", "only be set in a configuration file")):
        bad = cli("--config", value, ".")
        assert bad.returncode == 2 and message in bad.stderr, bad.stderr


def test_exit_zero_short_option(cli, tmp_path):
    write(tmp_path, "jobs.py", LOCK)
    assert cli(".").returncode == 1
    assert cli("-e", ".").returncode == 0


def test_ignore_noqa(cli, tmp_path):
    write(tmp_path, "a.py", LOCK.replace('nx=True):', 'nx=True):  # noqa: CL203'))
    write(tmp_path, "b.py", "# celerylint: noqa\n" + LOCK)
    write(tmp_path, "c.py", "# celerylint: skip-file\n" + LOCK)
    assert codes(cli, "--select", "CL203,CL002") == []
    assert codes(cli, "--select", "CL203,CL002", "--ignore-noqa") == [("a.py", "CL203"), ("b.py", "CL203")]


def test_add_noqa_with_a_reason(cli, tmp_path):
    write(tmp_path, "jobs.py", LOCK)
    write(tmp_path, "src/more.py", LOCK)
    done = cli("--add-noqa=legacy, see #12", "--select", "CL203", "src")  # `src` stays a path
    assert done.returncode == 0 and "Added 1 noqa directive." in done.stderr
    assert 'nx=True):  # noqa: CL203 -- legacy, see #12\n' in (tmp_path / "src/more.py").read_text()
    assert "noqa" not in (tmp_path / "jobs.py").read_text()
    cli("--add-noqa", ".")
    assert 'nx=True):  # noqa: CL203\n' in (tmp_path / "jobs.py").read_text()
    assert codes(cli, "--extend-select", "CL002") == []  # the reason is not read as a code


def test_file_level_noqa(cli, tmp_path):
    write(tmp_path, "all.py", "# celerylint: noqa\n" + LOCK)
    write(tmp_path, "some.py", "#celerylint:noqa: CL203\n" + LOCK)
    write(tmp_path, "prefix.py", LOCK + "# celerylint: noqa: CL2\n")
    write(tmp_path, "inline.py", LOCK.replace("import redis", "import redis  # celerylint: noqa"))
    assert codes(cli) == [("inline.py", "CL203"), ("inline.py", "CL204"), ("some.py", "CL204")]


def test_file_level_noqa_still_reads_the_file(cli, tmp_path):
    """Unlike skip-file, the settings of a file with `# celerylint: noqa`
    still count for the rest of the project."""
    settings = textwrap.dedent("""\
        from celery import Celery

        app = Celery("proj", broker="redis://localhost")
        app.conf.broker_transport_options = {"visibility_timeout": 60}
        app.conf.task_acks_late = True


        @app.task(time_limit=600)
        def report():
            pass
    """)
    write(tmp_path, "proj/celery.py", "# celerylint: noqa\n" + settings)
    assert codes(cli, "--select", "CL1") == []
    write(tmp_path, "proj/celery.py", settings)
    assert ("proj/celery.py", "CL104") in codes(cli, "--select", "CL1")


def test_output_format_and_fix_as_configuration_keys(cli, tmp_path):
    write(tmp_path, "jobs.py", LOCK)
    write(tmp_path, "pyproject.toml", '[tool.celerylint]\noutput-format = "json"\nselect = ["CL203"]\n')
    assert json.loads(cli(".").stdout)[0]["code"] == "CL203"
    assert cli("--output-format", "concise", ".").stdout.startswith("jobs.py:8:8: CL203")
    write(tmp_path, "pyproject.toml", '[tool.celerylint]\nfix = true\nunsafe-fixes = true\n')
    assert cli("--no-fix", ".").returncode == 1 and "ex=60" not in (tmp_path / "jobs.py").read_text()
    cli(".")
    assert "ex=60" in (tmp_path / "jobs.py").read_text()
    write(tmp_path, "pyproject.toml", '[tool.celerylint]\noutput-format = "jsno"\n')
    bad = cli(".")
    assert bad.returncode == 2 and "output-format: unknown format 'jsno' (did you mean 'json'?)" in bad.stderr
    write(tmp_path, "pyproject.toml", '[tool.celerylint]\nfix = "yes"\n')
    assert cli(".").returncode == 2


def test_statistics_json_fixable_is_a_boolean(cli, tmp_path):
    write(tmp_path, "jobs.py", LOCK)
    rows = json.loads(cli("--statistics", "--output-format", "json", ".").stdout)
    assert {r["code"]: r["fixable"] for r in rows} == {"CL203": False, "CL204": False}
    rows = json.loads(cli("--statistics", "--unsafe-fixes", "--output-format", "json", ".").stdout)
    assert {r["code"]: r["fixable"] for r in rows} == {"CL203": True, "CL204": False}
