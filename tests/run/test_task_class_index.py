"""Task classes of another file (the task class index,
facts/task_class_index.py): a class whose base task lives in another linted
module is a task for CL201/CL202/CL205/CL208 (also through a base whose
name does not say Task), CL205 takes the time limit the base sets, and a
cached result (or stat index entry) is dropped when the base changes."""

from __future__ import annotations

from test_client_index import cl2, write
from test_prefilter_cache import age, lint

BASE = """
from celery import Task
class BaseTask(Task):
    time_limit = 600
class Job(BaseTask):  # a name that does not say Task
    pass
"""
NOT_A_TASK = """
class BaseTask:
    time_limit = 600
class Job(BaseTask):
    pass
"""
JOBS = """
import uuid
import redis
from proj.base import Job
r = redis.Redis()
class Rebuild(Job):
    def run(self, shard):
        with r.lock(f"lock:index:{shard}", timeout=60):
            rebuild(shard)
class Charge(Job):
    def run(self, order_id):
        gateway.charge(order_id, idempotency_key=str(uuid.uuid4()))
"""


def project(root, base: str = BASE) -> None:
    write(root, {"proj/__init__.py": "", "proj/base.py": base, "proj/jobs.py": JOBS})


def test_a_subclass_of_a_task_class_of_another_file_is_a_task(tmp_path, cli):
    project(tmp_path)
    assert cl2(lint(tmp_path, "--no-cache")[1]) == [("CL201", "proj/jobs.py", 12), ("CL205", "proj/jobs.py", 8)]
    only = cli("--no-cache", "--output-format", "concise", "--select", "CL205", ".").stdout
    assert "proj/jobs.py:8:52: CL205" in only and "`time_limit` of 600 s" in only  # the base's collector runs too


def test_a_base_that_is_no_task_class_gives_nothing(tmp_path):
    project(tmp_path, NOT_A_TASK)
    assert cl2(lint(tmp_path, "--no-cache")[1]) == []


def test_the_cached_result_of_a_subclass_is_dropped_when_the_base_changes(tmp_path):
    root, cache = tmp_path / "p", tmp_path / "cache"
    project(root)
    write(root, {f"proj/filler_{i}.py": f"X = {i}\n" for i in range(70)})  # enough files for the stat index
    found = [("CL201", "proj/jobs.py", 12), ("CL205", "proj/jobs.py", 8)]
    assert cl2(lint(root, cache_dir=cache)[1]) == found
    age(root)  # the stat index now trusts every file
    assert cl2(lint(root, cache_dir=cache)[1]) == found
    write(root, {"proj/base.py": BASE.replace("600", "30")})  # jobs.py unchanged: its lock outlives the task
    assert cl2(lint(root, cache_dir=cache)[1]) == [("CL201", "proj/jobs.py", 12)]
    write(root, {"proj/base.py": NOT_A_TASK})
    assert cl2(lint(root, cache_dir=cache)[1]) == []
    write(root, {"proj/base.py": BASE})
    assert cl2(lint(root, cache_dir=cache)[1]) == found
