"""Which named files make a run on them read the whole project with every
collector (run/closure.py ``is_configuration``), and which app modules
outside the closure give every fact (``makes_app``)."""

from __future__ import annotations

import pytest

from celerylint.registry import entries
from celerylint.run.closure import is_configuration, makes_app

TASKS_HEAD = "from celery import shared_task\nfrom celery.utils.log import get_task_logger\n\n"


@pytest.mark.parametrize("rel, text", [
    # saleor's task modules: a logger and retry constants named like settings
    ("shop/checkout/tasks.py", TASKS_HEAD + "task_logger = get_task_logger(__name__)\n"),
    ("shop/mail/tasks.py", TASKS_HEAD + "task_logger: logging.Logger = get_task_logger(__name__)\n"
                           "CELERY_RETRY_BACKOFF = 30\nCELERY_RETRY_MAX = 5\n"),
    ("shop/tasks.py", TASKS_HEAD + "result_ttl = 10\nworker_names = ['a']\n"),
])
def test_names_only_shaped_like_settings_do_not_make_configuration(rel, text):
    assert not is_configuration(text.encode(), rel, entries())


@pytest.mark.parametrize("rel, text", [
    ("shop/tasks.py", TASKS_HEAD + "task_acks_late = True\n"),  # a setting: maybe an app's config module
    ("shop/tasks.py", TASKS_HEAD + "task_ack_late = True\n"),  # close to one: CL107 may report it
    ("shop/tasks.py", TASKS_HEAD + "CELERY_TASK_ACKS_LATE = True\n"),  # a namespaced setting
    ("shop/tasks.py", TASKS_HEAD + "task_logger = get_task_logger(__name__)\nBROKER_URL = 'redis://'\n"),
    ("shop/celeryconfig.py", "task_logger = 1\n"),  # a settings-like path: any name may be read
    ("shop/tasks.py", TASKS_HEAD + "task_logger = 1\napp = Celery('shop')\n"),  # makes an app
])
def test_settings_and_apps_make_configuration(rel, text):
    assert is_configuration(text.encode(), rel, entries())


def test_an_app_module_gives_every_fact_a_client_helper_does_not():
    assert makes_app(b"from celery import Celery\napp = Celery('x')\n")
    assert makes_app(b"from celery import Celery as C\n")
    assert not makes_app(b"from django.core.cache import cache\n\ndef get_cache():\n    return cache\n")


def test_outside_the_closure_a_task_module_is_read_for_its_facts_only(tmp_path):
    """A run on one file (``Linter.focus``): another task module, which the
    file does not import, is parsed by libcst only when it may hold what the
    configuration model reads; its ``task_logger`` is no setting an app reads."""
    from celerylint.config.settings import Settings
    from celerylint.run.focus import Focus
    from celerylint.run.linter import Linter

    logger = "task_logger = get_task_logger(__name__)\n"
    other = tmp_path / "other.py"
    linter = Linter(Settings(root=tmp_path, config_dir=tmp_path))
    linter.focus = Focus(tmp_path, frozenset({"named.py"}))
    linter.defer_closure(lambda: {"named.py"})
    for text, parsed in ((TASKS_HEAD + logger, False), (TASKS_HEAD + "task_acks_late = True\n", True),
                         (TASKS_HEAD + logger + "app = Celery('x')\napp.conf.task_acks_late = True\n", True)):
        other.write_text(text)
        _, job = linter.prepare(other, other.read_bytes())
        assert (job is not None) == parsed, text
