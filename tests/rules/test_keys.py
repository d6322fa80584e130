"""A key is one key however it is built (domain/keys.py): the check, the
marker, the lock and the delete written with f-strings, ``%``,
``.format()``, ``+`` or ``join`` are recognised as the same key."""

from __future__ import annotations

import textwrap

from test_prefilter_cache import lint


def run(tmp_path, code: str) -> list[tuple[str, int, str]]:
    (tmp_path / "tasks.py").write_text(textwrap.dedent(code), encoding="utf-8")
    _, findings = lint(tmp_path, "--no-cache")
    return [(f["code"], f["line"], f["message"]) for f in findings if f["code"].startswith("CL2")]


def test_a_release_of_a_lock_taken_under_another_spelling(tmp_path):
    found = run(tmp_path, """
        import uuid
        import redis
        r = redis.Redis()
        def sync(job):
            token = uuid.uuid4().hex
            if r.set("sync:{}".format(job), token, nx=True, ex=30):
                work(job)
                r.delete("sync:" + str(job))
                r.delete(f"sync:{job}:done")  # another key
    """)
    assert [(c, line) for c, line, _ in found] == [("CL204", 9)]
    assert "was taken with `set` in this function" in found[0][2]


def test_a_marker_written_under_another_spelling_of_the_checked_key(tmp_path):
    found = run(tmp_path, """
        import redis
        import requests
        from celery import shared_task
        r = redis.Redis()
        @shared_task
        def notify(order_id):
            if r.get("sent:%s" % order_id):
                return
            r.set(":".join(["sent", str(order_id)]), 1)
            requests.post("https://hooks.example/orders", json={"id": order_id})
    """)
    assert [(c, line) for c, line, _ in found] == [("CL202", 10)]


def test_different_keys_stay_different(tmp_path):
    found = run(tmp_path, """
        import redis
        import requests
        from celery import shared_task
        r = redis.Redis()
        @shared_task
        def notify(order_id):
            if r.get("sent:%s" % order_id):
                return
            r.set("sent:%s:v2" % order_id, 1)
            requests.post("https://hooks.example/orders", json={"id": order_id})
    """)
    assert found == []


def test_a_delete_after_comparing_the_value_read_from_the_same_key_is_not_blind(tmp_path):
    found = run(tmp_path, """
        import redis
        r = redis.Redis()
        def release_scheduler_lock(token, campaign):
            lock_key = f"scheduler_lock:{campaign}"
            val = r.get(lock_key)
            if isinstance(val, bytes):
                val = val.decode()
            if str(val or "").strip() == token:
                r.delete(lock_key)
        def release_other(token, campaign):
            lock_key = f"scheduler_lock:{campaign}"
            if r.get("scheduler_lock:other") == token:  # another key's value
                r.delete(lock_key)
    """)
    assert [(c, line) for c, line, _ in found] == [("CL204", 14)]


THROTTLE = """
    import time
    import redis
    from celery import shared_task
    r = redis.Redis()
    @shared_task
    def auto_scan():
        last = r.get("autoscan:last_run")
        now = time.time()
        if last and now - {read} < 3600:
            return
        r.set("autoscan:last_run", str(now))
        run_scan.delay()
"""


def test_a_last_run_timestamp_is_a_throttle_not_a_done_marker(tmp_path):
    assert run(tmp_path, THROTTLE.format(read="float(last)")) == []


def test_a_timestamp_that_is_only_tested_for_presence_is_a_done_marker(tmp_path):
    found = run(tmp_path, THROTTLE.replace("if last and now - {read} < 3600:", "if last:"))
    assert [(c, line) for c, line, _ in found] == [("CL202", 12)]
