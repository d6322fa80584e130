"""Dockerfiles: the ``CMD`` and ``ENTRYPOINT`` of the last stage (exec form,
a JSON list, or shell form), and what ``COPY`` puts where (so that a compose
``command: /start-celeryworker`` finds the script, and ``/app/bin/run``
after ``COPY . /app`` is the tree's ``bin/run``).  An image alone does
not say how many containers run it: replicas unknown."""

from __future__ import annotations

import json
import re

from .process import Process
from .shell import logical_lines

_INSTRUCTION = re.compile(r"^\s*(FROM|CMD|ENTRYPOINT|COPY|ADD)\s+(.*)$", re.I)


def _words(argument: str) -> list[str] | str:
    """An exec-form list, or the shell-form text."""
    argument = argument.strip()
    if argument.startswith("["):
        try:
            value = json.loads(argument)
        except ValueError:
            return argument
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
    return argument


def _final(text: str) -> tuple[tuple[int, list[str] | str] | None, tuple[int, list[str] | str] | None]:
    """``(CMD, ENTRYPOINT)`` of the last stage, each ``(line, words)`` or None."""
    cmd = entrypoint = None
    for number, line in logical_lines(text):
        found = _INSTRUCTION.match(line)
        if found is None:
            continue
        what = found.group(1).upper()
        if what == "FROM":
            cmd = entrypoint = None  # a new stage
        elif what == "CMD":
            cmd = (number, _words(found.group(2)))
        elif what == "ENTRYPOINT":
            entrypoint = (number, _words(found.group(2)))
    return cmd, entrypoint


def entrypoint(text: str) -> list[str] | None:
    """The image's exec-form ``ENTRYPOINT``, which a compose ``command:``
    (replacing ``CMD``) is appended to; None without one."""
    found = _final(text)[1]
    return found[1] if found is not None and isinstance(found[1], list) else None


def read(path: str, text: str, follow) -> list[Process]:
    cmd, entry = _final(text)
    out = []
    for chosen in (cmd, entry):
        if chosen is None:
            continue
        number, words = chosen
        if isinstance(words, list) and chosen is cmd and entry is not None and isinstance(entry[1], list):
            words = entry[1] + words  # exec-form ENTRYPOINT runs with CMD as its arguments
        for command, via, conditional in follow(words, path):
            out.append(Process(path, number, "dockerfile", path.rsplit("/", 1)[-1], command, None, via, conditional))
        if out:
            break
    return out


def copies(path: str, text: str) -> dict[str, str]:
    """``destination -> source`` of the file's ``COPY``/``ADD`` of one file
    or directory (``COPY . /app``: ``/app/bin/run`` is ``bin/run``)."""
    out = {}
    for _, line in logical_lines(text):
        found = _INSTRUCTION.match(line)
        if found is None or found.group(1).upper() not in ("COPY", "ADD"):
            continue
        words = [w for w in found.group(2).split() if not w.startswith("--")]
        if len(words) == 2:
            out[words[1]] = words[0]
    return out
