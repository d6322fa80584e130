"""The hooks in .pre-commit-hooks.yaml, installed and run by the real pre-commit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, shared_by_the_run

BAD = "import redis\nr = redis.Redis()\n\ndef f():\n    with r.lock('lock:nightly'):\n        pass\n"
GOOD = "import redis\nr = redis.Redis()\n\ndef f():\n    with r.lock('lock:nightly', timeout=60):\n        pass\n"


def pre_commit() -> list[str]:
    exe = Path(sys.executable).with_name("pre-commit")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "pre_commit"]


@pytest.fixture(scope="session")
def home(tmp_path_factory) -> tuple[Path, Path]:
    """pre-commit's home and a configuration naming this checkout, as it
    stands, at a commit: as a user's ``.pre-commit-config.yaml`` names the
    hooks' repository.  The hooks' environment is installed by the first
    run, once for all tests and test processes (pre-commit locks its home);
    ``try-repo`` would install it again for every run."""
    if not (REPO / ".git").exists():
        pytest.skip("pre-commit needs this checkout to be a git repository")
    with shared_by_the_run(tmp_path_factory, "pre-commit") as shared:
        config = shared / "pre-commit-config.yaml"
        if not config.exists():
            rev = _snapshot(REPO, shared / "hooks-repo")
            config.write_text(f"repos:\n- repo: {shared / 'hooks-repo'}\n  rev: {rev}\n"
                              "  hooks:\n  - id: celerylint\n  - id: celerylint-fix\n")
        return shared / "pre-commit-home", config


def _snapshot(checkout: Path, target: Path) -> str:
    """A clone of ``checkout`` with its uncommitted and untracked files
    committed (what ``try-repo`` does), and the commit's name."""
    def git(*args: str, cwd: Path = target, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, **kw)

    git("clone", "-q", str(checkout), str(target), cwd=checkout)
    diff = git("diff", "HEAD", "--binary", cwd=checkout).stdout
    if diff:
        git("apply", input=diff)
    for name in git("ls-files", "-z", "--others", "--exclude-standard", cwd=checkout).stdout.split(b"\0"):
        if name:
            (target / name.decode()).parent.mkdir(parents=True, exist_ok=True)
            (target / name.decode()).write_bytes((checkout / name.decode()).read_bytes())
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "snapshot")
    return git("rev-parse", "HEAD").stdout.decode().strip()


def run_hook(home: tuple[Path, Path], work: Path, hook: str, *files: str) -> subprocess.CompletedProcess:
    store, config = home
    env = {**os.environ, "PRE_COMMIT_HOME": str(store), "NO_COLOR": "1"}
    chosen = ["--files", *files] if files else ["--all-files"]
    return subprocess.run(
        [*pre_commit(), "run", "--config", str(config), hook, *chosen, "--verbose"],
        cwd=work, env=env, capture_output=True, text=True, timeout=900,
    )


def make_repo(path: Path, text: str) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    (path / "jobs.py").write_text(text)
    subprocess.run(["git", "add", "jobs.py"], cwd=path, check=True)
    return path


def test_manifest_is_valid():
    done = subprocess.run([*pre_commit(), "validate-manifest", str(REPO / ".pre-commit-hooks.yaml")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_check_hook_fails_on_bad_file_and_passes_on_good(home, tmp_path):
    bad = run_hook(home, make_repo(tmp_path / "bad", BAD), "celerylint")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "CL203 [lock-without-ttl]" in bad.stdout
    good = run_hook(home, make_repo(tmp_path / "good", GOOD), "celerylint")
    assert good.returncode == 0, good.stdout + good.stderr


def test_fix_hook_applies_safe_fixes_only(home, tmp_path):
    work = make_repo(tmp_path / "fix", BAD)
    done = run_hook(home, work, "celerylint-fix")
    # the CL203 fix is unsafe: --fix alone leaves the file alone and reports it
    assert done.returncode == 1
    assert (work / "jobs.py").read_text() == BAD
    assert "CL203" in done.stdout


def project_repo(path: Path) -> Path:
    from test_focus import project

    project(path)
    subprocess.run(["git", "add", "-A"], cwd=path, check=True)
    return path


def test_a_commit_of_only_a_compose_file_runs_the_project_rules(home, tmp_path):
    done = run_hook(home, project_repo(tmp_path / "compose"), "celerylint", "docker-compose.yml")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "docker-compose.yml:4:46: CL106" in done.stdout
    # the findings in the files not committed are not this commit's
    assert "CL203" not in done.stdout and "CL101" not in done.stdout


def test_a_commit_of_one_file_is_judged_and_fixed_with_the_whole_project(home, tmp_path):
    work = project_repo(tmp_path / "views")
    done = run_hook(home, work, "celerylint", "proj/views.py")
    assert done.returncode == 1, done.stdout + done.stderr
    # the task lives in another file: its signature is known all the same
    assert "proj/views.py:5:5: CL213" in done.stdout
    fixed = run_hook(home, work, "celerylint-fix", "proj/views.py")
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr
    # the CL209 fix is safe because the task is known, so the fix hook applies it
    assert "send.apply_async((user_id, 2), countdown=10)" in (work / "proj/views.py").read_text()
    assert "r.lock('lock:send')" in (work / "proj/tasks.py").read_text()


def test_a_commit_of_one_task_file_gets_the_whole_project_finding(home, tmp_path):
    from test_invocation import FINDING, KITSUNE, tree

    work = tree(tmp_path / "kitsune", KITSUNE)
    subprocess.run(["git", "add", "-A"], cwd=work, check=True)
    done = run_hook(home, work, "celerylint", FINDING[1])
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{FINDING[1]}:{FINDING[2]}:" in done.stdout and FINDING[0] in done.stdout
