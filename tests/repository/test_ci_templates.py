"""The CI integrations a user copies, run as CI would run them: the
composite GitHub Action (action.yml: its shell steps, with the inputs
substituted), the GitLab CI template (ci/gitlab-celerylint.yml: its script)
and the pre-commit snippet of docs/integrations.md that uses a local hook."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO

EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def _substitute(value: str, context: dict[str, str]) -> str:
    return EXPRESSION.sub(lambda m: context[m.group(1)], value)


def _action_steps(inputs: dict[str, str]) -> list[tuple[str, str, dict[str, str]]]:
    """(name, script, env) of each shell step of action.yml, its inputs substituted."""
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    values = {name: spec.get("default", "") for name, spec in action["inputs"].items()}
    values.update(inputs)
    context = {f"inputs.{k}": v for k, v in values.items()} | {"github.action_path": str(REPO)}
    steps = []
    for step in action["runs"]["steps"]:
        if "run" in step:
            assert step["shell"] == "bash"
            assert "${{" not in step["run"], "inputs reach scripts through env, never pasted into them"
            env = {k: _substitute(str(v), context) for k, v in step.get("env", {}).items()}
            steps.append((step["name"], step["run"], env))
    return steps


def _index_reachable() -> bool:
    probe = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "click"],
                           capture_output=True, text=True, timeout=60)
    return probe.returncode == 0


def test_the_action_installs_from_its_checkout_and_writes_sarif(tmp_path):
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert set(action["inputs"]) >= {"args", "version", "sarif-file", "upload"}
    upload = [s for s in action["runs"]["steps"] if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    assert upload and "inputs.upload == 'true'" in upload[0]["if"]
    if not _index_reachable():
        pytest.skip("the package index is unreachable: the install step cannot fetch celerylint's dependencies")
    sarif = tmp_path / "out" / "celerylint.sarif"
    sarif.parent.mkdir()
    output = tmp_path / "github_output"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CELERYLINT_", "VIRTUAL_ENV"))}
    base |= {"RUNNER_TEMP": str(tmp_path), "GITHUB_OUTPUT": str(output)}
    results = []
    for name, script, env in _action_steps({"args": "--no-cache examples/shop", "sarif-file": str(sarif)}):
        if name == "Fail on findings":
            continue  # run only when `fail-on-findings` and exit code 1: checked below
        results.append(subprocess.run(["bash", "-e", "-c", script], cwd=REPO, env={**base, **env},
                                      capture_output=True, text=True, timeout=600))
        assert results[-1].returncode == 0, (name, results[-1].stdout, results[-1].stderr)
    assert results[0].stdout.startswith("celerylint, version "), results[0].stdout
    assert output.read_text() == "exit-code=1\n"  # findings: the upload still runs, the last step fails the job
    report = json.loads(sarif.read_text())
    assert report["version"] == "2.1.0"
    found = {r["ruleId"] for r in report["runs"][0]["results"]}
    assert {"CL203", "CL101"} <= found, found
    rules = report["runs"][0]["tool"]["driver"]["rules"]
    assert all(r["helpUri"].startswith("https://github.com/celerylint/celerylint/blob/main/rules/CL") for r in rules)


def test_the_action_reports_an_error_as_exit_status_two(tmp_path):
    """A usage error fails the run step itself, before any upload; the
    install step is not repeated here (the celerylint of this checkout
    stands in for the one it installs)."""
    venv_bin = tmp_path / "celerylint-venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "celerylint").symlink_to(Path(sys.executable).with_name("celerylint"))
    output = tmp_path / "github_output"
    [(name, script, env)] = [s for s in _action_steps({"args": "--select NOPE ."}) if s[0] == "Run celerylint"]
    done = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env, "RUNNER_TEMP": str(tmp_path), "GITHUB_OUTPUT": str(output)})
    assert done.returncode == 2 and "::error title=celerylint::" in done.stdout
    assert output.read_text() == "exit-code=2\n"


def test_the_gitlab_template_writes_a_code_quality_report(tmp_path):
    template = yaml.safe_load((REPO / "ci" / "gitlab-celerylint.yml").read_text())
    job = template["celerylint"]
    report = job["artifacts"]["reports"]["codequality"]
    variables = {**job["variables"], "CELERYLINT_ARGS": "--no-cache shop"}
    assert report == "$CELERYLINT_REPORT" and "pip install" in job["before_script"][0]
    shutil.copytree(REPO / "examples" / "shop", tmp_path / "shop")
    env = {**os.environ, **variables, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    statuses = [subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True,
                               timeout=300) for line in job["script"]]
    assert [s.returncode for s in statuses] == [0, 1], [s.stderr for s in statuses]
    issues = json.loads((tmp_path / variables["CELERYLINT_REPORT"]).read_text())
    assert issues and {"description", "check_name", "fingerprint", "severity", "location"} <= set(issues[0])
    assert any(i["check_name"] == "CL203" for i in issues)
    assert "CL203 [lock-without-ttl]" in statuses[1].stdout


def _snippet(page: str, marker: str) -> str:
    """The fenced block after ``<!-- marker -->`` in docs/<page>."""
    text = (REPO / "docs" / page).read_text()
    after = text.split(f"<!-- {marker} -->", 1)[1]
    return after.split("```", 2)[1].split("\n", 1)[1]


def test_the_local_pre_commit_snippet_works(tmp_path):
    """docs/integrations.md's `repo: local` hook, with celerylint on PATH."""
    config = _snippet("integrations.md", "snippet: pre-commit-local")
    assert "repo: local" in config
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    (work / ".pre-commit-config.yaml").write_text(config)
    (work / "jobs.py").write_text("import redis\nr = redis.Redis()\n\ndef f():\n    with r.lock('lock:nightly'):\n"
                                  "        pass\n")
    subprocess.run(["git", "add", "."], cwd=work, check=True)
    exe = Path(sys.executable).with_name("pre-commit")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "home"), "NO_COLOR": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([str(exe), "run", "--all-files"], cwd=work, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1 and "CL203 [lock-without-ttl]" in done.stdout, done.stdout + done.stderr
