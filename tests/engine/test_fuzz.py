"""Fuzzing the whole engine: generated Python programs (hypothesmith) and
mutations of a real-looking Celery module (truncation, byte insertion, token
deletion, line shuffles), through decoding, the prefilter, parsing, every
rule and the fix application.  No exception may escape, no rule may fail,
and a fix never leaves a file that does not parse.

Fast by default (a few seconds, derandomized); ``CELERYLINT_FUZZ_EXAMPLES=2000``
runs a long random campaign of that many examples per test.
"""

from __future__ import annotations

import io
import os
import tokenize
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from celerylint.config.settings import Settings
from celerylint.engine.analysis import lint_source
from celerylint.run.fixing import _apply, _applicable, parses
from celerylint.run.linter import enabled_entries

LONG = os.environ.get("CELERYLINT_FUZZ_EXAMPLES")


def fuzz(default: int):
    """``default`` examples, derandomized (a stable, quick CI run); with
    CELERYLINT_FUZZ_EXAMPLES=N, N random examples per test."""
    return settings(
        max_examples=int(LONG) if LONG else default, deadline=None, database=None, derandomize=not LONG,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    )


SETTINGS = Settings(root=Path("/nonexistent"))
ENTRIES = enabled_entries(SETTINGS)

SEED = '''\
# -*- coding: utf-8 -*-
"""Billing tasks."""
import datetime as dt
from datetime import timedelta

import redis as rds
from celery import Celery, shared_task
from django.core.cache import cache

app = Celery("billing", broker="redis://localhost:6379/0", backend="redis://localhost:6379/1")
app.conf.task_acks_late = True
app.conf.broker_transport_options = {"visibility_timeout": 3600}
r = rds.Redis.from_url("redis://localhost:6379/2")
LOCK_TTL = 60


@shared_task(bind=True, acks_late=True, max_retries=3)
def charge(self, order_id, amount=0):
    key = f"lock:charge:{order_id}"
    if not r.set(key, "1", nx=True):
        return None
    try:
        gateway.charge(order_id, amount)  # noqa: F821
    except Exception as exc:
        raise self.retry(exc=exc, countdown=2 ** self.request.retries)
    finally:
        r.delete(key)


@app.task
def nightly():
    with r.lock("nightly"):
        charge.apply_async((1,), countdown=86400 * 7, eta=dt.datetime.now() + timedelta(days=30))
    if cache.add("lock-report", 1, None):
        cache.delete("lock-report")
    r.setnx("mutex", 1)
    r.expire("mutex", LOCK_TTL)
    return [x async for x in aiter_items()] if False else {"ok": True, **{}}


class Report(app.Task):
    name = "report"

    def run(self, *args, **kwargs):
        lock = self.app.backend.client.lock(f"report-{args[0]}", timeout=None)
        return lock
'''


def lint_everything(data: bytes) -> None:
    result = lint_source("fuzz.py", data, SETTINGS, ENTRIES, "fuzz")
    assert result.errors == [], "\n".join(result.errors)
    fixes = [fix for f in result.findings if (fix := _applicable(f, True)) is not None]
    if fixes:
        text = data.decode("utf-8-sig", "surrogateescape") if b"coding" not in data else None
        if text is not None:
            new, applied, _ = _apply(text, fixes)
            if applied:
                assert parses(new), new


@pytest.mark.parametrize("data", [SEED.encode(), SEED.replace("\n", "\r\n").encode(), b"\xef\xbb\xbf" + SEED.encode()])
def test_seed_is_linted_and_fixed_cleanly(data):
    result = lint_source("seed.py", data, SETTINGS, ENTRIES, "seed")
    assert result.parsed and result.errors == []
    assert "CL203" in {f.code for f in result.findings}
    # CL206 judges the file's delays in the project phase: its facts are here
    assert any(f["kind"] == "delay" and f["seconds"] > 3600 for f in result.facts)
    lint_everything(data)


@fuzz(30)
@given(hypothesmith.from_grammar())
def test_generated_programs(source):
    lint_everything(("import celery\n" + source).encode("utf-8", "surrogatepass"))


@fuzz(4)
@given(hypothesmith.from_node())
def test_generated_syntax_trees(source):
    lint_everything(("from celery import shared_task\nimport redis\n" + source).encode("utf-8", "surrogatepass"))


def _tokens(text: str) -> list[tuple[int, int]]:
    """Character spans of the seed's tokens."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    spans = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in (tokenize.ENDMARKER,) or tok.start == tok.end:
            continue
        spans.append((starts[tok.start[0] - 1] + tok.start[1], starts[tok.end[0] - 1] + tok.end[1]))
    return spans


TOKENS = _tokens(SEED)
SEED_BYTES = SEED.encode()


@st.composite
def mutated_seed(draw) -> bytes:
    data = SEED_BYTES
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["truncate", "insert", "delete-token", "duplicate-token", "delete-line",
                                     "swap-lines", "indent", "flip-byte"]))
        if kind == "truncate":
            data = data[:draw(st.integers(0, len(data)))]
        elif kind == "insert":
            at = draw(st.integers(0, len(data)))
            blob = draw(st.one_of(
                st.binary(min_size=1, max_size=8),
                st.sampled_from([b"(", b")", b"[", b":", b"\n", b"\r", b"\t", b"    ", b"\\", b'"', b"'''", b"#",
                                 b"\x00", b"\xff", b"\xef\xbb\xbf", b"{% if x %}", b"{{ x }}", b"lambda:", b"await ",
                                 b"nx=True", b"countdown=10**100", b"async ", b"\x0c", b"\xe2\x80\xa8"]),
            ))
            data = data[:at] + blob + data[at:]
        elif kind in ("delete-token", "duplicate-token") and data == SEED_BYTES:
            start, end = draw(st.sampled_from(TOKENS))
            text = SEED
            piece = text[start:end]
            text = text[:start] + ("" if kind == "delete-token" else piece + " " + piece) + text[end:]
            data = text.encode()
        elif kind in ("delete-line", "swap-lines", "indent"):
            lines = data.split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            j = draw(st.integers(0, len(lines) - 1))
            if kind == "delete-line":
                del lines[i]
            elif kind == "swap-lines":
                lines[i], lines[j] = lines[j], lines[i]
            else:
                lines[i] = b"    " + lines[i]
            data = b"\n".join(lines)
        elif kind == "flip-byte" and data:
            at = draw(st.integers(0, len(data) - 1))
            data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1:]
    return data


@fuzz(200)
@given(mutated_seed())
def test_mutated_celery_module(data):
    lint_everything(data)


@fuzz(100)
@given(st.binary(max_size=400))
def test_random_bytes(data):
    lint_everything(b"import celery\n" + data)
