"""Discovery respects what git ignores (issue 16, item 5): .gitignore files
at every level, negation, .git/info/exclude, ``respect-gitignore = false``,
and nothing of it outside a git repository.  The real CLI, ``--show-files``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from celerylint.run.gitignore import GitIgnore


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
    "app/sub/local_settings.py": "import celery\n",  # app/.gitignore applies below app
    "apps/local_settings.py": "import celery\n",  # and not to a sibling walked after it
    "b/xyz/local_settings.py": "import celery\n",
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
    assert shown == ["app/keep_pb2.py", "app/tasks.py", "app/top_only.py", "apps/local_settings.py",
                     "b/xyz/local_settings.py", "docker-compose.yml"]
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
                            "app/sub/local_settings.py", "app/tasks.py", "app/top_only.py", "apps/local_settings.py",
                            "b/xyz/local_settings.py", "docker-compose.yml", "secret.py", "top_only.py"])
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
    assert git.directory(str(tmp_path), ["src"], [".gitignore", "b.py"]) == {"b.py"}  # not src: !/src/ re-includes it
    assert not git.directory(str(tmp_path / "src"), [], [".gitignore", "a.py"])  # src/.gitignore re-includes a.py


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


VERDICT_PATTERNS = [
    "*.py[co]", "a?c.py", "[ab]x.py", "docs/*.py", "**/fixtures/", ".*", "!.keep.py", "sub/deep/", "*_gen*.py",
    "/lib/only.py", "build/", "!build/keep/", "*.log", "!important.log", "logs/**", "!logs/**/", "a/**/b.py",
    "\\#literal.py", "trailing\\ ", "node_modules", "!/node_modules/kept.py", "x/", "!x/y.py", "[!a]*.txt",
]
VERDICT_PATHS = [
    "abc.py", "axc.py", "ax.py", "cx.py", "docs/conf.py", "docs/more/x.py", "app/docs/y.py", "a/fixtures/f.py",
    "fixtures/", "a/fixtures/", ".hidden.py", ".keep.py", ".github/", "sub/deep/", "sub/deep/z.py", "m_gen1.py",
    "lib/only.py", "app/lib/only.py", "build/", "build/keep/", "build/keep/k.py", "app/build/", "x.log",
    "important.log", "logs/a.py", "logs/sub/", "a/b.py", "a/c/d/b.py", "#literal.py", "trailing ", "node_modules/",
    "node_modules/kept.py", "x/", "x/y.py", "x/z.py", "b.txt", "a.txt", "plain.py", "src/app/tasks.py",
]


def test_the_verdict_is_pathspecs():
    """gitignore_patterns.py decides over pathspec's translations without
    importing pathspec on a warm run: its verdict must be GitIgnoreSpec's,
    for every pattern and path here, from every prefix of the list (so that
    later patterns overriding earlier ones are covered)."""
    from pathspec import GitIgnoreSpec

    from celerylint.run.gitignore_patterns import Patterns, translate

    for end in range(1, len(VERDICT_PATTERNS) + 1):
        lines = VERDICT_PATTERNS[:end]
        spec, ours = GitIgnoreSpec.from_lines(lines), Patterns(translate(lines))
        for path in VERDICT_PATHS:
            assert ours.verdict(path) == spec.check_file(path).include, (lines, path)


def test_a_warm_run_does_not_import_pathspec_and_sees_an_edited_gitignore(cli, repo):
    (repo / "app" / "gen" / "made.py").write_text("import redis\nr = redis.Redis()\nwith r.lock('x'):\n    pass\n")
    cached = repo / ".celerylint_cache" / "gitignore-patterns.json"

    def run():
        done = subprocess.run([sys.executable, "-X", "importtime", "-m", "celerylint", "--exit-zero", "--output-format",
                            "concise", "."], cwd=repo, capture_output=True, text=True, check=True)
        return " pathspec" in done.stderr, done.stdout

    imported, cold = run()
    assert imported and cached.is_file() and "made.py" not in cold
    imported, warm = run()
    assert not imported and warm == cold
    (repo / ".gitignore").write_text("*_pb2.py\n")  # gen/ no longer ignored
    imported, edited = run()
    assert imported and "app/gen/made.py:3:6: CL203" in edited  # a new text: translated again


def test_a_broken_memo_is_a_miss(cli, repo):
    """The memo (gitignore_patterns.py) is read like the result cache:
    anything not of the shape written is a miss, never a failure."""
    (repo / "app" / "gen" / "made.py").write_text("import redis\nr = redis.Redis()\nwith r.lock('x'):\n    pass\n")
    from test_prefilter_cache import age

    cached = repo / ".celerylint_cache" / "gitignore-patterns.json"
    cli("--exit-zero", ".")
    age(repo)
    cli("--exit-zero", ".")
    written = json.loads(cached.read_text())
    stamp, text = written["stamp"], (repo / ".gitignore").read_text()
    good = written["files"][text]

    def memo(files=None, chains=None, **changed):
        return json.dumps({"stamp": stamp, "files": {text: {**good, **changed}} if files is None else files,
                           "chains": {} if chains is None else chains})

    chain = next(key for key, seen in written["chains"].items() if "app/" in seen)
    app = written["chains"][chain]["app/"][0]  # app's stat, as written: what a broken verdict would be used for
    for broken in ("{not json", "[]", json.dumps({**written, "stamp": "elsewhere", "files": {text: []}}),
                   memo(rules=[[1]]), memo(rules=[["^x$", "0", True]]), memo(needles=[]), memo(literals="gen"),
                   memo(tops=[1]), memo(files=3), memo(chains=3),
                   memo(chains={chain: {"app/": app}}), memo(chains={chain: {"app/": [app, "gen"]}}),
                   memo(chains={chain: {"app/": [app, [1]]}}), memo(chains={chain: {"app/": [app, ["gen"], 1]}})):
        cached.write_text(broken)
        done = cli("--output-format", "concise", ".")
        assert done.returncode == 0 and "made.py" not in done.stdout, (broken, done.stdout, done.stderr)


def test_a_warm_run_writes_nothing_and_a_changed_directory_is_judged_again(cli, repo):
    """A directory's verdict is remembered with its ``stat``: a warm run
    rewrites no memo, and a file added to a directory walked before is judged
    afresh, even when the directory's mtime is set back (its ctime moves)."""
    from test_prefilter_cache import age

    cached = repo / ".celerylint_cache" / "gitignore-patterns.json"
    lock = "import redis\nr = redis.Redis()\nwith r.lock('x'):\n    pass\n"

    def flagged():
        out = cli("--exit-zero", "--output-format", "concise", ".").stdout
        return sorted({line.split(":")[0] for line in out.splitlines() if ": CL203" in line})

    tree(repo, {"app/tasks.py": lock, "app/gen/made.py": lock})
    cli("--exit-zero", ".")  # makes the cache directory
    age(repo)  # a directory changed in the last two seconds is not remembered
    assert flagged() == ["app/tasks.py"]
    before = cached.stat().st_mtime_ns
    assert "app/" in json.dumps(json.loads(cached.read_text())["chains"])
    assert flagged() == ["app/tasks.py"] and cached.stat().st_mtime_ns == before
    app = repo / "app"
    st = app.stat()
    tree(repo, {"new_pb2.py": lock, "app/other_pb2.py": lock, "app/gen2/x.py": lock, "local_settings.py": lock,
                "app/local_settings.py": lock})
    os.utime(app, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert flagged() == ["app/gen2/x.py", "app/tasks.py", "local_settings.py"]
