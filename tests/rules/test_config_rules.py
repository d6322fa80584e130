"""The configuration rules (CL1xx) on the seed article's configuration:
the good configuration is silent; without any one of its settings, the
matching rule fires where the app loads its configuration, with a fix that
restores the setting."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from celerylint.config.extend import load_settings
from celerylint.registry import known_codes
from celerylint.run.runner import run

GOOD = {
    "task_acks_late": ("task_acks_late = True", "CL101"),
    "task_reject_on_worker_lost": ("task_reject_on_worker_lost = True", "CL102"),
    "worker_prefetch_multiplier": ("worker_prefetch_multiplier = 1", "CL103"),
    "broker_transport_options": ('broker_transport_options = {"visibility_timeout": 10800}', "CL104"),
    "worker_cancel_long_running_tasks_on_connection_loss": (
        "worker_cancel_long_running_tasks_on_connection_loss = True", "CL125"),
}
APP = 'from celery import Celery\n\napp = Celery("proj")\napp.config_from_object("celeryconfig")\n'
TASKS = ("from proj import app\n\n\n@app.task(time_limit=2 * 60 * 60)\ndef export():\n    ...\n")


def lint(root, fix=False):
    settings = replace(load_settings(None, root, known_codes()), root=root, config_dir=root, select=("CL1",))
    return run([root], settings, fix=fix, unsafe=fix)


def write(root, lines):
    (root / "celeryconfig.py").write_text('broker_url = "redis://localhost:6379/1"\n' + "".join(l + "\n" for l in lines))
    (root / "proj.py").write_text(APP)
    (root / "tasks.py").write_text(TASKS)


def test_good_configuration_is_silent(tmp_path):
    write(tmp_path, [line for line, _ in GOOD.values()])
    result = lint(tmp_path)
    assert not result.errors, result.errors
    assert not result.findings, result.findings


@pytest.mark.parametrize("missing", list(GOOD))
def test_each_missing_setting_fires_and_the_fix_restores_it(tmp_path, missing):
    write(tmp_path, [line for name, (line, _) in GOOD.items() if name != missing])
    code = GOOD[missing][1]
    findings = [f for f in lint(tmp_path).findings if f.code == code]
    assert len(findings) == 1, findings
    assert (findings[0].path, findings[0].line) == ("proj.py", 4)  # the config_from_object line
    assert findings[0].fix is not None and findings[0].fix.path == "celeryconfig.py"
    lint(tmp_path, fix=True)
    assert not [f for f in lint(tmp_path).findings if f.code == code]
    text = (tmp_path / "celeryconfig.py").read_text()
    name = "visibility_timeout" if missing == "broker_transport_options" else missing
    assert name in text


def test_unknown_values_stay_silent(tmp_path):
    (tmp_path / "celeryconfig.py").write_text("from deployment.celery_defaults import *\nbroker_url = BROKER\n")
    (tmp_path / "proj.py").write_text(APP)
    (tmp_path / "tasks.py").write_text(TASKS)
    result = lint(tmp_path)
    assert not result.errors, result.errors
    assert not result.findings, result.findings


def test_mixed_names_fire_cl108_and_cl109_renames_the_whole_source(tmp_path):
    (tmp_path / "celeryconfig.py").write_text("CELERYD_PREFETCH_MULTIPLIER = 1\nCELERY_ACKS_LATE = True\ntask_reject_on_worker_lost = True\n")
    (tmp_path / "proj.py").write_text(APP)
    codes = sorted(f.code for f in lint(tmp_path).findings if f.code in ("CL108", "CL109"))
    assert codes == ["CL108", "CL109", "CL109"]
    lint(tmp_path, fix=True)
    assert (tmp_path / "celeryconfig.py").read_text() == (
        "worker_prefetch_multiplier = 1\ntask_acks_late = True\ntask_reject_on_worker_lost = True\n"
        "worker_cancel_long_running_tasks_on_connection_loss = True\n"  # CL125, once acks_late is read
    )
    assert not [f for f in lint(tmp_path).findings if f.code in ("CL108", "CL109")]


def test_star_only_modules_are_followed_and_unread_ones_stay_unknown(tmp_path):
    good = "".join(line + "\n" for line, _ in GOOD.values())
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "__init__.py").write_text("")
    (tmp_path / "proj" / "app.py").write_text(APP.replace('"celeryconfig"', '"proj.settings.prod"'))
    (tmp_path / "proj" / "settings").mkdir()
    (tmp_path / "proj" / "settings" / "__init__.py").write_text("")
    (tmp_path / "proj" / "settings" / "base.py").write_text('broker_url = "redis://localhost:6379/1"\n' + good)
    # a settings file holding nothing but a star import is still read
    (tmp_path / "proj" / "settings" / "prod.py").write_text("from .base import *\n")
    assert [f.code for f in lint(tmp_path).findings] == []
    # the same chain through a module celerylint has no reason to read: unknown, so silent
    (tmp_path / "proj" / "app.py").write_text(APP.replace('"celeryconfig"', '"proj.deploy"'))
    (tmp_path / "proj" / "deploy.py").write_text("from proj.settings.base import *\n")
    assert [f.code for f in lint(tmp_path).findings] == []
    (tmp_path / "proj" / "settings" / "base.py").write_text('broker_url = "redis://localhost:6379/1"\n')
    (tmp_path / "proj" / "app.py").write_text(APP.replace('"celeryconfig"', '"proj.settings.prod"'))
    assert "CL101" in [f.code for f in lint(tmp_path).findings]  # the chain really is read


def test_the_settings_table_never_imports_celery(monkeypatch):
    """celerylint lints a project on any Celery release, or none installed."""
    import sys

    from celerylint.domain.celeryconf import settings_table

    for name in [m for m in sys.modules if m == "celery" or m.startswith("celery.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "celery", None)  # ``import celery`` raises ImportError
    settings_table.table.cache_clear()
    try:
        assert "task_acks_late" in settings_table.table().new
        assert settings_table.table().to_new["CELERYD_PREFETCH_MULTIPLIER"] == "worker_prefetch_multiplier"
    finally:
        settings_table.table.cache_clear()


def test_one_rename_of_old_names_is_one_fix(tmp_path, cli):
    """CL109 renames every old name of a source at once: the fix is offered
    once (the summary counts it once, SARIF holds no overlapping fixes)."""
    (tmp_path / "celeryconfig.py").write_text('BROKER_URL = "redis://localhost"\nCELERY_ACKS_LATE = True\n')
    (tmp_path / "proj.py").write_text(APP)
    proc = cli("--select", "CL109", "--format", "json", ".", cwd=tmp_path)
    found = json.loads(proc.stdout)
    assert [f["code"] for f in found] == ["CL109", "CL109"]
    assert [f["fix"] is not None for f in found] == [True, False]
    assert "renamed by the fix of `BROKER_URL` (line 1)" in found[1]["hint"]
    assert "1 fixable" in cli("--select", "CL109", ".", cwd=tmp_path).stdout
    cli("--select", "CL109", "--fix", ".", cwd=tmp_path)
    assert (tmp_path / "celeryconfig.py").read_text() == 'broker_url = "redis://localhost"\ntask_acks_late = True\n'


def test_a_rename_under_a_namespace_is_unsafe(tmp_path, cli):
    """Under ``namespace="CELERY"``, Celery before 5.7 ignores old names: the
    rename makes those versions apply a setting they never read (a list of
    queue names as ``task_queues`` fails every ``delay()``), so ``--fix``
    leaves it and the message says why."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "__init__.py").write_text("")
    (tmp_path / "proj" / "celery.py").write_text(
        'import os\nfrom celery import Celery\nos.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")\n'
        'app = Celery("proj")\napp.config_from_object("django.conf:settings", namespace="CELERY")\n')
    (tmp_path / "proj" / "settings.py").write_text('CELERY_BROKER_URL = "redis://r:6379/0"\nCELERY_QUEUES = ["a", "b"]\n')
    found = json.loads(cli("--select", "CL109", "--format", "json", ".", cwd=tmp_path).stdout)
    assert [(f["code"], f["fix"]["safe"]) for f in found] == [("CL109", False)]
    assert "Celery before 5.7 ignores it under `namespace=\"CELERY\"`" in found[0]["message"]
    cli("--select", "CL109", "--fix", ".", cwd=tmp_path)
    assert "CELERY_QUEUES = " in (tmp_path / "proj" / "settings.py").read_text()


def test_branches_are_combined_up_to_sixteen_worlds(tmp_path):
    """worlds.py: four ifs with two branches each (16 combinations) are
    checked branch by branch; a fifth (32) leaves them unknown: no finding."""
    flags = [f'if os.environ.get("F{i}"):\n    {name} = {bad}\nelse:\n    {name} = {bad + 1}'
             for i, (name, bad) in enumerate([("worker_prefetch_multiplier", 4)] + [(f"unused_{i}", 0) for i in range(3)])]
    def codes(extra):
        write(tmp_path, ["import os", "task_acks_late = True", "task_reject_on_worker_lost = True",
                         'broker_transport_options = {"visibility_timeout": 10800}', *flags, *extra])
        return sorted((f.code, f.line) for f in lint(tmp_path).findings if f.code == "CL103")
    assert codes([]) == [("CL103", 7), ("CL103", 9)]
    assert codes(['if os.environ.get("F4"):\n    more = 1\nelse:\n    more = 2']) == []


def test_a_finding_the_branches_word_differently_keeps_no_fix(tmp_path):
    """The visibility timeout is too short for either branch's time limit:
    reported once, without the first branch's fix (too small for the other)."""
    write(tmp_path, ["import os", "task_acks_late = True", "task_reject_on_worker_lost = True",
                     "worker_prefetch_multiplier = 1", 'broker_transport_options = {"visibility_timeout": 3600}',
                     'if os.environ.get("BIG"):\n    task_time_limit = 9000\nelse:\n    task_time_limit = 10800'])
    (found,) = [f for f in lint(tmp_path).findings if f.code == "CL104"]
    assert found.line == 6 and found.fix is None and "150 min" in found.message


@pytest.mark.parametrize("guard", [
    "try:\n    from .local import *\nexcept ImportError:\n    pass\n",
    "with contextlib.suppress(ImportError):\n    from .local import *\n",
    'if os.path.isfile(os.path.join(os.path.dirname(__file__), "local.py")):\n    from .local import *\n',
])
def test_a_local_override_absent_from_the_tree_is_optional_however_it_is_guarded(tmp_path, guard):
    """The same idiom, three spellings: a missing ``local.py`` leaves the settings known."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "__init__.py").write_text("")
    (tmp_path / "proj" / "app.py").write_text(APP.replace('"celeryconfig"', '"proj.settings"'))
    (tmp_path / "proj" / "tasks.py").write_text(TASKS)
    (tmp_path / "proj" / "settings.py").write_text(
        'import contextlib\nimport os\nbroker_url = "redis://localhost:6379/1"\ntask_acks_late = False\n' + guard)
    assert "CL101" in [f.code for f in lint(tmp_path).findings]
    (tmp_path / "proj" / "local.py").write_text("task_acks_late = True\n")  # present: read, and it wins
    assert "CL101" not in [f.code for f in lint(tmp_path).findings]
