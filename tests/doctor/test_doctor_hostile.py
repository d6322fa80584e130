"""``celerylint doctor`` against brokers that trickle, lie or send what
a broker should not: the run ends by its deadline, reads a bounded amount,
and ends in exit 2 with one clear line (the URL masked), never a traceback.

What real Redis can hold (a ``-inf`` score, a nested JSON body, ten large
message bodies) is planted in a real ``redis-server``; replies real Redis
never sends come from ``doctor_support.FakeRedis`` on 127.0.0.1."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time

import pytest

from doctor_support import FakeRedis, bulk, flood, info, measured, trickle
from test_doctor import doctor, redis, server, start_server  # noqa: F401 - fixtures

pytestmark = pytest.mark.skipif(redis is None, reason="redis-py is not installed (pip install -e '.[test]')")

PASSWORD = "s3cr@t;pw"  # an unencoded ``@`` and ``;``: the password is everything up to the last ``@``
SIMPLE = "pw-9x"  # the password of the other tests' URLs


@pytest.fixture
def fake():
    started = []

    def start(replies: dict) -> FakeRedis:
        started.append(FakeRedis(replies))
        return started[-1]

    yield start
    for f in started:
        f.close()


def doctor_env() -> dict:
    return {**{k: v for k, v in os.environ.items() if k != "CELERY_BROKER_URL"}, "NO_COLOR": "1"}


def assert_clean_error(done, shown: str) -> None:
    """Exit 2, no traceback, the masked URL named, the password never printed."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    assert shown in done.stderr, done.stderr
    assert SIMPLE not in done.stdout + done.stderr


# -- deadlines (item 3) ---------------------------------------------------------------

@pytest.mark.parametrize("command", ["AUTH", "INFO"])
def test_a_reply_trickled_a_byte_at_a_time_ends_at_the_deadline(fake, tmp_path, command):
    """A bulk header of 100 MB, then a byte every 0.5 s: every recv gets
    data within its socket timeout, so only a wall-clock deadline ends it."""
    f = fake({command: trickle()})
    done = doctor(tmp_path, "--broker-url", f.url(f":{SIMPLE}@"), "--timeout", "2", timeout=30)
    assert_clean_error(done, f"redis://:****@127.0.0.1:{f.port}/0")
    assert "stopped after --timeout 2 s" in done.stderr
    assert done.seconds < 2 + 3, done.seconds


def test_a_name_lookup_that_hangs_ends_at_the_deadline(tmp_path, monkeypatch):
    """What no socket timeout bounds (here a DNS lookup that takes 15 s) is
    left behind at the deadline: the run's checks run in a thread it waits
    for until then."""
    from click.testing import CliRunner

    from celerylint.cli.commands import doctor as doctor_command

    release = threading.Event()

    def slow_lookup(*args, **kwargs):
        release.wait(15)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", slow_lookup)
    monkeypatch.chdir(tmp_path)
    started = time.monotonic()
    try:
        done = CliRunner().invoke(doctor_command, ["--broker-url", "redis://:pw-9x@broker.example:6379/0",
                                                   "--timeout", "1"])
    finally:
        release.set()
    seconds = time.monotonic() - started
    assert done.exit_code == 2, done.output
    assert "redis://:****@broker.example:6379/0: stopped after --timeout 1 s" in done.output
    assert "pw-9x" not in done.output
    assert seconds < 1 + 2, seconds


# -- memory (item 7, and a length that lies) --------------------------------------------

def test_a_reply_longer_than_a_command_may_read_is_refused(fake, tmp_path):
    f = fake({"INFO": flood(b"$100000000\r\n")})
    status, out, err, seconds, rss = measured(
        [sys.executable, "-m", "celerylint", "doctor", "--broker-url", f.url(f":{SIMPLE}@"), "--timeout", "20"],
        tmp_path, doctor_env(), timeout=60)
    done = type("Done", (), {"returncode": status, "stdout": out, "stderr": err})
    assert_clean_error(done, f"broker redis://:****@127.0.0.1:{f.port}/0: unexpected reply (a reply longer than 32 MiB")
    assert rss < 160 * 2**20, rss / 2**20


def test_large_unacked_bodies_are_not_read_past_the_budget(server, tmp_path):
    """Ten 10 MB message bodies in ``unacked``: the doctor asks their sizes
    (HSTRLEN) and reads what fits in 16 MiB, not 100 MB."""
    admin = server.db(0)
    now = time.time()
    big = "x" * (10 * 2**20)
    for i in range(10):
        tag = f"tag-{i}"
        body = json.dumps([{"body": big, "headers": {"task": "proj.big", "id": tag}}, "", "celery"])
        admin.hset("unacked", tag, body)
        admin.zadd("unacked_index", {tag: now - 7200 - i})  # overdue under the default visibility timeout
    status, out, err, seconds, rss = measured(
        [sys.executable, "-m", "celerylint", "doctor", "--format", "json", "--broker-url", server.url(),
         "--timeout", "20"], tmp_path, doctor_env(), timeout=60)
    assert status == 1, err
    found = json.loads(out)
    overdue = [f for f in found if f["code"] == "CL153"]
    assert overdue and "1 message in kombu's `unacked` was delivered" in overdue[0]["message"], found
    assert "`proj.big`" in overdue[0]["message"]
    assert "9 unacked messages were not read: the doctor reads at most 16 MiB" in err, err
    assert rss < 150 * 2**20, rss / 2**20
    assert seconds < 10, seconds


# -- unexpected replies (item 11) ----------------------------------------------------------

UNACKED = {"ZCARD": b":1\r\n", "ZCOUNT": b":1\r\n", "HMGET": b"*1\r\n$-1\r\n"}


@pytest.mark.parametrize("replies, why", [
    ({"INFO": b":42\r\n"}, "INFO memory: AttributeError"),
    ({"INFO memory": b"*1\r\n" * 100_000 + b":1\r\n"}, "INFO memory: nested too deeply to read"),
    ({"INFO memory": info("memory", "used_memory:abc\r\nmaxmemory:0\r\n")},
     "INFO memory: `used_memory` is 'abc', not a number"),
    ({**UNACKED, "ZRANGEBYSCORE": b"*2\r\n" + bulk("tag") + bulk("abc")}, "ZRANGEBYSCORE: ValueError"),
    ({**UNACKED, "ZRANGEBYSCORE": b"*2\r\n" + bulk("tag") + bulk("nan")}, "the score nan, not a time"),
    ({**UNACKED, "ZRANGEBYSCORE": b"*2\r\n" + bulk("tag") + bulk("1"), "HSTRLEN": b"+big\r\n"},
     "HSTRLEN of an unacked message gave"),
], ids=["integer-info", "nested-arrays", "used-memory-abc", "score-abc", "score-nan", "hstrlen-status"])
def test_a_reply_of_the_wrong_shape_is_an_unexpected_reply(fake, tmp_path, replies, why):
    f = fake(replies)
    done = doctor(tmp_path, "--broker-url", f.url(f":{SIMPLE}@"), "--timeout", "10", timeout=60)
    assert_clean_error(done, f"broker redis://:****@127.0.0.1:{f.port}/0: unexpected reply (")
    assert why in done.stderr, done.stderr


@pytest.mark.parametrize("score, body, why", [
    (float("-inf"), json.dumps([{"headers": {"task": "proj.t"}}, "", "celery"]), "the score -inf, not a time"),
    (None, "[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
], ids=["minus-inf-score", "nested-json-body"])
def test_unacked_data_real_redis_holds_is_an_unexpected_reply(start_server, tmp_path, score, body, why):
    s = start_server("--requirepass", SIMPLE)
    admin = s.db(0)
    admin.hset("unacked", "tag-1", body)
    admin.zadd("unacked_index", {"tag-1": time.time() if score is None else score})
    done = doctor(tmp_path, "--broker-url", s.url(), "--timeout", "10", timeout=60)
    assert_clean_error(done, f"broker redis://:****@127.0.0.1:{s.port}/0: unexpected reply (")
    assert why in done.stderr, done.stderr


# -- the URL's password (item 10) ----------------------------------------------------------

def test_a_password_with_at_and_semicolon_is_one_password_and_never_a_host(fake, tmp_path):
    f = fake({})
    done = doctor(tmp_path, "--format", "json", "--broker-url", f.url(f":{PASSWORD}@"), timeout=60)
    assert done.returncode == 0, done.stderr
    assert [b"AUTH", PASSWORD.encode()] in f.commands  # the whole password, to 127.0.0.1
    assert [x["path"] for x in json.loads(done.stdout)] == [f"redis://:****@127.0.0.1:{f.port}/0"]
    assert "kombu splits a broker URL at every `;`" in done.stderr
    for piece in ("s3cr", "t;pw"):
        assert piece not in done.stdout + done.stderr


def test_an_error_is_masked_by_the_url_not_by_the_password_text(start_server, tmp_path):
    """The password ``sab`` is in "disabled" of Redis's WRONGPASS message:
    only the URL's password is masked."""
    s = start_server("--requirepass", "the-right-one")
    done = doctor(tmp_path, "--broker-url", f"redis://:sab@127.0.0.1:{s.port}/0", "--timeout", "5", timeout=60)
    assert done.returncode == 2, done.stderr
    assert f"redis://:****@127.0.0.1:{s.port}/0" in done.stderr
    assert "disabled" in done.stderr and "****led" not in done.stderr, done.stderr
