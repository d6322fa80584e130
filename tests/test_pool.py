"""The work sharing under both pools: every turn is done exactly once and
reaches the parent, even when a child dies."""

from __future__ import annotations

import os
import time

from celerylint import pool


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
