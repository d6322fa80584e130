"""Procfiles (Heroku, Dokku, honcho, foreman): ``type: command``, one process
type a line.  How many dynos run a type is set outside the file: unknown."""

from __future__ import annotations

import re

from .process import Process

_LINE = re.compile(r"^([A-Za-z0-9_-]+):[ \t]*(\S.*)$")


def read(path: str, text: str, follow) -> list[Process]:
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        found = _LINE.match(line)
        if found is None:
            continue
        for command, via, conditional in follow(found.group(2), path):
            out.append(Process(path, number, "procfile", found.group(1), command, None, via, conditional))
    return out
