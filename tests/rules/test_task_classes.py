"""Task classes and inherited options across files, through the real CLI:
what one file's base class or settings say reaches the findings of another,
also when that other file is served from the cache."""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import lint_json


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


BASE = """
    from celery import Task
    class BaseTaskWithRetry(Task):
        autoretry_for = (Exception,)
        time_limit = 300
"""
TASKS = """
    import boto3
    from celery import shared_task
    from proj.base import BaseTaskWithRetry
    @shared_task(base=BaseTaskWithRetry)
    def notify(topic, key):
        boto3.client("sns").publish(TopicArn=topic, Message=key)
        boto3.client("s3").put_object(Bucket="b", Key=key, Body=b"")
"""


def _codes(findings: list[dict], code: str) -> list[tuple[str, int]]:
    return [(f["path"], f["line"]) for f in findings if f["code"] == code]


def test_inherited_autoretry_follows_the_base_file_through_the_cache(tmp_path):
    root, cache = tmp_path / "repo", tmp_path / "cache"
    _write(root, {"proj/__init__.py": "", "proj/base.py": BASE, "proj/tasks.py": TASKS})
    _, findings, _ = lint_json(root, "--select", "CL207", cache_dir=cache)
    assert _codes(findings, "CL207") == [("proj/tasks.py", 6)]
    assert "inherited from `proj.base.BaseTaskWithRetry`" in findings[0]["message"]
    assert "SDK call" in findings[0]["message"]
    # only the base changes: tasks.py comes from the cache, the finding goes
    _write(root, {"proj/base.py": BASE.replace("(Exception,)", "(ConnectionError,)")})
    _, findings, _ = lint_json(root, "--select", "CL207", cache_dir=cache)
    assert _codes(findings, "CL207") == []
    _write(root, {"proj/base.py": BASE})
    _, findings, _ = lint_json(root, "--select", "CL207", cache_dir=cache)
    assert _codes(findings, "CL207") == [("proj/tasks.py", 6)]


def test_a_task_class_in_a_file_that_never_says_task(tmp_path):
    """The prefilter lets a file through when a class with a base defines
    ``run``: its base, elsewhere, may make it a task."""
    _write(tmp_path, {
        "proj/__init__.py": "",
        "proj/base.py": BASE,
        "proj/jobs.py": """
            from proj.base import BaseTaskWithRetry as Base
            class Charge(Base):
                def run(self, order_id):
                    gateway.charge(order_id)
                    send_receipt(order_id)
            Charge().delay(1, 2)
        """,
    })
    _, findings, _ = lint_json(tmp_path, "--select", "CL207,CL213", "--no-cache")
    assert sorted((f["code"], f["line"]) for f in findings) == [("CL207", 3), ("CL213", 7)]


def test_settings_valued_countdown_follows_the_settings(tmp_path):
    root, cache = tmp_path / "repo", tmp_path / "cache"
    settings = 'CELERY_BROKER_URL = "redis://localhost:6379/0"\nEXPORTS_TTL = 60 * 60 * 24\n'
    _write(root, {
        "proj/__init__.py": "",
        "proj/celery.py": """
            import os
            from celery import Celery
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
        """,
        "proj/settings.py": settings,
        "proj/api.py": """
            from django.conf import settings
            from proj.tasks import delete_dump
            def export(project):
                delete_dump.apply_async((project.pk,), countdown=settings.EXPORTS_TTL)
        """,
    })
    _, findings, _ = lint_json(root, "--select", "CL206,CL104", cache_dir=cache)
    assert sorted((f["code"], f["path"]) for f in findings) == [("CL104", "proj/celery.py"), ("CL206", "proj/api.py")]
    assert "`countdown` of 1 d (`settings.EXPORTS_TTL` in proj/settings.py)" in \
        next(f["message"] for f in findings if f["code"] == "CL206")
    _write(root, {"proj/settings.py": settings.replace("60 * 60 * 24", "600")})
    _, findings, _ = lint_json(root, "--select", "CL206,CL104", cache_dir=cache)
    assert findings == []


def test_a_class_registered_in_another_file_is_a_task(tmp_path):
    _write(tmp_path, {
        "proj/__init__.py": "",
        "proj/jobs.py": """
            from proj.framework import Job
            class Charge(Job):
                autoretry_for = (Exception,)
                default_retry_delay = 6 * 3600
                def run(self, order_id):
                    gateway.charge(order_id)
                    send_receipt(order_id)
            class Unregistered(Job):
                autoretry_for = (Exception,)
                def run(self, order_id):
                    gateway.charge(order_id)
                    send_receipt(order_id)
        """,
        "proj/celery.py": """
            from celery import Celery
            from proj.jobs import Charge
            app = Celery("proj")
            app.register_task(Charge())
        """,
    })
    _, findings, _ = lint_json(tmp_path, "--select", "CL206,CL207,CL211", "--no-cache")
    assert sorted((f["code"], f["path"], f["line"]) for f in findings) == [
        ("CL206", "proj/jobs.py", 5), ("CL207", "proj/jobs.py", 4), ("CL211", "proj/jobs.py", 4),
    ]
