"""Issue 12 (reliability of fixes): each failure reproduced with fixtures made
here, through the real CLI or ``celerylint.runner.run``."""

from __future__ import annotations

from pathlib import Path

import pytest

from celerylint.config.settings import Settings
from celerylint.run.runner import run
from conftest import write_project

LOCK_BEFORE = 'import redis\nr = redis.Redis()\ndef f(key):\n    if r.set("lock:" + key, 1, nx=True):\n        r.delete("lock:" + key)\n'
LOCK_AFTER = LOCK_BEFORE.replace("nx=True)", "nx=True, ex=60)")
LOCK_FIX = ("--fix", "--unsafe-fixes", "--no-cache", "--select", "CL203")


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)  # the repository root
    return repo


def _settings(root: Path, *select: str) -> Settings:
    return Settings(root=root, config_dir=root, select=select)


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")


def _fix_twice(root: Path, *select: str):
    """``--fix --unsafe-fixes`` twice; the second run must change nothing."""
    first = run([root], _settings(root, *select), fix=True, unsafe=True)
    assert not first.errors, first.errors
    before = {p: p.read_bytes() for p in root.rglob("*.py")}
    second = run([root], _settings(root, *select), fix=True, unsafe=True)
    assert not second.errors, second.errors
    assert not second.fixed, f"the second --fix changed files: {second.fixed}"
    assert {p: p.read_bytes() for p in root.rglob("*.py")} == before
    return first, second


# -- F8: a fix never writes through a symbolic link or outside the tree -------

def test_f8_symlink_to_a_file_outside_the_tree_is_reported_not_fixed(cli, tmp_path):
    repo = _repo(tmp_path)
    outside = tmp_path / "outside" / "real.py"
    outside.parent.mkdir()
    outside.write_text(LOCK_BEFORE)
    (repo / "link.py").symlink_to(outside)
    (repo / "own.py").write_text(LOCK_BEFORE)
    proc = cli(*LOCK_FIX, ".", cwd=repo)
    assert "Traceback" not in proc.stderr
    assert outside.read_text() == LOCK_BEFORE, "the file outside the tree was rewritten"
    assert (repo / "link.py").is_symlink()
    assert (repo / "own.py").read_text() == LOCK_AFTER
    assert "link.py: not fixed: it is a symbolic link" in proc.stderr
    assert "link.py:4:" in proc.stdout  # still reported
    assert proc.returncode == 1
    diff = cli("--diff", "--unsafe-fixes", "--no-cache", "--select", "CL203", ".", cwd=repo)
    assert "link.py" not in diff.stdout and "real.py" not in diff.stdout
    assert "link.py: not fixed: it is a symbolic link" in diff.stderr


def test_f8_symlink_inside_the_tree_is_not_fixed_through_the_link(cli, tmp_path):
    repo = _repo(tmp_path)
    (repo / "real.py").write_text(LOCK_BEFORE)
    (repo / "link.py").symlink_to("real.py")
    proc = cli(*LOCK_FIX, "link.py", cwd=repo)
    assert (repo / "real.py").read_text() == LOCK_BEFORE
    assert (repo / "link.py").is_symlink()
    assert "link.py: not fixed: it is a symbolic link" in proc.stderr
    assert proc.returncode == 1


def test_f8_file_reached_through_a_symlinked_directory_outside_the_tree(cli, tmp_path):
    repo = _repo(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "mod.py").write_text(LOCK_BEFORE)
    (repo / "vendored").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    proc = cli(*LOCK_FIX, "vendored/mod.py", cwd=repo)
    assert (tmp_path / "elsewhere" / "mod.py").read_text() == LOCK_BEFORE
    assert "vendored/mod.py: not fixed: it is outside the repository root" in proc.stderr
    assert proc.returncode == 1


def test_f8_configuration_fix_into_a_symlinked_module_is_not_applied(tmp_path):
    """A project fix targets another file than its finding: the same rule."""
    repo = _repo(tmp_path)
    outside = tmp_path / "shared_conf.py"
    outside.write_text('broker_url = "redis://localhost:6379/0"\n')
    (repo / "celeryconfig.py").symlink_to(outside)
    _write(repo, {"proj.py": 'from celery import Celery\napp = Celery("proj")\napp.config_from_object("celeryconfig")\n'})
    result = run([repo], _settings(repo, "CL101"), fix=True, unsafe=True)
    assert outside.read_text() == 'broker_url = "redis://localhost:6379/0"\n'
    assert "celeryconfig.py: not fixed: it is a symbolic link" in result.notices
    assert [f.code for f in result.findings] == ["CL101"]


# -- F10: the fix loop computes every round's fixes from the current text -----

F10_MINIMAL = ('from celery import Celery\napp = Celery("proj", broker="redis://localhost")\n'
               'app.conf.update(accept_content=["json"], task_queues=[1,],)\n')
F10_MULTILINE = '''\
import os
from celery import Celery

celery = Celery("h")
celery.conf.update(
    accept_content=["json"],
    broker_url=os.environ.get(
        "CELERY_BROKER_URL",
        os.environ.get("BROKER_URL", "amqp://guest:guest@localhost:5672//"),
    ),
    # a comment between the keywords
    task_soft_time_limit=120,
    task_queues=[
        Queue("celery", durable=True),
    ],
)
'''
WORKER_SETTINGS = ("task_acks_late=True", "task_reject_on_worker_lost=True", "worker_prefetch_multiplier=1")


@pytest.mark.parametrize("source", [F10_MINIMAL, F10_MULTILINE], ids=["one-line", "multi-line"])
def test_f10_settings_added_to_conf_update_once_and_the_second_run_changes_nothing(tmp_path, source):
    _write(tmp_path, {"proj.py": source})
    first, second = _fix_twice(tmp_path, "CL1")
    text = (tmp_path / "proj.py").read_text()
    for setting in WORKER_SETTINGS:
        assert text.count(setting) == 1, text
    assert not any("dropped" in n for n in first.notices + second.notices), first.notices
    assert not [f for f in second.findings if f.fix is not None]


def test_f10_multi_line_update_gets_one_keyword_per_line(tmp_path):
    _write(tmp_path, {"proj.py": F10_MULTILINE})
    _fix_twice(tmp_path, "CL1")
    assert (tmp_path / "proj.py").read_text() == F10_MULTILINE.replace(
        "    ],\n)\n", "    ],\n    task_acks_late=True,\n    task_reject_on_worker_lost=True,\n"
                      "    worker_cancel_long_running_tasks_on_connection_loss=True,\n"
                      "    worker_prefetch_multiplier=1,\n)\n")


def test_f10_project_fixes_read_the_text_the_loop_holds(tmp_path):
    """Round 2's fix (CL102, once acks_late is on) must be computed from the
    text round 1 produced, not from the file on disk."""
    _write(tmp_path, {"proj.py": F10_MULTILINE})
    result = run([tmp_path], _settings(tmp_path, "CL101", "CL102"), fix=True, unsafe=True)
    assert not result.notices, result.notices
    assert result.fixed == {"proj.py": 2}


# -- F11: a setting is added after the whole statement of the last one --------

F11_DJANGO_APP = ('import os\nfrom celery import Celery\n'
                  'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings.common")\n'
                  'app = Celery("proj")\napp.config_from_object("django.conf:settings", namespace="CELERY")\n')


@pytest.mark.parametrize("last", [
    'CELERY_IMPORTS = (\n    "a.b",\n)\n@',
    'CELERY_IMPORTS = (\n    "a.b",\n)@',  # no newline at the end of the file
    'CELERY_IMPORTS = [\n    "a.b",\n]  # the imports\n@',
    'CELERY_IMPORTS = \\\n    ("a.b",)\n@',
    'CELERY_IMPORTS = ("a.b",\n                  "c.d"); OTHER = 1\n@',
    'CELERY_TASK_ROUTES = {\n    "a.*": {"queue": "a"},\n}\n@\nLOGGING = {}\n',
], ids=["tuple", "tuple-no-newline", "list-comment", "backslash", "semicolon", "dict-then-other"])
def test_f11_setting_inserted_after_a_multi_line_last_setting(tmp_path, last):
    """``@`` marks where the new setting belongs."""
    common = 'DEBUG = False\nCELERY_BROKER_URL = "redis://localhost:6379/0"\n' + last
    _write(tmp_path, {"proj/__init__.py": "", "proj/settings/__init__.py": "", "proj/celery.py": F11_DJANGO_APP,
                      "proj/settings/common.py": common.replace("@", "")})
    first, second = _fix_twice(tmp_path, "CL101")
    assert not first.notices, first.notices
    text = (tmp_path / "proj/settings/common.py").read_text()
    added = "CELERY_TASK_ACKS_LATE = True\n"
    assert text == common.replace(")@", ")\n" + added.rstrip("\n")).replace("@", added), text
    compile(text, "common.py", "exec")
    assert not [f for f in second.findings if f.code == "CL101"]


# -- F18: inserted lines take the file's line endings -------------------------

F18_CASES = {
    "module": ({"celeryconfig.py": 'broker_url = "redis://localhost:6379/0"\nimports = (\n    "proj.tasks",\n)\n',
                "proj.py": 'from celery import Celery\napp = Celery("proj")\napp.config_from_object("celeryconfig")\n'},
               "celeryconfig.py"),
    "module-no-final-newline": ({"celeryconfig.py": 'import os\nbroker_url = "redis://localhost:6379/0"',
                                 "proj.py": 'from celery import Celery\napp = Celery("proj")\napp.config_from_object("celeryconfig")\n'},
                                "celeryconfig.py"),
    "conf-attribute": ({"proj.py": 'from celery import Celery\napp = Celery("proj", broker="redis://localhost")\n'
                                   'app.conf.task_serializer = "json"\n\n@app.task\ndef t(): ...\n'}, "proj.py"),
    "conf-update": ({"proj.py": 'from celery import Celery\napp = Celery("proj", broker="redis://localhost")\n'
                                'app.conf.update(\n    task_serializer="json",\n)\n'}, "proj.py"),
}


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
@pytest.mark.parametrize("case", sorted(F18_CASES))
def test_f18_inserted_settings_use_the_file_line_endings(tmp_path, case, newline):
    files, target = F18_CASES[case]
    _write(tmp_path, {rel: text.replace("\n", newline).encode() for rel, text in files.items()})
    first, _ = _fix_twice(tmp_path, "CL1")
    assert first.fixed.get(target), first.fixed
    data = (tmp_path / target).read_bytes()
    endings = data.replace(b"\r\n", b"").replace(newline.encode(), b"")
    assert b"\n" not in endings and b"\r" not in endings, data  # no other line ending crept in
    assert data.count(b"task_acks_late") == 1, data
    compile(data, target, "exec")


def test_f18_mixed_file_takes_the_ending_of_the_line_it_inserts_after(tmp_path):
    conf = b'# a comment\nbroker_url = "redis://localhost:6379/0"\r\ntask_serializer = "json"\r\n'
    _write(tmp_path, {"celeryconfig.py": conf,
                      "proj.py": 'from celery import Celery\napp = Celery("proj")\napp.config_from_object("celeryconfig")\n'})
    _fix_twice(tmp_path, "CL101")
    assert (tmp_path / "celeryconfig.py").read_bytes() == conf + b"task_acks_late = True\r\n"


def test_f18_the_fix_loop_gives_any_fix_the_file_line_endings(tmp_path):
    """The loop's safety net, for fixes of every rule: a fix whose new text
    holds ``\\n`` gets the endings of the line it edits."""
    from celerylint.run.fixing import _apply
    from celerylint.core.model import Edit, Fix

    text = "a = 1\r\nb = 2\r\n"
    fix = Fix("add c", (Edit(2, 5, 2, 5, "\nc = 3"),), True)
    assert _apply(text, [fix]) == ("a = 1\r\nb = 2\r\nc = 3\r\n", 1, False)


def test_f18_settings_of_a_cr_only_module_are_read(tmp_path):
    """A CR-only module whose first line is not a setting was never read (the
    prefilter looked for settings after a ``\\n``): the fix added
    ``task_acks_late`` on every round."""
    _write(tmp_path, {"celeryconfig.py": b'import os\rtask_acks_late = True\r',
                      "proj.py": 'from celery import Celery\napp = Celery("proj")\napp.config_from_object("celeryconfig")\n'})
    result = run([tmp_path], _settings(tmp_path, "CL101"))
    assert not result.findings, result.findings


# -- F12: each app's finding at its own configuration, no duplicates ----------

def _app_module(name: str, extra: str = "") -> str:
    return (f'from celery import Celery\napp = Celery("{name}", broker="redis://localhost:6379/0")\n'
            'app.conf.task_acks_late = True\napp.conf.broker_transport_options = {}\n'
            'app.conf.broker_transport_options["visibility_timeout"] = 3600\n' + extra)


LONG_TASK = "@app.task(time_limit=7200)\ndef export(): ...\n"


def _no_duplicates(findings) -> None:
    keys = [(f.code, f.path, f.line, f.col, f.message) for f in findings]
    assert len(keys) == len(set(keys)), [k for k in keys if keys.count(k) > 1][:3]


def test_f12_two_apps_sharing_a_broker_are_each_reported_at_their_own_configuration(tmp_path):
    # same layout in both files: the item's position alone named a.py for both
    _write(tmp_path, {"a.py": _app_module("a"), "b.py": _app_module("b", LONG_TASK)})
    result = run([tmp_path], _settings(tmp_path, "CL104"))
    _no_duplicates(result.findings)
    assert sorted((f.path, f.line) for f in result.findings) == [("a.py", 5), ("b.py", 5)]
    assert {f.fix.path for f in result.findings} == {"a.py", "b.py"}
    first, _ = _fix_twice(tmp_path, "CL104")
    assert first.fixed == {"a.py": 1, "b.py": 1}
    assert not first.notices, first.notices
    for name in ("a.py", "b.py"):
        assert '["visibility_timeout"] = 10800' in (tmp_path / name).read_text()


def test_f12_two_hundred_apps_converge_in_one_run_without_duplicates(tmp_path):
    files = {f"app{i:03}.py": _app_module(f"app{i}") for i in range(199)}
    files["app199.py"] = _app_module("app199", LONG_TASK)
    _write(tmp_path, files)
    result = run([tmp_path], _settings(tmp_path, "CL104"))
    _no_duplicates(result.findings)
    assert len(result.findings) == 200 and len({f.path for f in result.findings}) == 200
    first, _ = _fix_twice(tmp_path, "CL104")
    assert len(first.fixed) == 200 and not first.notices, first.notices[:3]


def test_f12_apps_of_same_named_modules_in_different_directories_are_different_apps(tmp_path):
    """``svc1/worker.py`` and ``svc2/worker.py`` outside any package are both
    module ``worker``: their apps were merged into one, and one was never
    reported."""
    for svc in ("svc1", "svc2"):
        _write(tmp_path, {f"{svc}/worker.py": f'from celery import Celery\napp = Celery("{svc}", broker="redis://localhost")\n'})
    result = run([tmp_path], _settings(tmp_path, "CL101"))
    _no_duplicates(result.findings)
    assert sorted(f.path for f in result.findings) == ["svc1/worker.py", "svc2/worker.py"]
    first, _ = _fix_twice(tmp_path, "CL101")
    for svc in ("svc1", "svc2"):
        assert (tmp_path / svc / "worker.py").read_text().count("app.conf.task_acks_late = True") == 1


def test_f12_apps_sharing_a_configuration_module_get_one_finding_there(tmp_path):
    conf = ('broker_url = "redis://localhost:6379/0"\ntask_acks_late = True\ntask_reject_on_worker_lost = True\n'
            'worker_prefetch_multiplier = 1\nbroker_transport_options = {"max_connections": 20}\n'
            'worker_cancel_long_running_tasks_on_connection_loss = True\n')
    files = {"celeryconfig.py": conf}
    for i in range(3):
        files[f"app{i}.py"] = 'from celery import Celery\napp = Celery("x")\napp.config_from_object("celeryconfig")\n'
    files["app2.py"] += LONG_TASK
    _write(tmp_path, files)
    result = run([tmp_path], _settings(tmp_path, "CL1"))
    assert [(f.code, f.path) for f in result.findings] == [("CL104", "celeryconfig.py")]


def test_f12_identical_findings_are_merged_distinct_ones_kept():
    from celerylint.core.model import Finding
    from celerylint.run.project import _distinct

    a = Finding("CL104", "n", "m", "c.py", 1, 0, 1, 5)
    b = Finding("CL104", "n", "m", "c.py", 2, 0, 2, 5)
    c = Finding("CL104", "n", "other message", "c.py", 1, 0, 1, 5)
    assert _distinct([a, b, a, c, a]) == [a, b, c]


# -- F20: two rules' fixes of one setting write it once ------------------------

from conftest import REPO  # noqa: E402
APP_LOADING_CONF = 'from celery import Celery\napp = Celery("proj")\napp.config_from_object("celeryconfig")\n'


def _assigned_names(text: str) -> list[str]:
    import ast

    return [t.id for node in ast.parse(text).body if isinstance(node, ast.Assign)
            for t in node.targets if isinstance(t, ast.Name)]


def test_f20_shop_example_gets_one_task_acks_late(cli, tmp_path):
    import shutil

    shop = tmp_path / "shop"
    shutil.copytree(REPO / "examples" / "shop", shop)
    (shop / ".git").mkdir()
    first = cli("--fix", "--unsafe-fixes", "--no-cache", ".", cwd=shop)
    assert "Traceback" not in first.stderr and "dropped" not in first.stderr, first.stderr
    text = (shop / "shop" / "celeryconfig.py").read_text()
    assert "task_ack_late" not in text
    assert text.count("task_acks_late = True") == 1, text
    names = _assigned_names(text)
    assert len(names) == len(set(names)), f"a setting is assigned twice:\n{text}"
    before = {p: p.read_bytes() for p in shop.rglob("*.py")}
    second = cli("--fix", "--unsafe-fixes", "--no-cache", ".", cwd=shop)
    assert "Fixed" not in second.stdout, second.stdout
    assert {p: p.read_bytes() for p in shop.rglob("*.py")} == before


@pytest.mark.parametrize(("select", "conf", "expected"), [
    ("CL1", "task_ack_late = False\n", "task_acks_late = True\n"),
    ("CL101", "task_ack_late = False\n", "task_acks_late = True\n"),  # CL107 not even selected
    ("CL1", "task_ack_late = True  # sic\n", "task_acks_late = True  # sic\n"),
    ("CL1", 'import os\ntask_ack_late = os.environ.get("ACKS", True)\n', 'import os\ntask_acks_late = os.environ.get("ACKS", True)\n'),
    ("CL104", 'task_acks_late = True\ntask_time_limit = 7200\nbroker_transport_option = {"max_connections": 20}\n',
     'task_acks_late = True\ntask_time_limit = 7200\nbroker_transport_options = {"visibility_timeout": 10800, "max_connections": 20}\n'),
], ids=["both-rules", "cl101-alone", "already-true", "environment", "dict-keeps-its-keys"])
def test_f20_a_misspelt_setting_is_the_setting_line(tmp_path, select, conf, expected):
    broker = 'broker_url = "redis://localhost:6379/0"\n'
    _write(tmp_path, {"celeryconfig.py": broker + conf, "proj.py": APP_LOADING_CONF})
    _, second = _fix_twice(tmp_path, select)
    text = (tmp_path / "celeryconfig.py").read_text()
    if select == "CL104":
        assert text == broker + expected
    else:
        assert text.count(expected) == 1 and conf not in text.replace(expected, ""), text
        names = _assigned_names(text)
        assert len(names) == len(set(names)), text


def test_f20_django_and_preconfiguration_misspellings(tmp_path):
    _write(tmp_path, {
        "proj/__init__.py": "",
        "proj/celery.py": ('import os\nfrom celery import Celery\nos.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")\n'
                           'app = Celery("proj")\napp.config_from_object("django.conf:settings", namespace="CELERY")\n'
                           'app.conf.worker_prefetch_multipler = 4\n'),
        "proj/settings.py": 'CELERY_BROKER_URL = "redis://localhost:6379/0"\nCELERY_TASK_ACK_LATE = False\n',
    })
    _fix_twice(tmp_path, "CL1")
    assert (tmp_path / "proj/settings.py").read_text() == (
        'CELERY_BROKER_URL = "redis://localhost:6379/0"\nCELERY_TASK_ACKS_LATE = True\n'
        "CELERY_TASK_REJECT_ON_WORKER_LOST = True\nCELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True\n")
    celery = (tmp_path / "proj/celery.py").read_text()
    assert celery.endswith("app.conf.worker_prefetch_multiplier = 1\n") and celery.count("prefetch") == 1, celery


# -- Send-only apps: worker settings are not checked or fixed for them --------

SEND_ONLY = '''\
from celery import Celery
from kombu import Connection


class AuthorityQueue:
    def publish(self, config, payload):
        authority_celery = Celery(config.authority)
        authority_celery.conf.broker_url = config.broker_url
        authority_celery.conf["task_serializer"] = "json"
        with Connection(config.broker_url) as connection:
            authority_celery.send_task(config.task_name, connection=connection, kwargs={"event": payload})
'''
WORKER = 'from celery import Celery\ncelery = Celery("h", broker="redis://localhost:6379/0")\n'


def test_send_only_app_made_in_a_function_gets_no_worker_setting_findings(tmp_path):
    _write(tmp_path, {"h/queue.py": SEND_ONLY, "h/tasks.py": WORKER})
    result = run([tmp_path], _settings(tmp_path, "CL1"))
    assert {f.path for f in result.findings} == {"h/tasks.py"}  # the worker app still is
    assert {f.code for f in result.findings} >= {"CL101", "CL103"}
    before = (tmp_path / "h/queue.py").read_text()
    _fix_twice(tmp_path, "CL1")
    assert (tmp_path / "h/queue.py").read_text() == before
    assert "celery.conf.task_acks_late = True" in (tmp_path / "h/tasks.py").read_text()


def test_send_only_app_alone_in_the_project(tmp_path):
    _write(tmp_path, {"client.py": SEND_ONLY})
    result = run([tmp_path], _settings(tmp_path, "CL101", "CL102", "CL103", "CL104"))
    assert not result.findings, result.findings


@pytest.mark.parametrize("body", [
    "    app = Celery('proj', broker='redis://localhost')\n    return app\n",  # a factory
    "    app = Celery('proj', broker='redis://localhost')\n    app.send_task('a')\n    app.worker_main(['worker'])\n",
    "    app = Celery('proj', broker='redis://localhost')\n    @app.task\n    def t(): ...\n    app.send_task('a')\n",
    "    app = Celery('proj', broker='redis://localhost')\n    app.conf.broker_url = 'redis://other'\n",  # no send_task
    "    app = Celery('proj', broker='redis://localhost')\n    app.send_task('a')\n    register(app)\n",
], ids=["factory", "worker-main", "task", "no-send", "passed-on"])
def test_an_app_made_in_a_function_and_used_otherwise_is_still_checked(tmp_path, body):
    _write(tmp_path, {"proj.py": "from celery import Celery\n\ndef make():\n" + body})
    result = run([tmp_path], _settings(tmp_path, "CL101", "CL103"))
    assert {f.code for f in result.findings} == {"CL101", "CL103"}, result.findings


def test_a_module_level_app_used_only_for_send_task_is_still_checked_when_it_may_run_the_tasks(tmp_path):
    """The project's one app, with tasks a worker of it would run (a shared
    task elsewhere): checked, though its module only sends with it."""
    _write(tmp_path, {"proj.py": "from celery import Celery\napp = Celery('proj', broker='redis://localhost')\n"
                                 "def f():\n    app.send_task('a')\n",
                      "jobs.py": "from celery import shared_task\n@shared_task\ndef a():\n    pass\n"})
    result = run([tmp_path], _settings(tmp_path, "CL101", "CL103"))
    assert {f.code for f in result.findings} == {"CL101", "CL103"}


def test_a_module_level_app_used_only_for_send_task_in_a_project_without_tasks_runs_none(tmp_path):
    _write(tmp_path, {"proj.py": "from celery import Celery\napp = Celery('proj', broker='redis://localhost')\n"
                                 "def f():\n    app.send_task('a')\n"})
    result = run([tmp_path], _settings(tmp_path, "CL101", "CL103"))
    assert result.findings == []


def test_settings_added_at_one_place_in_many_rounds_converge_without_a_notice(cli, tmp_path):
    """Each setting a fix adds to one module goes in a round of its own: five
    of them took every round, and the run said it did not converge though
    nothing was left (--diff and --fix alike)."""
    write_project(tmp_path, """
        # file: proj/__init__.py
        # file: proj/celery.py
        import os
        from celery import Celery
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
        app = Celery("proj")
        app.config_from_object("django.conf:settings", namespace="CELERY")
        # file: proj/settings.py
        CELERY_BROKER_URL = "redis://localhost:6379/0"
        CELERY_RESULT_BACKEND = "redis://localhost:6379/1"
        # file: proj/tasks.py
        from proj.celery import app
        @app.task(name="proj.ping")
        def ping():
            return 1
        def caller():
            ping.delay()
    """)
    diff = cli("--isolated", "--no-cache", "--select", "ALL", "--diff", "--unsafe-fixes", ".", cwd=tmp_path)
    assert diff.stdout.count("\n+CELERY_") >= 5, diff.stdout
    assert "did not converge" not in diff.stderr, diff.stderr
    fixed = cli("--isolated", "--no-cache", "--select", "ALL", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert "did not converge" not in fixed.stderr, fixed.stderr
    again = cli("--isolated", "--no-cache", "--select", "ALL", "--diff", "--unsafe-fixes", ".", cwd=tmp_path)
    assert "+CELERY_" not in again.stdout
