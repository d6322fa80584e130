"""The server finds each file's project and configuration as the command
line does (config/roots.py): the same findings as ``celerylint FILE``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from lsprotocol import types

from lsp_client import Client, codes, session
from test_server import LOCK


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.mark.parametrize("top", [None, "[tool.celerylint]\n"], ids=["no-top-config", "top-config"])
def test_each_subproject_of_a_monorepo_gets_its_own_configuration(tmp_path, top):
    files = {
        "quiet/pyproject.toml": "[project]\nname = 'quiet'\n\n[tool.celerylint]\nignore = [\"CL203\"]\n",
        "quiet/quiet/tasks.py": LOCK,
        "loud/pyproject.toml": "[project]\nname = 'loud'\n",  # no [tool.celerylint]: not a configuration
        "loud/loud/tasks.py": LOCK,
    }
    if top is not None:  # the workspace's own configuration: ``loud`` is of its project, ``quiet`` is not
        files["pyproject.toml"] = top
    root = write(tmp_path / "workspace", files)
    quiet, loud = root / "quiet/quiet/tasks.py", root / "loud/loud/tasks.py"

    async def scenario(client: Client):
        quiet_uri, loud_uri = client.open(quiet), client.open(loud)
        assert "CL203" in codes(await client.diagnostics_for(loud_uri, lambda d: "CL203" in codes(d)))
        # a change judged with the projects read: still the subproject's own configuration
        client.replace(quiet_uri, LOCK + "\n")
        assert "CL203" not in codes(await client.diagnostics_for(quiet_uri))
        client.replace(loud_uri, LOCK + "\n")
        assert "CL203" in codes(await client.diagnostics_for(loud_uri))
        # a configuration file created: the projects are found again
        (root / "loud/.celerylint.toml").write_text("ignore = [\"CL203\"]\n")
        client.disk_changed(root / "loud/.celerylint.toml")
        assert "CL203" not in codes(await client.diagnostics_for(loud_uri, lambda d: "CL203" not in codes(d)))
        assert any("configuration changed" in m for m in client.logs)
        # whichever project was judged, ``quiet``'s file never showed its own configuration's ignored code
        assert not [d for d in client.history[quiet_uri] if "CL203" in codes(d)]

    client = session(root, scenario)
    assert not [m for m in client.logs if "no project around" in m]


# kitsune's shape: a git repository, the app and the Django settings in the
# package, tasks in a subpackage (a project-level CL102 and a CL203)
KITSUNE = {
    "pyproject.toml": "[project]\nname = 'site'\n",
    "site/__init__.py": "",
    "site/celery.py": "import os\nfrom celery import Celery\n"
                      "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'site.settings')\n"
                      "app = Celery('site')\napp.config_from_object('django.conf:settings', namespace='CELERY')\n",
    "site/settings.py": "CELERY_BROKER_URL = 'redis://localhost:6379/0'\n",
    "site/wiki/__init__.py": "",
    "site/wiki/tasks.py": "from celery import shared_task\n\n\n@shared_task(acks_late=True)\ndef translate(doc_id):\n"
                          "    return doc_id\n\n\n" + LOCK.replace("@shared_task\ndef run", "@shared_task\ndef lock"),
}


# plane's shape: no .git, the Python project in apps/api beside a web app
PLANE = {
    "apps/web/package.json": "{}\n",
    "apps/api/pyproject.toml": "[project]\nname = 'plane'\n",
    "apps/api/plane/__init__.py": "",
    "apps/api/plane/celery.py": KITSUNE["site/celery.py"].replace("site", "plane"),
    "apps/api/plane/settings.py": KITSUNE["site/settings.py"],
    "apps/api/plane/bgtasks/__init__.py": "",
    "apps/api/plane/bgtasks/email_task.py": KITSUNE["site/wiki/tasks.py"],
}


@pytest.mark.parametrize(("files", "git", "file"), [(KITSUNE, True, "site/wiki/tasks.py"),
                                                    (PLANE, False, "apps/api/plane/bgtasks/email_task.py")],
                         ids=["git", "no-git"])
def test_a_file_in_a_subdirectory_gets_the_command_lines_findings(tmp_path, cli, files, git, file):
    top = write(tmp_path / "repo", files)
    if git:
        subprocess.run(["git", "init", "-q"], cwd=top, check=True)
    done = cli("--no-cache", "--output-format", "json", file, cwd=top)
    assert done.returncode == 1, done.stderr
    expected = {(f["code"], f["line"], f["column"], f["message"]) for f in json.loads(done.stdout)}
    assert {"CL102", "CL203"} <= {code for code, *_ in expected}
    folder = (top / file).parent  # the editor opened on the file's directory, the server started there

    async def scenario(client: Client):
        uri = client.open(top / file)
        found = await client.diagnostics_for(uri, lambda d: "CL102" in codes(d))
        got = {(d.code, d.range.start.line + 1, d.range.start.character + 1, d.message) for d in found}
        assert got == expected

    session(folder, scenario)


def test_a_file_outside_any_project_is_linted_alone_and_says_so(tmp_path):
    root = write(tmp_path / "workspace", {"pyproject.toml": "[tool.celerylint]\nignore = [\"CL203\"]\n"})
    lone = write(tmp_path / "elsewhere", {"tasks.py": LOCK}) / "tasks.py"

    async def scenario(client: Client):
        uri = client.open(lone)
        assert "CL203" in codes(await client.diagnostics_for(uri, lambda d: "CL203" in codes(d))), \
            "the workspace's configuration is not the file's"
        client.replace(uri, LOCK + "\n")
        assert "CL203" in codes(await client.diagnostics_for(uri))
        assert len([m for m in client.logs if "no project around" in m and str(lone) in m]) == 1

    session(root, scenario)


def test_a_workspace_folder_added_then_removed_moves_the_files_project(tmp_path):
    """A folder with no project markers is a project only as a workspace
    folder (as a directory a command line runs in): its settings reach its
    tasks file once the folder is added, and no longer once it is removed."""
    root = write(tmp_path / "workspace", {"pyproject.toml": "[tool.celerylint]\n"})
    other = write(tmp_path / "other", {name: text for name, text in KITSUNE.items() if name != "pyproject.toml"})
    tasks = other / "site/wiki/tasks.py"
    folder = types.WorkspaceFolder(uri=other.as_uri(), name="other")

    async def scenario(client: Client):
        uri = client.open(tasks)
        alone = await client.diagnostics_for(uri, lambda d: "CL203" in codes(d))
        assert "CL102" not in codes(alone), "outside every folder the file has no project"
        client.lsp.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(added=[folder], removed=[])))
        assert "CL102" in codes(await client.diagnostics_for(uri, lambda d: "CL102" in codes(d)))
        client.lsp.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(added=[], removed=[folder])))
        assert "CL102" not in codes(await client.diagnostics_for(uri, lambda d: "CL102" not in codes(d)))

    session(root, scenario)
