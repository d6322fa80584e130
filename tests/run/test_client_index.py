"""Redis clients made by a project helper in another module (the client
index, facts/client_index.py): recognised by CL203/CL204 through imports,
and never served stale from the cache or the stat index when the helper
changes."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from test_prefilter_cache import age, lint

HELPER = """
import redis
def redis_instance():
    return redis.Redis.from_url("redis://")
"""
NOT_A_CLIENT = """
import redis
def redis_instance():
    return {"url": "redis://"}  # mentions redis, returns a dict
"""
TASKS = """
from app.settings.redis import redis_instance
def acquire_lock(lock_id):
    return redis_instance().set(lock_id, "1", nx=True, ex=300)
def release_lock(lock_id):
    client = redis_instance()
    client.delete(lock_id)
"""


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def project(root: Path, helper: str = HELPER) -> None:
    write(root, {"app/__init__.py": "", "app/settings/__init__.py": "", "app/settings/redis.py": helper,
                 "app/tasks.py": TASKS})


def cl2(findings: list[dict]) -> list[tuple[str, str, int]]:
    return sorted((f["code"], f["path"], f["line"]) for f in findings if f["code"].startswith("CL2"))


def test_a_client_from_a_helper_in_another_module_is_a_client(tmp_path):
    project(tmp_path)
    _, findings = lint(tmp_path, "--no-cache")
    assert cl2(findings) == [("CL204", "app/tasks.py", 7)]


def test_a_helper_that_returns_no_client_gives_nothing(tmp_path):
    project(tmp_path, NOT_A_CLIENT)
    _, findings = lint(tmp_path, "--no-cache")
    assert cl2(findings) == []


def test_the_cached_result_of_a_user_is_dropped_when_the_helper_changes(tmp_path):
    root, cache = tmp_path / "p", tmp_path / "cache"
    project(root)
    write(root, {f"app/filler_{i}.py": f"X = {i}\n" for i in range(70)})  # enough files for the stat index
    assert cl2(lint(root, cache_dir=cache)[1]) == [("CL204", "app/tasks.py", 7)]
    age(root)  # the stat index now trusts every file
    assert cl2(lint(root, cache_dir=cache)[1]) == [("CL204", "app/tasks.py", 7)]
    write(root, {"app/settings/redis.py": NOT_A_CLIENT})  # tasks.py unchanged, still in the stat index
    assert cl2(lint(root, cache_dir=cache)[1]) == []
    write(root, {"app/settings/redis.py": HELPER})
    assert cl2(lint(root, cache_dir=cache)[1]) == [("CL204", "app/tasks.py", 7)]


def test_chains_of_helpers_resolve_and_cycles_do_not(tmp_path):
    write(tmp_path, {
        "app/__init__.py": "",
        "app/conn.py": """
            import functools
            import redis
            @functools.cache
            def _make():
                return redis.StrictRedis()
            redis_client = _make()
            def loop_a():
                return loop_b()
            def loop_b():
                return loop_a()
        """,
        "app/jobs.py": """
            from app import conn
            from app.conn import redis_client, loop_a
            def f(key):
                redis_client.delete(f"lock:{key}")
                conn.redis_client.delete(f"lock:{key}")
                loop_a().delete(f"lock:{key}")
        """,
    })
    _, findings = lint(tmp_path, "--no-cache")
    assert cl2(findings) == [("CL204", "app/jobs.py", 5), ("CL204", "app/jobs.py", 6)]


def test_a_helper_outside_the_files_read_is_unknown(tmp_path, cli):
    root = tmp_path / "tree"
    project(root)
    both = cli("--no-cache", "--exit-zero", "--format", "json", "app", cwd=root)
    # named alone, the file is judged in its project (the working directory): the helper is known
    named = cli("--no-cache", "--exit-zero", "--format", "json", "app/tasks.py", cwd=root)
    (tmp_path / "elsewhere").mkdir()
    alone = cli("--no-cache", "--exit-zero", "--format", "json", str(root / "app/tasks.py"), cwd=tmp_path / "elsewhere")
    assert [f["line"] for f in json.loads(both.stdout) if f["code"] == "CL204"] == [7]
    assert [f["line"] for f in json.loads(named.stdout) if f["code"] == "CL204"] == [7]
    assert [f for f in json.loads(alone.stdout) if f["code"] == "CL204"] == []  # no project: its client is unknown


def test_a_helper_in_a_namespace_package_is_found_by_its_import(tmp_path):
    write(tmp_path, {  # no __init__.py anywhere: the module is imported as core.store.redis
        "core/store/redis.py": """
            import redis
            redis_client = redis.StrictRedis()
        """,
        "core/store/locks.py": """
            from core.store.redis import redis_client
            def release(lock_key):
                redis_client.delete(lock_key)
        """,
    })
    _, findings = lint(tmp_path, "--no-cache")
    assert cl2(findings) == [("CL204", "core/store/locks.py", 4)]


def test_a_parameter_shadows_the_helper_of_the_same_name(tmp_path):
    write(tmp_path, {
        "conn.py": """
            import redis
            redis_client = redis.Redis()
        """,
        "jobs.py": """
            from conn import redis_client
            def release(lock_key):
                redis_client.delete(lock_key)
            def release_in(redis_client, lock_key):
                redis_client.delete(lock_key)  # whatever the caller passes
        """,
    })
    _, findings = lint(tmp_path, "--no-cache")
    assert cl2(findings) == [("CL204", "jobs.py", 4)]


def test_an_async_helper_gives_its_client_to_await(tmp_path):
    write(tmp_path, {
        "aconn.py": """
            import redis.asyncio as aioredis
            _pool = None
            async def get_redis():
                global _pool
                if _pool is None:
                    _pool = aioredis.from_url("redis://")
                return _pool
        """,
        "ajobs.py": """
            from aconn import get_redis
            async def acquire_lock(key, ttl=30):
                r = await get_redis()
                return await r.set(key, "1", nx=True, ex=ttl)
            async def release_lock(key):
                r = await get_redis()
                await r.delete(key)
        """,
    })
    _, findings = lint(tmp_path, "--no-cache")
    assert cl2(findings) == [("CL204", "ajobs.py", 8)]


def test_a_client_passed_as_an_annotated_parameter_is_a_client(tmp_path):
    """A client injected into lock helpers: the annotation says what it is
    (forward references and ``| None`` included); an unannotated parameter
    or one annotated with a project class stays unknown."""
    write(tmp_path, {
        "locks.py": """
            from __future__ import annotations
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                from redis import Redis
            import redis
            client = redis.Redis()
            class Store: ...
            def acquire_lock(r: Redis | None, lock_id):
                return r.set(lock_id, "1", nx=True, ex=300)
            def release_lock(r: "redis.Redis", lock_id):
                r.delete(lock_id)
            def release_other(client, lock_id):
                client.delete(lock_id)  # whatever the caller passes
            def release_store(client: Store, lock_id):
                client.delete(lock_id)
        """,
    })
    _, findings = lint(tmp_path, "--no-cache")
    assert cl2(findings) == [("CL204", "locks.py", 12)]
