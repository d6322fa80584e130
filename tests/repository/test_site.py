"""The documentation site and the README landing page: `mkdocs build
--strict` passes (a broken link or a missing page fails it), the README is
short and its commands and example output are true."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO

FIRST_COMMANDS = (
    "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/celerylint examples/shop",
    "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest -q",
)


def mkdocs(root: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=root, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1"})


def test_the_site_builds_strictly(tmp_path):
    done = mkdocs(REPO, tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    site = tmp_path / "site"
    assert (site / "rules" / "CL203" / "index.html").exists(), "the generated rule pages are served"
    configuration = (site / "configuration" / "index.html").read_text()
    assert "lock-ttl" in configuration and "respect-gitignore" in configuration and "unsafe-fixes" in configuration
    assert 'href="../rules/CL203/"' in configuration  # ../rules/ links point at the served pages
    for page in ("integrations", "getting-started", "cli", "decisions", "robustness", "doctor", "editors",
                 "invocation", "deployment", "precision", "performance", "show-apps", "output-formats"):
        assert (site / page / "index.html").exists(), page


def test_a_broken_link_fails_the_build(tmp_path):
    copy = tmp_path / "repo"
    copy.mkdir()
    for name in ("mkdocs.yml", "mkdocs_hooks.py"):
        shutil.copy(REPO / name, copy / name)
    for name in ("docs", "rules"):
        shutil.copytree(REPO / name, copy / name)
    with open(copy / "docs" / "integrations.md", "a") as page:
        page.write("\nSee [the missing page](missing.md).\n")
    done = mkdocs(copy, tmp_path / "site")
    assert done.returncode != 0 and "missing.md" in done.stdout + done.stderr


def test_the_readme_is_a_landing_page():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) < 250
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, re.DOTALL)
    assert tuple(blocks[:2]) == FIRST_COMMANDS, "the README's first two commands"
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme):
        if not target.startswith("http"):
            assert (REPO / target).exists(), target


def test_the_readme_example_output_is_true(cli):
    readme = (REPO / "README.md").read_text()
    example = readme.split("$ celerylint examples/shop\n", 1)[1].split("```", 1)[0]
    shown = [line for line in example.splitlines() if line != "..."]
    done = cli("examples/shop", cwd=REPO)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    first = lines.index(shown[0])
    assert lines[first:first + len(shown) - 2] == shown[:-2], "the finding shown, as printed"
    assert lines[-1] == shown[-1], "the summary line"


def test_the_home_page_example_output_is_true(cli):
    page = (REPO / "docs" / "index.md").read_text()
    example = page.split("$ celerylint --output-format concise examples/shop\n", 1)[1].split("```", 1)[0]
    shown = [line for line in example.splitlines() if line != "..."]
    printed = cli("--output-format", "concise", "examples/shop", cwd=REPO).stdout.splitlines()
    first = printed.index(shown[0])
    assert printed[first:first + 2] == shown[:2] and printed[-1] == shown[-1]


def test_every_configuration_key_is_documented():
    from celerylint.config.messages import KEY_DOCS, KEYS

    assert list(KEY_DOCS) == list(KEYS)
    page = (REPO / "docs" / "configuration.md").read_text()
    assert all(f"| `{key}` |" in page for key in KEYS)


def test_the_readme_configuration_snippet_is_valid(cli, tmp_path):
    readme = (REPO / "README.md").read_text()
    [snippet] = re.findall(r"```toml\n(.*?)```", readme, re.DOTALL)
    (tmp_path / "pyproject.toml").write_text(snippet)
    done = cli("--show-settings")
    assert done.returncode == 0, done.stderr
    assert 'extend-select = ["CL112"]' in done.stdout and "lock-ttl = 60" in done.stdout
