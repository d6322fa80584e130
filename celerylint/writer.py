"""Writing fixed files: atomically, only if unchanged on disk, mode kept."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


class WriteError(Exception):
    pass


def write_atomic(path: Path, new: bytes, expected_old: bytes) -> None:
    """Replace ``path`` with ``new`` through a temporary file in the same
    directory and a rename, so a reader (or a crash) sees the old or the new
    content, never a mix.  Refuses when the file changed since it was read."""
    target = Path(os.path.realpath(path))  # write through a symlink, keep the link
    try:
        current = target.read_bytes()
    except OSError as exc:
        raise WriteError(f"cannot read it again: {exc.strerror or exc}") from None
    if current != expected_old:
        raise WriteError("it changed on disk while celerylint ran; not overwritten")
    st = target.stat()
    if not st.st_mode & 0o222:
        raise WriteError("the file is read-only; not changed")
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".celerylint.tmp")
    except OSError as exc:
        raise WriteError(f"cannot write next to it: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(new)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, st.st_mode & 0o7777)
        if hasattr(os, "chown"):
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except OSError:
                pass
        os.replace(tmp, target)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise WriteError(f"cannot write it: {exc.strerror or exc}") from None
