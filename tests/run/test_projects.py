"""``run.projects.check``: the entry point editors use, with an overlay of
unsaved texts, and several projects in one run."""

from __future__ import annotations

from pathlib import Path

from conftest import write_file

from celerylint.config.roots import Roots
from celerylint.registry import known_codes
from celerylint.run.projects import check

TASKS = "from celery import shared_task\n\n\n@shared_task\ndef send(user_id):\n    return user_id\n"
VIEWS = "from proj.tasks import send\n\n\ndef view(user_id):\n    send.delay(user_id, 2)\n"


def project(root: Path) -> Path:
    write_file(root, "pyproject.toml", "[project]\nname = 'proj'\n")
    write_file(root, "proj/__init__.py", "")
    write_file(root, "proj/tasks.py", TASKS)
    write_file(root, "proj/views.py", "def view(user_id):\n    return user_id\n")
    return root


def test_an_overlay_is_linted_in_the_project_view_and_never_written(tmp_path, monkeypatch):
    root = project(tmp_path / "p")
    monkeypatch.chdir(root)
    views = Path("proj/views.py")
    result = check([views], Roots(Path.cwd(), known_codes()), overlay={views: VIEWS.encode()})
    # the call in the unsaved text is checked against the task of another file
    assert {(f.code, f.path, f.line) for f in result.findings} == {("CL213", "proj/views.py", 5)}
    assert result.texts == {"proj/views.py": VIEWS}
    assert (root / "proj/views.py").read_text() == "def view(user_id):\n    return user_id\n"
    # a buffer of a file not yet on disk
    new = Path("proj/new.py")
    result = check([new], Roots(Path.cwd(), known_codes()), overlay={new: VIEWS.encode()})
    assert {(f.code, f.path) for f in result.findings} == {("CL213", "proj/new.py")}
    assert not new.exists()


def test_two_projects_in_one_run_each_with_its_settings(tmp_path, monkeypatch):
    project(tmp_path / "a")
    project(tmp_path / "b")
    write_file(tmp_path / "b", "celerylint.toml", "ignore = ['CL213']\n")
    for name in ("a", "b"):
        write_file(tmp_path / name, "proj/views.py", VIEWS)
    monkeypatch.chdir(tmp_path)
    result = check([Path("a"), Path("b")], Roots(Path.cwd(), known_codes()))
    assert {(f.code, f.path) for f in result.findings} == {("CL213", "a/proj/views.py")}
