"""The machine-readable formats, each checked the way its consumer reads it:
JSON's ``fingerprint``, JSON Lines, JUnit XML (parsed with ElementTree, the
elements and attributes Jenkins' JUnit plugin and GitLab's ``reports:
junit`` read), GitLab Code Quality (its required fields and severities) and
reviewdog's rdjson (validated against reviewdog's own JSON schema)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from conftest import FIXTURES
from test_doctor import server  # noqa: F401  (a real redis-server; skipped without one)

LOCKS = ('import redis\n\nr = redis.Redis()\n\n\ndef f(k):\n    x = "😀"; r.lock("lock-a")\n'
         '    r.lock("lock-b")\n    r.lock("lock-b")\n')
ETA = "from t import job\njob.apply_async(countdown=86400)\n"
# reviewdog's schema of its Diagnostic Format, saved verbatim from
# https://github.com/reviewdog/reviewdog/blob/6c307503194f0f32bf1956c7fcd2877636338db6/proto/rdf/jsonschema/DiagnosticResult.json
RDJSON_SCHEMA = FIXTURES / "rdjson" / "DiagnosticResult.json"
GITLAB_SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


@pytest.fixture
def project(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "locks.py").write_text(LOCKS)
    (tmp_path / "app" / "eta.py").write_text(ETA)
    (tmp_path / "broken.py").write_text("import celery\ndef f(:\n")
    return tmp_path


def report(cli, cwd, fmt, *args):
    done = cli("--output-format", fmt, "--no-cache", *args, ".", cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def test_fingerprints_are_stable_and_unique(cli, project):
    before = json.loads(report(cli, project, "json"))
    prints = [f["fingerprint"] for f in before]
    assert all(isinstance(p, str) and len(p) == 32 for p in prints)
    assert len(set(prints)) == len(prints)  # two equal lines with equal findings still differ
    # lines added above, the code re-indented: the same fingerprints
    locks = project / "app" / "locks.py"
    locks.write_text("# a comment\n\n" + LOCKS.replace("def f(k):\n", "def f(k):\n  if k:\n").replace("\n    ", "\n      "))
    after = json.loads(report(cli, project, "json"))
    assert [f["line"] for f in after if f["path"] == "app/locks.py"] != [f["line"] for f in before if f["path"] == "app/locks.py"]
    assert sorted(f["fingerprint"] for f in after) == sorted(prints)
    # the flagged line edited: that finding's fingerprint changes, the others stay
    locks.write_text(LOCKS.replace('r.lock("lock-a")', 'r.lock("lock-c")'))
    edited = {f["fingerprint"] for f in json.loads(report(cli, project, "json"))}
    assert len(edited - set(prints)) == 1


def test_json_lines_holds_the_json_objects(cli, project):
    whole = json.loads(report(cli, project, "json"))
    lines = report(cli, project, "json-lines").splitlines()
    assert [json.loads(line) for line in lines] == whole and len(whole) >= 4
    (project / "app" / "locks.py").write_text('import redis\nr = redis.Redis()\n"\u2028"; r.lock("x")\n')
    text = report(cli, project, "json-lines", "--select", "CL203")
    assert "\u2028" not in text and len(text.splitlines()) == 1 == len(text.split("\n")) - 1
    assert report(cli, project, "json-lines", "--select", "CL115") == ""  # nothing found: no line


def test_junit_is_what_jenkins_and_gitlab_read(cli, project):
    root = ET.fromstring(report(cli, project, "junit"))
    findings = json.loads(report(cli, project, "json"))
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert sorted(s.get("name") for s in suites) == sorted({f["path"] for f in findings})
    cases = [c for s in suites for c in s.findall("testcase")]
    assert len(cases) == len(findings) == int(root.get("tests"))
    assert int(root.get("failures")) == sum(len(s.findall("testcase/failure")) for s in suites)
    for suite in suites:
        assert int(suite.get("tests")) == len(suite.findall("testcase"))
        assert int(suite.get("failures")) == len(suite.findall("testcase/failure"))
        for case in suite.findall("testcase"):
            assert case.get("name") and case.get("classname") == suite.get("name") and case.get("file") == suite.get("name")
            float(case.get("time"))
            [failure] = case.findall("failure")
            assert failure.get("type", "").startswith("CL") and failure.get("message")
            assert f"{case.get('file')}:{case.get('line')}:" in failure.text
    lock = next(c for c in cases if "CL203" in c.get("name"))
    assert "fix (unsafe): add `timeout=60`" in lock.find("failure").text
    # a clean run is one passing test case
    clean = ET.fromstring(report(cli, project, "junit", "--select", "CL115"))
    [case] = clean.findall("testsuite/testcase")
    assert not list(case) and clean.get("failures") == "0"


def test_junit_survives_control_characters(cli, tmp_path):
    (tmp_path / "x.py").write_text('import redis\nr = redis.Redis()\nr.lock("a\\x1b[31m\x01b")\n'.replace("\\x1b", "\x1b"))
    text = report(cli, tmp_path, "junit")
    root = ET.fromstring(text)  # would raise on a raw control character
    assert len(root.findall("testsuite/testcase/failure")) == 1


def test_gitlab_code_quality_fields(cli, project):
    issues = json.loads(report(cli, project, "gitlab"))
    findings = json.loads(report(cli, project, "json"))
    assert len(issues) == len(findings) >= 4
    for issue, finding in zip(issues, findings):
        assert isinstance(issue["description"], str) and finding["message"] in issue["description"]
        assert issue["check_name"] == finding["code"]
        assert issue["fingerprint"] == finding["fingerprint"]
        assert issue["severity"] in GITLAB_SEVERITIES
        assert issue["location"]["path"] == finding["path"] and not issue["location"]["path"].startswith("/")
        assert isinstance(issue["location"]["lines"]["begin"], int) and issue["location"]["lines"]["begin"] >= 1
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    severity = {f["severity"]: i["severity"] for i, f in zip(issues, findings)}
    assert severity.get("error", "major") == "major" and severity.get("warning", "minor") == "minor"
    assert json.loads(report(cli, project, "gitlab", "--select", "CL115")) == []


def validate_rdjson(document):
    import jsonschema

    schema = json.loads(RDJSON_SCHEMA.read_text())
    jsonschema.validators.validator_for(schema)(schema).validate(document)


def test_rdjson_is_valid_for_reviewdog(cli, project):
    document = json.loads(report(cli, project, "rdjson"))
    validate_rdjson(document)
    assert document["source"]["name"] == "celerylint"
    findings = json.loads(report(cli, project, "json"))
    assert len(document["diagnostics"]) == len(findings)
    lock = next(d for d in document["diagnostics"] if d["location"]["range"]["start"]["line"] == 7)
    assert lock["code"]["value"] == "CL203" and lock["severity"] in ("ERROR", "WARNING", "INFO")
    # columns are UTF-8 bytes: '    x = "😀"; ' is 13 code points, 16 bytes
    assert lock["location"]["range"]["start"]["column"] == 17
    assert lock["location"]["range"]["end"]["column"] == 17 + len('r.lock("lock-a")')
    [suggestion] = lock["suggestions"]
    assert suggestion["text"] == 'r.lock("lock-a", timeout=60)'
    # the schema is not a formality: a wrong severity is rejected
    import jsonschema

    with pytest.raises(jsonschema.ValidationError):
        validate_rdjson({"diagnostics": [{**lock, "severity": "warning"}]})


def test_rdjson_suggestions_give_what_fix_writes(cli, tmp_path):
    (tmp_path / "x.py").write_text(LOCKS)
    document = json.loads(report(cli, tmp_path, "rdjson", "--select", "CL203"))
    data = (tmp_path / "x.py").read_bytes()
    lines = data.split(b"\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    edits = []
    for d in document["diagnostics"]:
        for s in d.get("suggestions", []):
            r = s["range"]
            offset = [starts[p["line"] - 1] + p["column"] - 1 for p in (r["start"], r["end"])]
            edits.append((offset[0], offset[1], s["text"].encode()))
    for start, end, text in sorted(edits, reverse=True):
        data = data[:start] + text + data[end:]
    cli("--fix", "--unsafe-fixes", "--select", "CL203", ".", cwd=tmp_path)
    assert data == (tmp_path / "x.py").read_bytes()


def test_doctor_reports_in_every_format(server, tmp_path):
    """``celerylint doctor`` on a real broker: its findings (placed at the
    line that sets the broker URL) in the formats of the static run."""
    from test_doctor import doctor, project
    from test_sarif import validate

    server.admin.config_set("maxmemory-policy", "allkeys-lru")
    root = project(tmp_path, server.url())
    out = {}
    for fmt in ("full", "concise", "grouped", "json", "json-lines", "junit", "gitlab", "rdjson", "sarif", "github"):
        done = doctor(root, "--output-format", fmt)
        assert done.returncode == 1, (fmt, done.stderr)
        out[fmt] = done.stdout
    assert "proj.py:5:" in out["full"] and "5 | app.conf.broker_url = " in out["full"] and "^ CL150" in out["full"]
    assert "on 1 broker checked" in out["full"].splitlines()[-1]
    assert out["concise"].startswith("proj.py:5:") and "CL150 [broker-eviction-policy]" in out["grouped"]
    codes = sorted(f["code"] for f in json.loads(out["json"]))
    assert sorted(json.loads(line)["code"] for line in out["json-lines"].splitlines()) == codes
    assert sorted(f.get("type") for f in ET.fromstring(out["junit"]).iter("failure")) == [c for c in codes if c != "CL155"]
    issues = json.loads(out["gitlab"])
    assert sorted(i["check_name"] for i in issues) == codes and all(i["severity"] in GITLAB_SEVERITIES for i in issues)
    validate_rdjson(json.loads(out["rdjson"]))
    validate(json.loads(out["sarif"]))
    assert out["github"].startswith("::warning file=proj.py,line=5")
