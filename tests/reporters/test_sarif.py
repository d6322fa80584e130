"""SARIF output: schema-valid, repo-relative, with rules, fingerprints and fixes."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import FIXTURES
from celerylint.reporters.fingerprint import line_hashes

SCHEMA = FIXTURES / "sarif" / "sarif-schema-2.1.0.json"  # OASIS' schema, shipped with the tests (its README)


def validate(document: dict) -> None:
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


def run_sarif(cli, cwd, *args, env=None):
    done = cli("--format", "sarif", *args, cwd=cwd, env=env)
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


def test_message_and_hint_are_sentences_and_help_text_is_plain(cli, project):
    run = run_sarif(cli, project, ".")["runs"][0]
    for result in run["results"]:
        text = result["message"]["text"]
        assert text.endswith((".", "?", "!")) and "Hint:" not in text
        assert not text[0].isalpha() or text[0].isupper()
    findings = {f["code"]: f for f in json.loads(cli("--format", "json", ".", cwd=project).stdout)}
    eta = next(r for r in run["results"] if r["ruleId"] == "CL206")
    hint = findings["CL206"]["hint"]
    assert eta["message"]["text"] == f"{findings['CL206']['message'][0].upper()}{findings['CL206']['message'][1:]}. " \
                                     f"{hint[0].upper()}{hint[1:]}."
    rule = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "CL203")
    plain, markdown = rule["help"]["text"], rule["help"]["markdown"]
    assert "## What it does" in markdown and "```python" in markdown and "`" in markdown
    assert "#" not in plain.split("\n")[0] and "```" not in plain and "`" not in plain and "](" not in plain
    assert plain.startswith("What it does\n") and "\n    r = redis.Redis()\n" in plain  # code indented
    assert "Redis SET command (NX, EX) (https://redis.io/docs/latest/commands/set/)" in plain


def test_region_snippet_and_context_region(cli, project):
    run = run_sarif(cli, project, ".")["runs"][0]
    lock = next(r for r in run["results"] if r["ruleId"] == "CL203")
    location = lock["locations"][0]["physicalLocation"]
    assert location["region"]["snippet"]["text"] == "r.set(f'lock:{k}', 1, nx=True)"
    context = location["contextRegion"]
    assert (context["startLine"], context["endLine"]) == (7, 8)  # the line before; the file ends after line 8
    assert context["snippet"]["text"] == "    # é😀\n    if r.set(f'lock:{k}', 1, nx=True):  x = 'é😀'; r.delete(f'lock:{k}')"


def fake_checkout(root, *, head="ref: refs/heads/feature/x", config="", packed=None, loose=True):
    git = root / ".git"
    (git / "refs" / "heads" / "feature").mkdir(parents=True)
    (git / "HEAD").write_text(head + "\n")
    (git / "config").write_text(config)
    if loose:
        (git / "refs" / "heads" / "feature" / "x").write_text("a" * 40 + "\n")
    if packed:
        (git / "packed-refs").write_text(packed)
    return git


def provenance(cli, root, *args, env=None):
    (root / "x.py").write_text("import redis\nr = redis.Redis()\nr.lock('lock-a')\n")
    document = run_sarif(cli, root, *args, ".", env=env)
    return document["runs"][0].get("versionControlProvenance")


def test_version_control_provenance_from_the_git_files(cli, tmp_path):
    config = ('[core]\n\tbare = false\n[remote "upstream"]\n\turl = https://example.com/other.git\n'
              '[remote "origin"]\n\turl = https://gitlab-ci-token:s3cr3t@gitlab.example.com/team/proj.git\n')
    fake_checkout(tmp_path, config=config)
    [vcs] = provenance(cli, tmp_path)
    assert vcs == {"repositoryUri": "https://gitlab.example.com/team/proj.git", "revisionId": "a" * 40,
                   "branch": "feature/x", "mappedTo": {"uriBaseId": "%SRCROOT%"}}


def test_provenance_packed_refs_detached_scp_remote_and_no_remote(cli, tmp_path):
    one = tmp_path / "one"
    fake_checkout(one, config='[remote "origin"]\n  url = git@github.com:acme/shop.git\n',
                  packed=f"# pack-refs with: peeled\n{'b' * 40} refs/heads/feature/x\n", loose=False)
    [vcs] = provenance(cli, one)
    assert (vcs["repositoryUri"], vcs["revisionId"], vcs["branch"]) == ("ssh://git@github.com/acme/shop.git", "b" * 40,
                                                                        "feature/x")
    two = tmp_path / "two"
    fake_checkout(two, head="c" * 40)
    [vcs] = provenance(cli, two)
    assert vcs["revisionId"] == "c" * 40 and "branch" not in vcs
    assert vcs["repositoryUri"] == two.resolve().as_uri()  # no remote: the checkout itself


def test_provenance_of_a_worktree_and_a_real_git_repository(cli, tmp_path):
    main = tmp_path / "main"
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(main)], check=True)
    (main / "a.py").write_text("x = 1\n")
    git = ["git", "-C", str(main), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    subprocess.run([*git, "remote", "add", "origin", "https://example.com/acme/main.git"], check=True)
    subprocess.run([*git, "worktree", "add", "-q", "-b", "side", str(tmp_path / "wt")], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    for root, branch in ((main, "trunk"), (tmp_path / "wt", "side")):
        [vcs] = provenance(cli, root)
        assert (vcs["repositoryUri"], vcs["revisionId"], vcs["branch"]) == ("https://example.com/acme/main.git", head,
                                                                            branch), root


def test_no_provenance_outside_git_or_with_a_damaged_git(cli, tmp_path):
    outside = tmp_path / "plain"
    outside.mkdir()
    assert provenance(cli, outside, "--no-cache") is None
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / ".git").write_text("gitdir: /nonexistent/path\n")
    assert provenance(cli, broken) is None
    # no git on PATH changes nothing: the files are read, no git process is run
    fake_checkout(tmp_path / "nogit")
    [vcs] = provenance(cli, tmp_path / "nogit", env={"PATH": ""})
    assert vcs["branch"] == "feature/x"


def test_provenance_through_a_relative_gitdir_file(cli, tmp_path):
    """A submodule's ``.git`` is a file naming its git directory relative to it."""
    store = tmp_path / "modules" / "sub"
    fake_checkout(store.parent / "tmp")  # build the layout, then move it where a submodule keeps it
    (store.parent / "tmp" / ".git").rename(store)
    (tmp_path / "modules" / "tmp").rmdir()
    (store / "config").write_text('[remote "origin"]\n\turl = ssh://deploy:pw@git.example.com:2222/acme/sub.git\n')
    checkout = tmp_path / "sub"
    checkout.mkdir()
    (checkout / ".git").write_text("gitdir: ../modules/sub\n")
    [vcs] = provenance(cli, checkout)
    assert (vcs["repositoryUri"], vcs["branch"]) == ("ssh://git.example.com:2222/acme/sub.git", "feature/x")
