"""supervisord ``[program:x]`` sections: ``command=`` and ``numprocs=``
(default 1; ``%(ENV_X)s`` is unknown).  A ``command=`` may go on over
indented lines, as any value of the INI format supervisord reads."""

from __future__ import annotations

import re

from .process import Process

_SECTION = re.compile(r"^\s*\[([^\]]*)\]")
_KEY = re.compile(r"^\s*([A-Za-z_]+)\s*=\s*(.*)$")


def read(path: str, text: str, follow) -> list[Process]:
    programs: list[dict] = []
    current = None
    last, indent = None, 0  # the key of the last value read, and its line's indentation
    for number, line in enumerate(text.splitlines(), 1):
        depth = len(line) - len(line.lstrip())
        if current is not None and last == "command" and depth > indent and line.strip() \
                and not line.lstrip().startswith((";", "#")):  # indented deeper than the key: its value goes on
            current["command"] += " " + line.strip()
            continue
        last, indent = None, depth
        section = _SECTION.match(line)
        if section is not None:
            name = section.group(1).strip()
            current = {"name": name[8:], "numprocs": "1"} if name.startswith("program:") else None
            if current is not None:
                programs.append(current)
            continue
        found = _KEY.match(line)
        if current is None or found is None:
            continue
        key, value = found.group(1).lower(), found.group(2).strip()
        last = key
        if key == "command":
            current["command"], current["line"] = value, number
        elif key == "numprocs":
            current["numprocs"] = value
    out = []
    for program in programs:
        if "command" not in program:
            continue
        numprocs = program["numprocs"]
        replicas = int(numprocs) if numprocs.isdigit() else None
        # ``%(ENV_X)s`` and the like: an expansion celerylint does not resolve, so unknown (cmdline.resolve)
        for command, via, conditional in follow(program["command"], path):
            out.append(Process(path, program["line"], "supervisor", program["name"], command, replicas, via, conditional))
    return out
