"""systemd units: ``ExecStart=`` of the ``[Service]`` section.  A template
unit (``name@.service``) runs once per instance: replicas unknown."""

from __future__ import annotations

from .process import Process
from .shell import logical_lines


def read(path: str, text: str, follow) -> list[Process]:
    name = path.rsplit("/", 1)[-1]
    replicas = None if "@." in name else 1
    section = ""
    out = []
    for number, line in logical_lines(text):
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped
            continue
        if section != "[Service]" or not stripped.startswith("ExecStart="):
            continue
        command_line = stripped[len("ExecStart="):].lstrip("-@+!:")
        for command, via, conditional in follow(command_line, path):
            out.append(Process(path, number, "systemd", name, command, replicas, via, conditional))
    return out
