"""Fixes that replace a node spanning lines keep the code's layout: the
block's indentation, and one argument per line when the call is written so."""

from __future__ import annotations

import ast

SOURCE = '''import redis

r = redis.Redis()


def f():
    with r.lock(
        "lock-a",
    ):
        pass


def g():
    with r.lock(
        "lock-b"
    ):
        pass


def h():
    x = [
        r.lock("c",
               blocking=True)
    ]
    return x


def k():
    if True:
        r.set(
            "lock:k", "1", nx=True
        )
'''

FIXED = '''import redis

r = redis.Redis()


def f():
    with r.lock(
        "lock-a",
        timeout=60,
    ):
        pass


def g():
    with r.lock(
        "lock-b",
        timeout=60
    ):
        pass


def h():
    x = [
        r.lock("c",
               blocking=True, timeout=60)
    ]
    return x


def k():
    if True:
        r.set(
            "lock:k", "1", nx=True,
            ex=60
        )
'''


def test_a_fix_to_a_call_over_several_lines_keeps_its_layout(cli, tmp_path):
    (tmp_path / "jobs.py").write_text(SOURCE)
    done = cli("--no-cache", "--fix", "--unsafe-fixes", "jobs.py")
    assert done.returncode == 0, done.stdout + done.stderr
    text = (tmp_path / "jobs.py").read_text()
    ast.parse(text)
    assert text == FIXED
