"""SARIF output: schema-valid, repo-relative, with rules, fingerprints and fixes."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import SHARED_REFERENCE
from celerylint.reporters.fingerprint import line_hashes

SCHEMA = SHARED_REFERENCE / "sarif-schema-2.1.0.json"


def validate(document: dict) -> None:
    if not SCHEMA.is_file():
        pytest.skip(f"the official SARIF schema is not here ({SCHEMA}); validation needs ../shared/reference/")
    import jsonschema

    schema = json.loads(SCHEMA.read_text())
    jsonschema.validators.validator_for(schema)(schema).validate(document)


@pytest.fixture
def project(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    src = tmp_path / "app" / "my jobs"
    src.mkdir(parents=True)
    (src / "locks.py").write_text(
        "import redis\n\nr = redis.Redis()\n\n\ndef f(k):\n    # é😀\n    if r.set(f'lock:{k}', 1, nx=True):  x = 'é😀'; r.delete(f'lock:{k}')\n"
    )
    (src / "eta.py").write_text("from t import job\njob.apply_async(countdown=86400)\n")
    (src / "broken.py").write_text("import celery\ndef f(:\n")
    return tmp_path


def run_sarif(cli, cwd, *args):
    done = cli("--format", "sarif", *args, cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    document = json.loads(done.stdout)
    validate(document)
    return document


def test_schema_valid_with_results(cli, project):
    document = run_sarif(cli, project, ".")
    run = document["runs"][0]
    assert document["version"] == "2.1.0"
    assert run["columnKind"] == "utf16CodeUnits"
    assert run["automationDetails"]["id"] == "celerylint/"
    ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert ids == sorted(ids) and {"CL001", "CL203", "CL206"} <= set(ids)
    for rule in run["tool"]["driver"]["rules"]:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["help"]["markdown"] and rule["helpUri"].startswith("https://")
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert {"CL001", "CL203", "CL206"} <= set(by_rule)
    for result in run["results"]:
        assert ids[result["ruleIndex"]] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert location["artifactLocation"]["uri"].startswith("app/my%20jobs/")


def test_columns_are_utf16_and_fix_regions(cli, project):
    run = run_sarif(cli, project, ".")["runs"][0]
    lock = next(r for r in run["results"] if r["ruleId"] == "CL203")
    region = lock["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (8, 8)
    [fix] = lock["fixes"]
    [change] = fix["artifactChanges"]
    [replacement] = change["replacements"]
    assert replacement["insertedContent"]["text"] == "r.set(f'lock:{k}', 1, nx=True, ex=60)"
    assert fix["description"]["text"].endswith("(unsafe)")


def test_utf16_columns_after_astral_characters(cli, tmp_path):
    (tmp_path / "x.py").write_text("import redis\nr = redis.Redis()\n'😀'; r.lock('lock-a')\n")
    run = run_sarif(cli, tmp_path, ".")["runs"][0]
    [result] = run["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    # "'😀'; " is 5 code points but 6 UTF-16 code units (the emoji is a surrogate pair)
    assert region["startColumn"] == 7
    assert region["endColumn"] == 7 + len("r.lock('lock-a')")


def test_fingerprints_are_githubs_line_hashes(cli, project):
    run = run_sarif(cli, project, ".")["runs"][0]
    text = (project / "app" / "my jobs" / "eta.py").read_text()
    result = next(r for r in run["results"] if r["ruleId"] == "CL206")
    assert result["partialFingerprints"]["primaryLocationLineHash"] == line_hashes(text)[2]


def test_github_test_vectors():
    assert list(line_hashes("").values()) == ["c129715d7a2bc9a3:1"]
    assert list(line_hashes(" a\nb\n  \t\tc\n d").values()) == [
        "271789c17abda88f:1", "54703d4cd895b18:1", "180aee12dab6264:1", "a23a3dc5e078b07b:1"]
    assert list(line_hashes("Lorem ipsum dolor sit amet.\n" * 10).values())[:3] == [
        "a7f2ff13bc495cf2:1", "a7f2ff13bc495cf2:2", "a7f2ff13bc495cf2:3"]
    assert line_hashes("a\r\nb\r\n") == line_hashes("a\nb\n") == line_hashes("a\rb\r")


def test_clean_run_has_empty_results(cli, tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    document = run_sarif(cli, tmp_path, ".")
    assert document["runs"][0]["results"] == []


def test_paths_relative_to_repository_root_from_a_subdirectory(cli, project):
    run = run_sarif(cli, project / "app", ".")["runs"][0]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert all(u.startswith("app/my%20jobs/") for u in uris)


def test_rules_off_by_default_say_so(cli, project):
    rules = {r["id"]: r for r in run_sarif(cli, project, "--select", "ALL", ".")["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["CL112"]["defaultConfiguration"]["enabled"] is False
    assert rules["CL203"]["defaultConfiguration"]["enabled"] is True
