"""A project that pins Celery below 4 in its dependency files keeps
Celery 3's setting names: the rules about names (CL107, CL109, CL110) do
not judge it (domain/celeryconf/celery_version.py), as the real CLI shows
on a Django project in the shape of two public ones (hellolily,
django-redis-heroku), written anew."""

from __future__ import annotations

import json
import os

import pytest

from celerylint.domain.celeryconf.celery_version import bounded_below_4, requirement
from celerylint.run.runner import INDEX_MIN_FILES
from conftest import write_project as write

NAMES = ("CL107", "CL109", "CL110")

PROJECT = '''
    # file: proj/__init__.py
    # file: proj/celery.py
    import os
    from celery import Celery
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
    app = Celery("proj")
    app.config_from_object("django.conf:settings")
    # file: proj/settings.py
    BROKER_URL = "amqp://guest@rabbit:5672//"
    BROKER_HEARTBEET = 10
    CELERY_TASK_ACKS_LATE = True
'''


def name_findings(cli, root, *args, env=None):
    done = cli("--isolated", "--format", "json", "--select", ",".join(NAMES), *args, ".", cwd=root, env=env)
    assert done.returncode in (0, 1), done.stderr
    return sorted({f["code"] for f in json.loads(done.stdout)})


@pytest.mark.parametrize("path, text", [
    ("requirements.txt", "Django==1.11\n### Celery & Email ###\ncelery==3.1.18\n"),
    ("requirements/base.txt", "celery[redis]>=3.1,<4.0  # pinned\n"),
    ("requirements.pip", "celery==3.0.23\ndjango-celery==3.0.23\n"),  # the ``.pip`` convention (formhub)
    ("requirements/base.pip", "celery==3.1.25\n"),
    ("Pipfile", '[packages]\ncelery = "==3.1.25"\n'),
    ("pyproject.toml", '[tool.poetry.dependencies]\ncelery = {version = "^3.1", extras = ["redis"]}\n'),
    ("setup.py", "from setuptools import setup\nsetup(name='proj', install_requires=['celery~=3.1'])\n"),
])
def test_a_project_pinned_below_celery_4_keeps_its_names(cli, tmp_path, path, text):
    write(tmp_path, PROJECT, f"# file: {path}\n{text}")
    assert name_findings(cli, tmp_path, "--no-cache") == []


@pytest.mark.parametrize("files", [
    {"requirements.txt": "celery>=3.1\n"},  # allows 4 and later
    {"requirements.txt": "celery==3.1.25\n", "requirements/prod.txt": "celery==5.3.6\n"},
    {"requirements.txt": "django-celery==3.2.1\n"},  # another package
    {},
])
def test_celery_4_or_an_unknown_version_is_judged_by_the_current_names(cli, tmp_path, files):
    write(tmp_path, PROJECT, *(f"# file: {p}\n{t}" for p, t in files.items()))
    assert name_findings(cli, tmp_path, "--no-cache") == ["CL107", "CL109", "CL110"]


def test_a_changed_pin_changes_a_warm_run(cli, tmp_path):
    """The dependency files are part of the key of the project phase's
    findings in the stat index (a tree large enough to use it, its files
    older than the run, the cache outside it)."""
    root = tmp_path / "project"
    write(root, PROJECT, "# file: requirements.txt\ncelery==5.3.6\n")
    for i in range(INDEX_MIN_FILES):
        (root / "proj" / f"m{i}.py").write_text("X = 1\n")
    for path in root.rglob("*"):
        os.utime(path, (1_600_000_000, 1_600_000_000))
    cache = {"CELERYLINT_CACHE_DIR": str(tmp_path / "cache")}
    assert name_findings(cli, root, env=cache) == ["CL107", "CL109", "CL110"]
    requirements = root / "requirements.txt"
    requirements.write_text("celery==3.1.25\n")
    os.utime(requirements, (1_600_000_100, 1_600_000_100))
    assert name_findings(cli, root, env=cache) == []


@pytest.mark.parametrize("line, spec", [
    ("celery==3.1.18", "==3.1.18"),
    ("django-celery==3.2.1", None),
    ("celery-redbeat==2.0", None),
    ("celery_once==3.0", None),
    ("### Celery & Email ###", None),
    ("# celery==3.1", None),
    ("Run a celery worker", None),
    ('Celery[redis] >= 3.1, < 4 ; python_version < "3"', ">= 3.1, < 4 "),
    ('celery = "==3.1.25"', "==3.1.25"),
    ('celery = {version = "^3.1"}', "^3.1"),
    ('    "celery[redis]>=5.2,<6",', ">=5.2,<6"),
    ("celery", ""),
    ('  "celery",', ""),
])
def test_requirement_lines(line, spec):
    assert requirement(line) == spec


@pytest.mark.parametrize("spec, below", [
    ("==3.1.18", True), (">=3.1,<4", True), ("<4.0", True), ("<=3.1.26", True), ("~=3.1", True),
    ("^3.1", True), ("3.1.25", True), ("<4.0.1", False), (">=3.1", False), ("", False),
    ("==4.4.7", False), ("~=4.0", False), ("*", False),
])
def test_bounded_below_4(spec, below):
    assert bounded_below_4(spec) is below
