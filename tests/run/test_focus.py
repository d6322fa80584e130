"""Runs on some files of a project (focus.py): the whole project is read,
what concerns the files named is reported, and only they are fixed."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

FILES = {
    "proj/__init__.py": "",
    "proj/celery.py": 'from celery import Celery\napp = Celery("proj", broker="redis://redis:6379/0")\n'
                      'app.config_from_object("proj.celeryconfig")\n',
    "proj/celeryconfig.py": 'task_serializer = "json"\n',
    "proj/tasks.py": "import redis\nfrom proj.celery import app\nr = redis.Redis()\n\n\n@app.task\n"
                     "def send(user_id):\n    with r.lock('lock:send'):\n        pass\n",
    "proj/views.py": "from proj.tasks import send\n\n\ndef view(user_id):\n    send.delay(user_id, 2, countdown=10)\n",
    "docker-compose.yml": "services:\n  redis:\n    image: redis\n"
                          "    command: redis-server --maxmemory-policy allkeys-lru\n",
}


def project(root: Path, git: bool = True) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    if git:
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def findings(cli, root: Path, *args: str) -> list[dict]:
    done = cli("--no-cache", "--format", "json", *args, cwd=root)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def where(found: list[dict]) -> set[tuple[str, str]]:
    return {(f["code"], f["path"]) for f in found}


def test_a_file_named_is_judged_with_the_whole_project(cli, tmp_path):
    root = project(tmp_path)
    whole = findings(cli, root, ".")
    named = findings(cli, root, "proj/views.py")
    # the task is defined in another file: the call is still checked against it
    assert where(named) == {("CL209", "proj/views.py"), ("CL213", "proj/views.py")}
    assert [f for f in whole if f["path"] == "proj/views.py"] == named
    # fix safety does not depend on which files were named
    assert {f["fix"]["safe"] for f in named if f["code"] == "CL209"} == {True}


def test_a_finding_whose_fix_edits_a_file_named_is_reported(cli, tmp_path):
    root = project(tmp_path)
    named = findings(cli, root, "proj/celeryconfig.py")
    # reported at the app, fixed in the configuration module named
    assert where(named) == {("CL101", "proj/celery.py"), ("CL103", "proj/celery.py")}
    assert {f["fix"]["path"] for f in named} == {"proj/celeryconfig.py"}


def test_a_compose_file_named_alone_runs_the_project_rules(cli, tmp_path):
    root = project(tmp_path)
    assert where(findings(cli, root, "docker-compose.yml")) == {("CL106", "docker-compose.yml")}
    # a launch file celerylint does not read as text only chooses what is reported
    (root / "Procfile").write_text("worker: celery -A proj worker\n")
    assert findings(cli, root, "Procfile") == []


def test_fixes_reach_only_the_files_named(cli, tmp_path):
    root = project(tmp_path)
    before = {rel: (root / rel).read_text() for rel in FILES}
    done = cli("--no-cache", "--fix", "--unsafe-fixes", "proj/views.py", cwd=root)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "apply_async((user_id, 2), countdown=10)" in (root / "proj/views.py").read_text()
    # CL203 in tasks.py and CL101 in celeryconfig.py have fixes too: left alone
    assert {rel: (root / rel).read_text() for rel in FILES if rel != "proj/views.py"} == \
        {rel: text for rel, text in before.items() if rel != "proj/views.py"}


def test_without_a_project_a_file_is_linted_alone(cli, tmp_path):
    root = project(tmp_path / "tree", git=False)
    (tmp_path / "elsewhere").mkdir()
    # no .git, configuration or pyproject.toml, and outside the working directory:
    # the task is not seen, CL213 is silent
    alone = findings(cli, tmp_path / "elsewhere", str(root / "proj/views.py"))
    assert {f["code"] for f in alone} == {"CL209"}
    # from the tree itself, the working directory stands for the project
    assert where(findings(cli, root, "proj/views.py")) == {("CL209", "proj/views.py"), ("CL213", "proj/views.py")}


def test_a_directory_named_is_linted_as_it_is(cli, tmp_path):
    root = project(tmp_path)
    found = findings(cli, root, "proj")
    assert ("CL106", "docker-compose.yml") not in where(found)
    assert ("CL203", "proj/tasks.py") in where(found)


def test_a_configuration_file_marks_the_project(cli, tmp_path):
    root = project(tmp_path / "repo")
    # a project in a subdirectory of the repository: its configuration file's
    (root / "other.py").write_text("from proj.tasks import send\nsend.delay(1, 2)\n")
    sub = tmp_path / "repo" / "proj"
    (sub / "pyproject.toml").write_text("[tool.celerylint]\n")
    (sub / "app2.py").write_text("from proj.tasks import send\nsend.delay(1, 2)\n")
    found = findings(cli, sub, "app2.py")
    # proj/ is read whole (the task is known), repo/other.py is not read
    assert where(found) == {("CL213", "proj/app2.py")}


def test_the_hooks_pass_the_files_that_choose_what_is_reported():
    from celerylint.run.focus import PROJECT_FILES

    hooks = (REPO / ".pre-commit-hooks.yaml").read_text()
    patterns = re.findall(r"^  files: '(.*)'$", hooks, re.M)
    assert len(patterns) == 2 and len(set(patterns)) == 1
    hook = re.compile(patterns[0])
    names = ["a/tasks.py", "x.pyi", "docker-compose.yml", "deploy/compose.prod.yaml", "redis.conf",
             "Procfile", "ops/Dockerfile.worker", "celery.service", "run-worker.sh", ".env", "setup.cfg",
             "README.md", "a/b.txt", "image.png", "tasks.pyc"]
    for name in names:
        base = name.rsplit("/", 1)[-1]
        expected = base.endswith((".py", ".pyi")) or PROJECT_FILES.match(base) is not None
        assert (hook.search(name) is not None) == expected, name


@pytest.mark.parametrize("name", ["docker-compose.yml", "redis.conf"])
def test_a_project_file_named_is_never_parsed_as_python(cli, tmp_path, name):
    (tmp_path / name).write_text("services: [\n")
    done = cli("--no-cache", "--format", "json", name)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout) == []


def test_a_warm_fix_of_one_file_fixes_what_it_holds_now(cli, tmp_path):
    root = project(tmp_path)
    for n in range(70):  # enough files for the stat index
        (root / f"proj/m{n}.py").write_text(f"X = {n}\n")
    env = {"CELERYLINT_CACHE_DIR": str(tmp_path / "cache")}
    assert cli(".", env=env, cwd=root).returncode == 1
    views = root / "proj/views.py"
    views.write_text(views.read_text().replace("countdown=10", "countdown=99"))
    done = cli("--fix", "proj/views.py", env=env, cwd=root)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "send.apply_async((user_id, 2), countdown=99)" in views.read_text()
    # the index served the rest: a second warm fix run changes nothing more
    again = cli("--fix", "proj/views.py", env=env, cwd=root)
    assert "proj/views.py:5:5: CL213" in again.stdout and "CL209" not in again.stdout
