"""One project, one answer: a file gets the findings of the whole-project
run however celerylint is invoked (config/roots.py, run/projects.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import write_file

# kitsune's shape: a git repository, the app and the Django settings in the
# package, tasks in a subpackage whose acks_late the app does not make safe
KITSUNE = {
    "pyproject.toml": "[project]\nname = 'site'\n",
    "site/__init__.py": "",
    "site/celery.py": "import os\nfrom celery import Celery\n"
                      "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'site.settings')\n"
                      "app = Celery('site')\napp.config_from_object('django.conf:settings', namespace='CELERY')\n",
    "site/settings.py": "CELERY_BROKER_URL = 'redis://localhost:6379/0'\n",
    "site/wiki/__init__.py": "",
    "site/wiki/tasks.py": "from celery import shared_task\n\n\n@shared_task(acks_late=True)\ndef translate(doc_id):\n"
                          "    return doc_id\n",
    "site/wiki/views.py": "def view():\n    return 1\n",
}
FINDING = ("CL102", "site/wiki/tasks.py", 4)


def tree(root: Path, files: dict[str, str], git: bool = True) -> Path:
    for rel, text in files.items():
        write_file(root, rel, text)
    if git:
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def found(done: subprocess.CompletedProcess) -> set[tuple[str, str, int]]:
    assert done.returncode in (0, 1), done.stderr
    return {(f["code"], f["path"], f["line"]) for f in json.loads(done.stdout)}


def concise(done: subprocess.CompletedProcess) -> set[tuple[str, str, int]]:
    assert done.returncode in (0, 1), done.stderr
    out = set()
    for line in done.stdout.splitlines():
        parts = line.split(":")
        if len(parts) > 3 and parts[3].strip().startswith("CL"):
            out.add((parts[3].split()[0], parts[0], int(parts[1])))
    return out


def test_every_invocation_gives_the_whole_project_finding(cli, tmp_path):
    root = tree(tmp_path / "repo", KITSUNE)
    json_args = ("--no-cache", "--output-format", "json")
    whole = found(cli(*json_args, cwd=root))
    assert FINDING in whole
    assert found(cli(*json_args, "site/wiki", cwd=root)) == {FINDING}
    assert found(cli(*json_args, "site/wiki/tasks.py", cwd=root)) == {FINDING}
    source = (root / "site/wiki/tasks.py").read_text()
    assert found(cli(*json_args, "-", "--stdin-filename", "site/wiki/tasks.py", cwd=root, input=source)) == {FINDING}
    # --stdin-filename alone reads standard input, as in ruff
    assert found(cli(*json_args, "--stdin-filename", "site/wiki/tasks.py", cwd=root, input=source)) == {FINDING}
    # from the subdirectory: the same finding, its path relative to where celerylint ran (human formats)
    inside = cli("--no-cache", "--output-format", "concise", ".", cwd=root / "site/wiki")
    assert concise(inside) == {("CL102", "tasks.py", 4)}
    # machine formats stay relative to the repository
    assert found(cli(*json_args, ".", cwd=root / "site/wiki")) == {FINDING}


def test_a_directory_named_reports_only_its_files(cli, tmp_path):
    root = tree(tmp_path / "repo", {**KITSUNE, "site/other/tasks.py": KITSUNE["site/wiki/tasks.py"]})
    assert ("CL102", "site/other/tasks.py", 4) in found(cli("--no-cache", "--output-format", "json", cwd=root))
    assert found(cli("--no-cache", "--output-format", "json", "site/wiki", cwd=root)) == {FINDING}
    done = cli("--no-cache", "site/wiki/views.py", cwd=root)
    assert done.returncode == 0 and "No findings in 1 file checked." in done.stdout


def test_stdin_text_replaces_the_file_on_disk(cli, tmp_path):
    root = tree(tmp_path / "repo", KITSUNE)
    edited = "from celery import shared_task\n# a comment the file on disk does not have\n\n\n" \
             "@shared_task(acks_late=True)\ndef translate(doc_id):\n    return doc_id\n"
    done = cli("--no-cache", "--output-format", "full", "--stdin-filename", "site/wiki/tasks.py", cwd=root,
               input=edited)
    assert done.returncode == 1, done.stderr
    # the position and the snippet are those of the text read
    assert "site/wiki/tasks.py:5:" in done.stdout
    assert "5 | @shared_task(acks_late=True)" in done.stdout.replace("  ", " ")
    fixed = cli("--no-cache", "--fix", "--unsafe-fixes", "--stdin-filename", "site/wiki/tasks.py", cwd=root,
                input=edited)
    assert fixed.stdout == edited.replace("acks_late=True)", "acks_late=True, reject_on_worker_lost=True)")
    diff = cli("--no-cache", "--diff", "--unsafe-fixes", "--stdin-filename", "site/wiki/tasks.py", cwd=root,
               input=edited)
    assert "+@shared_task(acks_late=True, reject_on_worker_lost=True)" in diff.stdout
    assert "a comment the file on disk does not have" in diff.stdout
    assert (root / "site/wiki/tasks.py").read_text() == KITSUNE["site/wiki/tasks.py"]  # never written


REDIS = {
    "app.py": "from celery import Celery\n\napp = Celery('proj', broker='redis://redis:6379/0')\n",
    "redis.conf": "maxmemory 100mb\nmaxmemory-policy allkeys-lru\n",
    "docker-compose.yml": "services:\n  redis:\n    image: redis\n  worker:\n    build: .\n"
                          "    command: celery -A app worker\n",
}


def test_stdin_named_as_a_project_file_is_never_read_as_python(cli, tmp_path):
    """LAION-AI/Open-Assistant's ``redis.conf`` files: a syntax error (CL001)
    was reported on standard input only."""
    root = tree(tmp_path / "repo", REDIS)
    json_args = ("--no-cache", "--output-format", "json")
    on_disk = {f for f in found(cli(*json_args, cwd=root)) if f[1] != "app.py"}
    assert on_disk == {("CL106", "redis.conf", 2)}
    for name in ("redis.conf", "docker-compose.yml"):
        text = REDIS[name]
        named = {f for f in found(cli(*json_args, name, cwd=root)) if f[1] == name}
        piped = found(cli(*json_args, "-", "--stdin-filename", name, cwd=root, input=text))
        assert piped == named == {f for f in on_disk if f[1] == name}
    # the text read stands for the file: its snippet, and its own policy
    edited = "# edited\n" + REDIS["redis.conf"]
    done = cli("--no-cache", "--stdin-filename", "redis.conf", cwd=root, input=edited)
    assert "redis.conf:3:18: CL106" in done.stdout and "1 | # edited" in done.stdout, done.stdout
    fixed = REDIS["redis.conf"].replace("allkeys-lru", "noeviction")
    assert found(cli(*json_args, "--stdin-filename", "redis.conf", cwd=root, input=fixed)) == set()
    # --fix gives the text back unchanged: nothing of a project file is fixed
    assert cli("--no-cache", "--fix", "--stdin-filename", "redis.conf", cwd=root, input=edited).stdout == edited


# plane's shape: no .git, the Python project in apps/api beside a web app
PLANE = {
    "apps/web/package.json": "{}\n",
    "apps/api/pyproject.toml": "[project]\nname = 'plane'\n",
    "apps/api/plane/__init__.py": "",
    "apps/api/plane/celery.py": KITSUNE["site/celery.py"].replace("site", "plane"),
    "apps/api/plane/settings.py": "CELERY_BROKER_URL = 'redis://localhost:6379/0'\n",
    "apps/api/plane/bgtasks/__init__.py": "",
    "apps/api/plane/bgtasks/email_task.py": KITSUNE["site/wiki/tasks.py"],
}
PLANE_FINDING = ("CL102", "apps/api/plane/bgtasks/email_task.py", 4)


def test_a_file_of_a_subproject_without_git_is_judged_with_its_project(cli, tmp_path):
    root = tree(tmp_path / "plane", PLANE, git=False)
    json_args = ("--no-cache", "--output-format", "json")
    assert PLANE_FINDING in found(cli(*json_args, cwd=root))
    assert found(cli(*json_args, "apps/api/plane/bgtasks/email_task.py", cwd=root)) == {PLANE_FINDING}
    assert found(cli(*json_args, "apps/api/plane/bgtasks", cwd=root)) == {PLANE_FINDING}
    # from inside the package: the project is apps/api (its pyproject.toml), not the working directory
    here = cli("--no-cache", "--output-format", "concise", "email_task.py", cwd=root / "apps/api/plane/bgtasks")
    assert concise(here) == {("CL102", "email_task.py", 4)}


def test_a_file_outside_any_project_is_linted_alone_and_says_so(cli, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    write_file(tmp_path / "lone", "tasks.py", KITSUNE["site/wiki/tasks.py"])
    done = cli("--no-cache", str(tmp_path / "lone" / "tasks.py"), cwd=tmp_path / "elsewhere")
    assert done.returncode == 0, done.stdout
    assert done.stderr.count("no project around it") == 1
    assert "configuration rules (CL1xx)" in done.stderr


SUB_CONFIG = {
    "svc/pyproject.toml": "[tool.celerylint]\nignore = ['CL2']\n",
    "svc/jobs.py": "import redis\nr = redis.Redis()\n\ndef f():\n    with r.lock('lock:x'):\n        pass\n",
    "top/jobs.py": "import redis\nr = redis.Redis()\n\ndef f():\n    with r.lock('lock:x'):\n        pass\n",
}


def test_a_configuration_in_a_subdirectory_applies_from_its_parent(cli, tmp_path):
    root = tree(tmp_path / "mono", SUB_CONFIG)
    json_args = ("--no-cache", "--output-format", "json")
    assert found(cli(*json_args, cwd=root)) == {("CL203", "top/jobs.py", 5)}
    assert found(cli(*json_args, "svc", cwd=root)) == set()
    assert found(cli(*json_args, "svc/jobs.py", cwd=root)) == set()
    assert found(cli(*json_args, "--isolated", "svc/jobs.py", cwd=root)) == {("CL203", "svc/jobs.py", 5)}
    shown = cli("--show-settings", "svc/jobs.py", cwd=root).stdout
    assert f'project = "{root / "svc"}"  # the configuration file {root / "svc/pyproject.toml"}' in shown
    assert 'ignore = ["CL2"]' in shown


def test_machine_paths_of_a_configured_tree_without_git_do_not_depend_on_the_directory(cli, tmp_path):
    """Without git, the configuration file pins the report root: JSON paths
    and fingerprints are the same from the top and from inside."""
    root = tree(tmp_path / "svc", {"pyproject.toml": "[tool.celerylint]\nselect = ['CL203']\n",
                                   "pkg/jobs.py": SUB_CONFIG["top/jobs.py"]}, git=False)

    def report(cwd: Path, *paths: str) -> set:
        done = cli("--no-cache", "--output-format", "json", *paths, cwd=cwd)
        assert done.returncode == 1, done.stderr
        return {(f["code"], f["path"], f["line"], f["fingerprint"]) for f in json.loads(done.stdout)}

    top = report(root)
    assert {f[:3] for f in top} == {("CL203", "pkg/jobs.py", 5)}
    assert report(root / "pkg") == top
    assert report(root / "pkg", "jobs.py") == top


def test_dot_celerylint_toml_comes_first(cli, tmp_path):
    root = tree(tmp_path / "p", {**SUB_CONFIG, "svc/.celerylint.toml": "ignore = ['CL1']\n"})
    assert found(cli("--no-cache", "--output-format", "json", "svc", cwd=root)) == {("CL203", "svc/jobs.py", 5)}


def test_a_run_on_one_file_leaves_the_cache_right_for_the_whole_project(cli, tmp_path):
    """The other files of a run on one file are read only for their facts
    (run/closure.py): such partial results must never stand for a whole
    file in the stat index."""
    filler = {f"site/mod{i}.py": f"def f{i}():\n    return {i}\n" for i in range(70)}
    root = tree(tmp_path / "repo", {**KITSUNE, **filler})
    lock = "import redis\nr = redis.Redis()\n\ndef g():\n    with r.lock('lock:x'):\n        pass\n"
    json_args = ("--output-format", "json")
    assert FINDING in found(cli(*json_args, cwd=root))  # fills the cache and the stat index
    changed = write_file(root, "site/mod3.py", lock)  # a file the run on tasks.py reads only for its facts
    os.utime(changed, (changed.stat().st_mtime - 10,) * 2)  # old enough for the stat index to keep it
    assert found(cli(*json_args, "site/wiki/tasks.py", cwd=root)) == {FINDING}
    warm = found(cli(*json_args, cwd=root))
    assert warm == found(cli("--no-cache", *json_args, cwd=root))
    assert ("CL203", "site/mod3.py", 5) in warm


def test_a_tasks_module_with_names_shaped_like_settings_is_judged_as_the_whole_project(cli, tmp_path):
    """A logger named ``task_logger`` does not make the module configuration
    (run/closure.py): the run on it reads the rest of the project for its
    facts only, and still finds the task class the app module gives."""
    app = KITSUNE["site/celery.py"].replace(
        "from celery import Celery\n", "from celery import Celery, Task\n\n\nclass Base(Task):\n"
        "    reject_on_worker_lost = True\n\n\n").replace("Celery('site')", "Celery('site', task_cls=Base)")
    head = "from celery import shared_task\nfrom celery.utils.log import get_task_logger\n\n" \
           "task_logger = get_task_logger(__name__)\nCELERY_RETRY_MAX = 5\n"
    files = {**KITSUNE, "site/celery.py": app,
             "site/wiki/tasks.py": head + "\n\n@shared_task(acks_late=True)\ndef translate(doc_id):\n    return doc_id\n",
             "site/wiki/late.py": head + "\n\n@shared_task(acks_late=True, base=object)\ndef f():\n    pass\n"}
    root = tree(tmp_path / "repo", files)
    json_args = ("--no-cache", "--output-format", "json")
    whole = found(cli(*json_args, cwd=root))
    assert ("CL102", "site/wiki/tasks.py", 8) not in whole  # the app's task class rejects on worker loss
    for rel in ("site/wiki/tasks.py", "site/wiki/late.py"):
        assert found(cli(*json_args, rel, cwd=root)) == {f for f in whole if f[1] == rel}
