"""celerylint's knowledge of Celery's settings per release
(``celerylint/domain/celeryconf/settings_data.py``) is what
``python -m celerylint.devtools celery-data`` makes of the releases.

Without the network: the static reader gives the installed Celery's own
table (imported here, never by celerylint), the shipped data holds that
table for the installed release, and the module is the generator's text for
the data it holds.  With the package index: regenerating it from the
releases' wheels gives the same file byte for byte (skipped, saying so, when
the index is unreachable)."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from celerylint.devtools import celery_data
from celerylint.domain.celeryconf import settings_data, settings_table

TARGET = Path(settings_data.__file__)


def _installed_source() -> str:
    import importlib.util

    spec = importlib.util.find_spec("celery")
    assert spec and spec.origin
    return (Path(spec.origin).parent / "app" / "defaults.py").read_text(encoding="utf-8")


def _release(index: int) -> celery_data.Release:
    """The table of ``RELEASES[index]`` as the shipped data holds it."""
    def has(runs):
        return any(first <= index <= last for first, last in runs)

    defaults = {}
    for name, runs in settings_data.NEW.items():
        if has(runs):
            defaults[name] = [value for since, value in settings_data.DEFAULTS[name] if since <= index][-1]
    to_new = {old: new for old, (new, runs) in settings_data.OLD.items() if has(runs)}
    return celery_data.Release(defaults, to_new, {new: old for old, new in to_new.items()})


def test_the_static_reader_gives_the_installed_celerys_own_table():
    """``read_defaults`` on the file, against ``celery.app.defaults`` imported."""
    read = celery_data.read_defaults(_installed_source())
    live = settings_table.live_table()
    assert set(read.defaults) == live.new and set(read.to_new) == live.old
    assert read.to_new == live.to_new and read.to_old == live.to_old
    assert read.defaults == live.defaults
    assert [type(read.defaults[n]) for n in sorted(live.new)] == [type(live.defaults[n]) for n in sorted(live.new)]


def test_the_shipped_data_holds_the_installed_release():
    installed = version("celery")
    if installed not in settings_data.RELEASES:
        pytest.skip(f"Celery {installed} is not among the covered releases: "
                    "run `python -m celerylint.devtools celery-data`")
    shipped = _release(settings_data.RELEASES.index(installed))
    assert shipped == celery_data.read_defaults(_installed_source())
    if installed == settings_data.RELEASES[-1]:
        t = settings_table.table()
        assert (t.new, t.to_new, t.to_old, t.defaults) == (set(shipped.defaults), shipped.to_new, shipped.to_old,
                                                          shipped.defaults)


def test_the_module_is_the_generators_text_for_its_data():
    """No hand edit: the generator writes exactly this file from the tables it holds."""
    releases = list(settings_data.RELEASES)
    tables = [_release(i) for i in range(len(releases))]
    assert celery_data.module_source(releases, tables) == TARGET.read_text(encoding="utf-8")


def test_per_release_lookups():
    assert settings_table.introduced_in("task_acks_late") == "4.0.0"
    assert settings_table.introduced_in("CELERY_ACKS_LATE") == "4.0.0"
    assert settings_table.introduced_in("worker_cancel_long_running_tasks_on_connection_loss") == "5.1.0"
    assert settings_table.introduced_in("no_such_setting") is None
    assert settings_table.last_in("task_queue_ha_policy") == "5.0.1"
    assert settings_table.last_in("task_acks_late") is None
    assert settings_table.since("task_acks_late") == ""
    assert settings_table.since("worker_disable_prefetch") == " (Celery 5.6.0 and later)"
    t = settings_table.table()
    assert "task_queue_ha_policy" not in t.new and t.known("task_queue_ha_policy")
    assert t.canonical_in_any_release("CELERY_TASK_QUEUE_HA_POLICY", "CELERY")
    assert not t.known("task_ack_late") and not t.canonical_in_any_release("task_ack_late", None)


def test_a_default_it_cannot_read_stops_the_generator():
    source = _installed_source().replace("Option(False, type='bool')", "Option(compute(), type='bool')", 1)
    with pytest.raises(celery_data.Unreadable, match=r"compute\(\)"):
        celery_data.read_defaults(source)


def _index_reachable() -> bool:
    try:
        probe = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "celery"],
                               capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return False
    return probe.returncode == 0


def test_regenerating_from_the_package_index_gives_the_shipped_module(tmp_path):
    """The releases' wheels, downloaded and read again: the same file."""
    if not _index_reachable():
        pytest.skip("the package index is unreachable: cannot download Celery's releases")
    regenerated = celery_data.generate(list(settings_data.RELEASES), tmp_path)
    assert regenerated == TARGET.read_text(encoding="utf-8"), "run `python -m celerylint.devtools celery-data`"
    newer = [r for r in celery_data.available_releases() if r not in settings_data.RELEASES]
    if newer:
        pytest.skip(f"the data is exact, but the index has Celery releases it does not cover: {newer}; "
                    "run `python -m celerylint.devtools celery-data`")
