"""``celerylint server`` driven by a real LSP client over stdio (pygls'),
as an editor drives it: the server is the real command in a subprocess."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from lsp_client import Client, apply, codes, edits_of, session

LOCK = '''\
import uuid
import redis
from celery import shared_task

r = redis.Redis()


@shared_task
def run(job):
    r.set(f"job:{job}", str(uuid.uuid4()), nx=True)
'''

APP = '''\
from celery import Celery

app = Celery("proj")
app.config_from_object("proj.settings")


@app.task
def add(x, y):
    return x + y
'''

SETTINGS = 'broker_url = "redis://localhost:6379/0"\n'


def project(root: Path, files: dict[str, str], config: str = "[tool.celerylint]\n") -> Path:
    (root / "pyproject.toml").write_text(config)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_lock_without_ttl_is_reported_fixed_through_the_client_and_goes(tmp_path):
    root = project(tmp_path, {"proj/__init__.py": "", "proj/tasks.py": LOCK})
    tasks = root / "proj" / "tasks.py"

    async def scenario(client: Client):
        uri = client.open(tasks)
        found = await client.diagnostics_for(uri, lambda d: "CL203" in codes(d))
        lock = next(d for d in found if d.code == "CL203")
        assert (lock.range.start.line, lock.range.start.character) == (9, 4)
        assert lock.source == "celerylint" and lock.code_description.href.endswith("rules/CL203.md")
        actions = await client.code_actions(uri, lock)
        titles = [a.title for a in actions]
        assert "CL203: add `ex=60` (unsafe)" in titles and "CL203: disable for this line" in titles
        fix = next(a for a in actions if a.title.endswith("(unsafe)"))
        assert fix.kind == types.CodeActionKind.QuickFix and not fix.is_preferred
        fixed = apply(LOCK, edits_of(fix)[uri])
        assert 'nx=True, ex=60)' in fixed
        assert not tasks.read_text() != LOCK, "the server never writes a file itself"
        client.replace(uri, fixed)
        assert "CL203" not in codes(await client.diagnostics_for(uri))

    session(root, scenario)


def test_noqa_action_merges_into_the_line_and_hover_shows_the_rule(tmp_path):
    root = project(tmp_path, {"proj/tasks.py": LOCK.replace("nx=True)", "nx=True)  # keep: E501")})
    tasks = root / "proj" / "tasks.py"

    async def scenario(client: Client):
        uri = client.open(tasks)
        lock = next(d for d in await client.diagnostics_for(uri, lambda d: "CL203" in codes(d)) if d.code == "CL203")
        hover = await asyncio.wait_for(client.lsp.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=lock.range.start)), 30)
        assert "## Why is this bad?" in hover.contents.value and "CL203" in hover.contents.value
        nothing = await client.lsp.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0)))
        assert nothing is None
        noqa = next(a for a in await client.code_actions(uri, lock) if a.title == "CL203: disable for this line")
        text = apply(tasks.read_text(), edits_of(noqa)[uri])
        assert 'nx=True)  # keep: E501  # noqa: CL203\n' in text
        client.replace(uri, text)
        assert "CL203" not in codes(await client.diagnostics_for(uri))

    session(root, scenario)


def test_fix_all_applies_the_safe_fixes_only(tmp_path):
    stale = LOCK.replace("nx=True)", "nx=True, ex=30)") + "\nx = 1  # noqa: CL203\n"
    root = project(tmp_path, {"proj/tasks.py": stale}, config='[tool.celerylint]\nextend-select = ["CL002"]\n')
    tasks = root / "proj" / "tasks.py"

    async def scenario(client: Client):
        uri = client.open(tasks)
        found = await client.diagnostics_for(uri, lambda d: "CL002" in codes(d))
        unused = next(d for d in found if d.code == "CL002")
        assert list(unused.tags) == [types.DiagnosticTag.Unnecessary]
        actions = await client.code_actions(uri, unused, only=["source.fixAll"])
        assert [a.kind for a in actions] == ["source.fixAll.celerylint"]
        fixed = apply(stale, edits_of(actions[0])[uri])
        assert fixed.endswith("\nx = 1\n") and "ex=30" in fixed
        client.replace(uri, fixed)
        assert codes(await client.diagnostics_for(uri)) == []

    session(root, scenario)


def test_a_settings_change_moves_the_configuration_finding_in_the_open_tasks_file(tmp_path):
    root = project(tmp_path, {"proj/__init__.py": "", "proj/tasks.py": APP, "proj/settings.py": SETTINGS})
    tasks, settings = root / "proj" / "tasks.py", root / "proj" / "settings.py"

    async def scenario(client: Client):
        uri = client.open(tasks)
        found = await client.diagnostics_for(uri, lambda d: "CL101" in codes(d))
        acks = next(d for d in found if d.code == "CL101")
        # its fix edits the settings module, through the client
        fix = next(a for a in await client.code_actions(uri, acks) if a.title.startswith("CL101: add"))
        assert list(edits_of(fix)) == [settings.as_uri()]
        assert apply(SETTINGS, edits_of(fix)[settings.as_uri()]).endswith("task_acks_late = True\n")
        # saved on disk, seen through the file watcher: CL101 goes, and with
        # acks_late on, the missing task_reject_on_worker_lost (CL102) comes
        settings.write_text(SETTINGS + "task_acks_late = True\n")
        client.disk_changed(settings)
        found = await client.diagnostics_for(uri, lambda d: "CL101" not in codes(d), version=1)
        assert "CL102" in codes(found)
        # an unsaved buffer of the settings module replaces the file on disk:
        # acks_late off again, reported at the assignment in the buffer
        settings_uri = client.open(settings)
        client.replace(settings_uri, SETTINGS + "task_acks_late = False\n")
        await client.diagnostics_for(uri, lambda d: "CL102" not in codes(d), version=1)
        assert codes(await client.diagnostics_for(settings_uri)) == ["CL101"]
        # closed without saving: the disk again
        client.close(settings_uri)
        await client.diagnostics_for(uri, lambda d: "CL102" in codes(d), version=1)
        assert not client.diagnostics[settings_uri].diagnostics

    session(root, scenario)


def test_a_syntax_error_mid_typing_is_survived_and_recovered_from(tmp_path):
    root = project(tmp_path, {"proj/tasks.py": LOCK})
    tasks = root / "proj" / "tasks.py"

    async def scenario(client: Client):
        uri = client.open(tasks)
        await client.diagnostics_for(uri, lambda d: "CL203" in codes(d))
        client.replace(uri, LOCK.replace("nx=True)", "nx=True, ex=(") + "\n\n@shared_task\ndef other(:\n")
        broken = await client.diagnostics_for(uri)
        assert set(codes(broken)) <= {"CL001"}
        client.replace(uri, LOCK + "\x00\ufeff\udcff")  # not even text Python accepts
        await client.diagnostics_for(uri)
        client.replace(uri, LOCK)
        assert "CL203" in codes(await client.diagnostics_for(uri))

    session(root, scenario)


def test_configuration_errors_deleted_files_and_overrides(tmp_path):
    root = project(tmp_path, {"proj/tasks.py": LOCK, "proj/helpers.py": "import redis\nr = redis.Redis()\n"})
    tasks, helpers = root / "proj" / "tasks.py", root / "proj" / "helpers.py"

    async def scenario(client: Client):
        uri = client.open(tasks)
        assert "CL203" not in codes(await client.diagnostics_for(uri)), "ignored by initializationOptions"
        (root / "pyproject.toml").write_text("[tool.celerylint]\nselect = [\n")
        client.disk_changed(root / "pyproject.toml")
        client.replace(uri, LOCK + "\n")
        assert not await client.diagnostics_for(uri)
        assert any("pyproject.toml" in m for m in client.logs)
        helpers.unlink()
        client.disk_changed(helpers, kind=types.FileChangeType.Deleted)
        (root / "pyproject.toml").write_text("[tool.celerylint]\nselect = ['CL2']\n")
        client.disk_changed(root / "pyproject.toml")
        client.replace(uri, LOCK)
        await client.diagnostics_for(uri)

    session(root, scenario, options={"ignore": ["CL203"], "unsafeFixes": False})


def test_unsafe_fixes_off_offers_noqa_only(tmp_path):
    root = project(tmp_path, {"proj/tasks.py": LOCK})

    async def scenario(client: Client):
        uri = client.open(root / "proj" / "tasks.py")
        lock = next(d for d in await client.diagnostics_for(uri, lambda d: "CL203" in codes(d)) if d.code == "CL203")
        assert [a.title for a in await client.code_actions(uri, lock)] == ["CL203: disable for this line"]

    session(root, scenario, settings={"unsafeFixes": False})


def test_a_large_project_is_read_by_worker_processes_without_hanging(tmp_path):
    """Over ``pool.PARALLEL_MIN_PATHS`` files the read forks workers while
    the server's reader thread waits on standard input."""
    files = {f"proj/m{i}.py": f"VALUE_{i} = {i}\n" for i in range(420)}
    root = project(tmp_path, {**files, "proj/tasks.py": LOCK})

    async def scenario(client: Client):
        uri = client.open(root / "proj" / "tasks.py")
        await client.diagnostics_for(uri, lambda d: "CL203" in codes(d) and any("421 Python files" in m for m in client.logs))

    session(root, scenario)


HELPER_USER = '''\
import uuid
from celery import shared_task

from proj.redis_client import get_redis


@shared_task
def run(job):
    get_redis().set(f"job:{job}", str(uuid.uuid4()), nx=True)
'''


def test_a_client_helper_changed_on_disk_judges_its_users_again(tmp_path):
    helper_text = "def get_redis():\n    return object()\n"
    root = project(tmp_path, {"proj/__init__.py": "", "proj/tasks.py": HELPER_USER,
                              "proj/redis_client.py": helper_text})
    helper = root / "proj" / "redis_client.py"

    async def scenario(client: Client):
        uri = client.open(root / "proj" / "tasks.py")
        assert "CL203" not in codes(await client.diagnostics_for(uri)), "not known to be Redis"
        helper.write_text("import redis\n\n\ndef get_redis():\n    return redis.Redis()\n")
        client.disk_changed(helper)
        await client.diagnostics_for(uri, lambda d: "CL203" in codes(d))
        helper.unlink()  # deleted: unknown again
        client.disk_changed(helper, kind=types.FileChangeType.Deleted)
        await client.diagnostics_for(uri, lambda d: "CL203" not in codes(d))

    session(root, scenario)
