"""Writing fixed files: atomically, only if unchanged on disk, mode kept, never
through a symbolic link; the temporary files of killed runs are cleaned up."""

from __future__ import annotations

import os
import re
import stat
import tempfile
import time
from pathlib import Path

from ..core.source import read_source

TEMP_SUFFIX = ".celerylint.tmp"
# tempfile.mkstemp(prefix=".<name>.", suffix=TEMP_SUFFIX): 8 characters of its alphabet between them
_TEMP_NAME = re.compile(r"\..+\.[a-z0-9_]{8}" + re.escape(TEMP_SUFFIX), re.DOTALL)
STALE_TEMP_SECONDS = 3600  # a temporary file lives milliseconds; one an hour old was left by a killed run
_swept: set[str] = set()  # directories already cleaned in this process


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
    remove_stale_temporaries(target.parent)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=TEMP_SUFFIX)
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


def remove_stale_temporaries(directory: Path) -> None:
    """Remove the temporary files that ``--fix`` runs killed while writing
    (SIGKILL, power loss) left in ``directory``, once per run and directory,
    before writing there: regular files (not links) named exactly as
    ``write_atomic`` names them, ``.<name>.<8 random characters>.celerylint.tmp``,
    and last modified more than ``STALE_TEMP_SECONDS`` ago, so the temporary
    file of a run still writing (seconds old) is never touched.  Such files
    are never linted (not ``*.py``)."""
    key = os.fspath(directory)
    if key in _swept:
        return
    _swept.add(key)
    cutoff = time.time() - STALE_TEMP_SECONDS
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if not entry.name.endswith(TEMP_SUFFIX) or not _TEMP_NAME.fullmatch(entry.name):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode) and st.st_mtime < cutoff:
                        os.unlink(entry.path)
                except OSError:
                    pass
    except OSError:
        pass


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
