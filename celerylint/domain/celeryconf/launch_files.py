"""Worker options set outside Python: whether a launch file (Procfile,
Dockerfile, compose file, shell script, systemd unit, ...) of the linted tree
passes ``--prefetch-multiplier`` to the worker."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...config import DEFAULT_EXCLUDE
from ...discovery import walk
from ...source import OTHER_FILE_MAX_BYTES, read_capped
from .model import Model

_LAUNCH_FILES = re.compile(r"^(?:Procfile.*|Dockerfile.*|Makefile|.*\.(?:sh|service|ini|toml|cfg|conf|ya?ml|json))$")
_MAX_BYTES = OTHER_FILE_MAX_BYTES  # 1 MiB, as for the files the project phase reads


def prefetch_set_elsewhere(m: Model) -> bool:
    """``--prefetch-multiplier`` on a worker command line: in a compose
    file, or in the files that start workers (Procfile, shell scripts,
    Dockerfiles, systemd units, supervisor configs).  Read lazily, only
    when CL103 is about to report a missing setting."""
    if any("prefetch-multiplier" in text for text in m.project.other_files.values()):
        return True
    cached = getattr(m, "_prefetch_cli", None)
    if cached is None:
        cached = m._prefetch_cli = _scan_launch_files(_linted_tree(m))
    return cached


def _linted_tree(m: Model) -> Path:
    """The directory holding every linted file: the project being linted, not
    everything beside it under the repository root."""
    try:
        common = os.path.commonpath([os.path.dirname(p) or "." for p in m.project.python_files])
    except ValueError:  # no files, or absolute and relative paths mixed
        common = ""
    return Path(m.root) / common


def _scan_launch_files(root: Path) -> bool:
    for directory, dirnames, filenames in walk(str(root)):  # iterative: a deep tree is no RecursionError
        dirnames[:] = [d for d in dirnames if d not in DEFAULT_EXCLUDE and not d.endswith(".egg-info")]
        for name in filenames:
            if not _LAUNCH_FILES.match(name):
                continue
            path = Path(directory) / name
            try:  # OSError also for pipes, devices and files over the cap
                if b"prefetch-multiplier" in read_capped(path, _MAX_BYTES):
                    return True
            except OSError:
                continue
    return False
