"""The sample project under examples/: what the README's first command shows,
and that --fix --unsafe-fixes leaves it parseable, lock-safe and stable."""

from __future__ import annotations

import ast
import json
import shutil

from conftest import REPO

SAMPLE = REPO / "examples" / "shop"


def test_sample_reports_the_planted_bugs(cli):
    done = cli("--format", "json", "examples/shop", cwd=REPO)
    assert done.returncode == 1, done.stderr
    codes = {f["code"] for f in json.loads(done.stdout)}
    assert {"CL203", "CL206"} <= codes


def test_fix_unsafe_on_sample(cli, tmp_path):
    copy = tmp_path / "shop"
    shutil.copytree(SAMPLE, copy)
    done = cli("--fix", "--unsafe-fixes", "--format", "json", ".", cwd=copy)
    assert done.returncode in (0, 1), done.stderr
    left = json.loads(done.stdout)
    assert not [f for f in left if f["code"] == "CL203"]
    assert not [f for f in left if f["fix"] is not None], "every fixable finding was fixed"
    files = sorted(copy.rglob("*.py"))
    for path in files:
        ast.parse(path.read_text(), str(path))
    before = {p: p.read_bytes() for p in files}
    again = cli("--fix", "--unsafe-fixes", ".", cwd=copy)
    assert "Fixed" not in again.stdout
    assert before == {p: p.read_bytes() for p in files}
