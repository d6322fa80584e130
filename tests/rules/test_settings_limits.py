"""Time limits and delays read from Django settings, per settings profile
(the profile of ``DJANGO_SETTINGS_MODULE`` in ``proj/celery.py`` and one
named in a compose file), through the real CLI: CL205 reports a lock only
when its TTL is shorter than the limit in every profile, and a value a
profile may set in a file celerylint read only for its star import is
unknown, for CL205 as for CL206."""

from __future__ import annotations

from conftest import lint_json, write_project as write

APP = '''
    # file: proj/__init__.py
    # file: proj/celery.py
    import os
    from celery import Celery
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings.production")
    app = Celery("proj")
    app.config_from_object("django.conf:settings", namespace="CELERY")
    # file: proj/settings/__init__.py
    # file: proj/settings/base.py
    CELERY_BROKER_URL = "redis://redis:6379/0"
    EXPORT_LIMIT = 3600
    EXPORT_DELAY = 7200
    # file: proj/settings/production.py
    from .base import *
    # file: proj/tasks.py
    import redis
    from django.conf import settings
    from celery import shared_task
    r = redis.Redis()
    @shared_task(soft_time_limit=settings.EXPORT_LIMIT)
    def export(account):
        with r.lock(f"lock:export:{account}", timeout=60):
            work()
    def later(account):
        export.apply_async((account,), countdown=settings.EXPORT_DELAY)
    # file: docker-compose.yml
    services:
      staging:
        environment:
          DJANGO_SETTINGS_MODULE: proj.settings.staging
'''


def findings(root, *select: str) -> list[tuple[str, int, str]]:
    _, found, _ = lint_json(root, "--no-cache", "--select", ",".join(select))
    return [(f["code"], f["line"], f["message"]) for f in found]


def test_reported_when_the_limit_is_longer_than_the_ttl_in_every_profile(tmp_path):
    write(tmp_path, APP, '''
        # file: proj/settings/staging.py
        from .base import *
        CELERY_TASK_ACKS_LATE = True
        EXPORT_LIMIT = 1800
    ''')
    (code, line, message), = findings(tmp_path, "CL205")
    assert (code, line) == ("CL205", 7)
    # the shortest limit is named, the fix raises the TTL above the longest
    assert "`soft_time_limit` (`settings.EXPORT_LIMIT` in proj/settings/staging.py) of 1800 s" in message
    _, found, _ = lint_json(tmp_path, "--no-cache", "--select", "CL205", "--fix", "--unsafe-fixes")
    assert found == []
    assert 'timeout=3660):' in (tmp_path / "proj/tasks.py").read_text()


def test_silent_when_one_profile_has_a_shorter_limit(tmp_path):
    write(tmp_path, APP, '''
        # file: proj/settings/staging.py
        from .base import *
        CELERY_TASK_ACKS_LATE = True
        EXPORT_LIMIT = 30
    ''')
    assert findings(tmp_path, "CL205") == []


def test_a_value_set_in_a_profile_read_only_for_its_star_import_is_unknown(tmp_path):
    # the profiles hold no Celery setting: celerylint reads their star
    # import, not their other assignments, so what they set is unknown
    write(tmp_path, APP, '''
        # file: proj/settings/staging.py
        from .base import *
        EXPORT_LIMIT = 7200
        EXPORT_DELAY = 60
    ''')
    (tmp_path / "proj/settings/production.py").write_text("from .base import *\nEXPORT_DELAY = 60\n")
    assert findings(tmp_path, "CL205", "CL206") == []
    for profile in ("production", "staging"):
        (tmp_path / f"proj/settings/{profile}.py").write_text("from .base import *\nDEBUG = False\n")
    assert [(c, line) for c, line, _ in findings(tmp_path, "CL205", "CL206")] == [("CL205", 7), ("CL206", 10)]


def test_a_limit_a_base_task_class_of_another_file_reads_from_settings(tmp_path):
    write(tmp_path, APP, '''
        # file: proj/settings/staging.py
        from .base import *
        CELERY_TASK_ACKS_LATE = True
        # file: proj/base.py
        from celery import Task
        from django.conf import settings
        class BaseTask(Task):
            time_limit = settings.EXPORT_LIMIT
        class Job(BaseTask):
            soft_time_limit = 30
        # file: proj/jobs.py
        import redis
        from celery import shared_task
        from proj.base import BaseTask, Job
        r = redis.Redis()
        class Rebuild(BaseTask):
            def run(self, shard):
                with r.lock(f"lock:index:{shard}", timeout=60):
                    rebuild(shard)
        @shared_task(base=Job)
        def sync(shard):
            with r.lock(f"lock:sync:{shard}", timeout=60):
                rebuild(shard)
    ''')
    found = [(f["code"], f["path"], f["line"], f["message"]) for f in lint_json(tmp_path, "--no-cache", "--select", "CL205")[1]]
    # Job inherits the 3600 s time_limit too: both locks are shorter
    assert [(c, p, line) for c, p, line, _ in found] == [
        ("CL205", "proj/jobs.py", 7), ("CL205", "proj/jobs.py", 11), ("CL205", "proj/tasks.py", 7)]
    assert all("`time_limit` (`settings.EXPORT_LIMIT` in proj/settings/" in m for _, p, _, m in found if p == "proj/jobs.py")
