"""The work sharing under both pools: every turn is done exactly once and
reaches the parent, even when a child dies."""

from __future__ import annotations

import os
import time

from celerylint.run import pool


def _square(state, turn):
    parent, dying = state
    if dying and os.getpid() != parent and turn % 2:
        os._exit(3)  # a child dies on its first odd turn, losing what it did
    time.sleep(0.001)  # long enough for every process to take turns
    return turn * turn


def test_every_turn_is_done_once_by_this_process_and_its_children():
    between = []
    done = pool._share(_square, (os.getpid(), False), 200, 3, lambda: between.append(1))
    assert done == {turn: turn * turn for turn in range(200)}
    assert 0 < len(between) <= 200  # this process took turns too


def test_the_turns_of_a_child_that_died_are_done_here():
    done = pool._share(_square, (os.getpid(), True), 60, 3)
    assert done == {turn: turn * turn for turn in range(60)}


def _whose(state, turn):
    time.sleep(0.02)
    return turn, os.getpid()


def test_spawned_children_take_turns(monkeypatch):
    import multiprocessing

    monkeypatch.setattr(pool, "_context", lambda: multiprocessing.get_context("spawn"))
    done = pool._share(_whose, None, 60, 2)
    assert sorted(turn for turn, _ in done.values()) == list(range(60))
    assert {pid for _, pid in done.values()} - {os.getpid()}, "no child took a turn"


def test_spawned_children_give_the_same_results(tmp_path, monkeypatch):
    """Where fork is not used (macOS, Windows), children are spawned and
    receive the work list once."""
    import multiprocessing
    from pathlib import Path

    from celerylint.config.extend import load_settings
    from celerylint.registry import known_codes
    from celerylint.run.linter import Linter
    from celerylint.run.jobs import analyze_job, triage_path

    (tmp_path / "tasks.py").write_text(
        "from celery import shared_task\nimport redis\nr = redis.Redis()\n"
        "@shared_task\ndef f(k):\n    r.set('lock:' + k, 1, nx=True)\n"
    )
    (tmp_path / "plain.py").write_text("x = 1\n")
    (tmp_path / "broken.py").write_text("import celery\ndef f(:\n")
    monkeypatch.chdir(tmp_path)
    linter = Linter(load_settings(None, tmp_path, known_codes()))
    paths = [Path("broken.py"), Path("plain.py"), Path("tasks.py")] * 20
    serial = [triage_path(linter, p) for p in paths]
    monkeypatch.setattr(pool, "_context", lambda: multiprocessing.get_context("spawn"))
    monkeypatch.setattr(pool, "CHUNK_PATHS", 7)
    spawned = pool.triage_chunks(paths, linter, 2)
    assert [(r.path, r.findings, n, j is not None) for r, n, j, _ in spawned] == \
        [(r.path, r.findings, n, j is not None) for r, n, j, _ in serial]
    jobs = [j for _, _, j, _ in serial if j is not None]
    assert len(jobs) == 40
    assert pool.run_pool(jobs, linter.settings, 2) == [analyze_job(j, linter.settings) for j in jobs]


def test_parsing_is_shared_when_another_process_can_take_enough_beside_the_largest_file():
    from types import SimpleNamespace

    def jobs(*sizes):
        return [SimpleNamespace(data=b"x" * size) for size in sizes]

    # a run on one tasks file of a project with a large settings module (kitsune: 55 kB and 22 kB)
    assert pool.parallel_worthwhile(jobs(55_000, 22_000, 25_000, 3_000))
    assert not pool.parallel_worthwhile(jobs(300_000, 2_000))  # one large file: nothing to share
    assert not pool.parallel_worthwhile(jobs(60_000))
