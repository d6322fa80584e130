"""Files of the cache directory: creating it, replacing a file atomically, reading JSON within a limit.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def load_json(path: Path, limit: int) -> Any:
    """The JSON value of a cache file, or None when it cannot be read, is
    not a regular file (a link to ``/dev/zero``, a pipe), is larger than
    ``limit`` bytes, or is not JSON (also nested too deeply to parse)."""
    import json

    from ..core.source import read_capped

    try:
        return json.loads(read_capped(path, limit))
    except (OSError, ValueError, RecursionError):
        return None


def prepare_directory(directory: Path) -> None:
    """Create the cache directory with a ``.gitignore`` that ignores it all."""
    directory.mkdir(parents=True, exist_ok=True)
    ignore = directory / ".gitignore"
    if not ignore.exists():
        write_replacing(ignore, b"# Created by celerylint.\n*\n")


def write_replacing(target: Path, payload: bytes) -> None:
    """Write ``payload`` to a temporary file beside ``target`` and rename it
    into place: a reader sees the whole of it or none."""
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
