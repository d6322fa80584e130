"""Discovery respects what git ignores (issue 16, item 5): .gitignore files
at every level, negation, .git/info/exclude, ``respect-gitignore = false``,
and nothing of it outside a git repository.  The real CLI, ``--show-files``."""

from __future__ import annotations

import subprocess

import pytest

from celerylint.gitignore import GitIgnore


def tree(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


PROJECT = {
    ".gitignore": "gen/\n*_pb2.py\n!keep_pb2.py\n/top_only.py\n# a comment\n",
    "app/.gitignore": "local_settings.py\n",
    "app/tasks.py": "import celery\n",
    "app/local_settings.py": "import celery\n",
    "app/gen/made.py": "import celery\n",
    "app/api_pb2.py": "import celery\n",
    "app/keep_pb2.py": "import celery\n",
    "app/top_only.py": "import celery\n",  # /top_only.py names the top directory's file only
    "top_only.py": "import celery\n",
    "secret.py": "import celery\n",
    "docker-compose.yml": "services: {}\n",
    "gen.yml": "x: 1\n",
}


@pytest.fixture
def repo(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    tree(tmp_path, PROJECT)
    (tmp_path / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("secret.py\n")
    return tmp_path


def git_files(root):
    """What git itself lists as not ignored, for comparison."""
    out = subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=root, capture_output=True,
                         text=True, check=True).stdout.split()
    return sorted(p for p in out if p.endswith(".py") or p == "docker-compose.yml")


def test_discovery_agrees_with_git(cli, repo):
    shown = cli("--show-files", ".").stdout.split()
    assert shown == ["app/keep_pb2.py", "app/tasks.py", "app/top_only.py", "docker-compose.yml"]
    assert shown == git_files(repo)


def test_a_subdirectory_sees_the_ignore_files_above_it(cli, repo):
    assert cli("--show-files", "app", cwd=repo).stdout.split() == ["app/keep_pb2.py", "app/tasks.py", "app/top_only.py"]
    assert cli("--show-files", ".", cwd=repo / "app").stdout.split() == ["keep_pb2.py", "tasks.py", "top_only.py"]


def test_files_named_explicitly_are_linted(cli, repo):
    assert cli("--show-files", "app/local_settings.py").stdout.split() == ["app/local_settings.py"]
    done = cli("--no-cache", "--format", "json", "app/gen/made.py")
    assert done.returncode == 0, done.stderr


def test_respect_gitignore_false(cli, repo):
    (repo / "celerylint.toml").write_text("respect-gitignore = false\n")
    shown = cli("--show-files", ".").stdout.split()
    assert shown == sorted(["app/api_pb2.py", "app/gen/made.py", "app/keep_pb2.py", "app/local_settings.py",
                            "app/tasks.py", "app/top_only.py", "docker-compose.yml", "secret.py", "top_only.py"])
    (repo / "celerylint.toml").write_text("respect-gitignore = 1\n")
    done = cli("--show-files", ".")
    assert done.returncode == 2 and "respect-gitignore: expected true or false" in done.stderr


def test_outside_a_repository_gitignore_is_not_read(cli, tmp_path):
    tree(tmp_path, {".gitignore": "ignored.py\n", "ignored.py": "import celery\n", "kept.py": "import celery\n"})
    assert cli("--show-files", ".").stdout.split() == ["ignored.py", "kept.py"]


def test_ignored_findings_are_not_reported(cli, repo):
    (repo / "app" / "gen" / "made.py").write_text("import redis\nr = redis.Redis()\nwith r.lock('x'):\n    pass\n")
    assert cli("--no-cache", "--format", "json", ".").stdout.strip() == "[]"


def test_negated_directory_and_deeper_file_wins(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    tree(tmp_path, {".gitignore": "*.py\n!/src/\n", "src/.gitignore": "!*.py\n", "src/a.py": "", "b.py": ""})
    git = GitIgnore(str(tmp_path))
    top = git.enter(str(tmp_path), [".gitignore", "b.py"], None)
    assert git.ignored(top, "b.py", False) is True
    assert git.ignored(top, "src", True) is False
    src = git.enter(str(tmp_path / "src"), [".gitignore", "a.py"], git.child(top, "src"))
    assert git.ignored(src, "a.py", False) is False  # src/.gitignore re-includes it


def test_globs_of_every_kind_agree_with_git(cli, tmp_path):
    """The cheap per-directory tests (gitignore.py) must never hide a match
    pathspec would make: compared with git on patterns of every shape."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    ignore = "*.py[co]\na?c.py\n[ab]x.py\ndocs/*.py\n**/fixtures/\n.*\n!.keep.py\nsub/deep/\n*_gen*.py\n/lib/only.py\n"
    files = ["abc.py", "axc.py", "ax.py", "bx.py", "cx.py", "docs/conf.py", "docs/more/x.py", "app/docs/y.py",
             "a/fixtures/f.py", "fixtures.py", ".hidden.py", ".keep.py", "sub/deep/z.py", "sub/deeper/z.py",
             "m_gen1.py", "mgen.py", "lib/only.py", "app/lib/only.py", "ok.pyc.py", "x.pyw"]
    tree(tmp_path, {".gitignore": ignore, **{name: "import celery\n" for name in files}})
    assert cli("--show-files", ".").stdout.split() == git_files(tmp_path)
    assert "ax.py" not in git_files(tmp_path) and "cx.py" in git_files(tmp_path)  # the patterns took effect


def test_a_directory_named_explicitly_is_walked_with_the_patterns_inside(cli, tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    tree(tmp_path, {".gitignore": "gen/\n*_pb2.py\n", "gen/a.py": "", "gen/b_pb2.py": "", "gen/sub/c.py": ""})
    assert cli("--show-files", ".").stdout == ""
    assert cli("--show-files", "gen").stdout.split() == ["gen/a.py", "gen/sub/c.py"]
