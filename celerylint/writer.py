"""Writing fixed files: atomically, only if unchanged on disk, mode kept, never
through a symbolic link."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .source import read_source


class WriteError(Exception):
    pass


def write_atomic(path: Path, new: bytes, expected_old: bytes) -> None:
    """Replace ``path`` with ``new`` through a temporary file in the same
    directory and a rename, so a reader (or a crash) sees the old or the new
    content, never a mix.  Refuses when the file changed since it was read."""
    if os.path.islink(path):  # checked by the fix loop too; here against a swap since
        raise WriteError("it is a symbolic link; not changed")
    target = Path(os.path.realpath(path))
    try:
        current = read_source(target)
    except OSError as exc:
        raise WriteError(f"cannot read it again: {exc.strerror or exc}") from None
    if current != expected_old:
        raise WriteError("it changed on disk while celerylint ran; not overwritten")
    try:
        st = target.stat()
    except OSError as exc:
        raise WriteError(f"cannot read it again: {exc.strerror or exc}") from None
    if not st.st_mode & 0o222 or not os.access(target, os.W_OK):
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
    except BaseException as exc:  # also KeyboardInterrupt: leave no temporary file behind
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if not isinstance(exc, OSError):
            raise
        raise WriteError(f"cannot write it: {exc.strerror or exc}") from None
    _sync_directory(target.parent)


def _sync_directory(directory: Path) -> None:
    """Make the rename durable (best effort; not every platform can)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
