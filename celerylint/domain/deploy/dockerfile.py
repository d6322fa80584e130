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


_FROM = re.compile(r"^(\S+)(?:\s+AS\s+(\S+))?\s*$", re.I)

Instruction = tuple[int, list[str] | str]


def _stages(text: str) -> list[tuple[str | None, Instruction | None, Instruction | None]]:
    """``(name, CMD, ENTRYPOINT)`` of each stage, in order; a stage built
    ``FROM`` an earlier one starts with its ``CMD`` and ``ENTRYPOINT``."""
    stages: list[tuple[str | None, Instruction | None, Instruction | None]] = []
    named: dict[str, tuple[Instruction | None, Instruction | None]] = {}
    name = cmd = entrypoint = None
    started = False
    for number, line in logical_lines(text):
        found = _INSTRUCTION.match(line)
        if found is None:
            continue
        what = found.group(1).upper()
        if what == "FROM":
            if started:
                stages.append((name, cmd, entrypoint))
                if name:
                    named[name.lower()] = (cmd, entrypoint)
            words = [w for w in found.group(2).split() if not w.startswith("--")]
            header = _FROM.match(" ".join(words))
            base, name = (header.group(1), header.group(2)) if header else ("", None)
            cmd, entrypoint = named.get(base.lower(), (None, None))
            started = True
        elif what == "CMD":
            cmd = (number, _words(found.group(2)))
        elif what == "ENTRYPOINT":
            entrypoint = (number, _words(found.group(2)))
    stages.append((name, cmd, entrypoint))
    return stages


def _final(text: str, stage: str | None = None) -> tuple[Instruction | None, Instruction | None]:
    """``(CMD, ENTRYPOINT)`` of the last stage (of the stage named
    ``stage``: ``(None, None)`` when there is none), each ``(line, words)`` or None."""
    stages = _stages(text)
    if stage is None:
        return stages[-1][1:]
    chosen = [s for s in stages if s[0] and s[0].lower() == stage.lower()]
    return chosen[-1][1:] if chosen else (None, None)


def is_final_stage(text: str, stage: str) -> bool:
    last = _stages(text)[-1][0]
    return last is not None and last.lower() == stage.lower()


def command(text: str, stage: str) -> list[str] | str | None:
    """What a container of the stage ``stage`` runs when nothing replaces
    its command: its ``CMD`` (after an exec-form ``ENTRYPOINT``), else its
    ``ENTRYPOINT``; None without either."""
    cmd, entry = _final(text, stage)
    if cmd is not None and entry is not None and isinstance(cmd[1], list) and isinstance(entry[1], list):
        return entry[1] + cmd[1]
    return cmd[1] if cmd is not None else entry[1] if entry is not None else None


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
