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

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: leftovers are told apart by age alone
    fcntl = None

TEMP_SUFFIX = ".celerylint.tmp"
# tempfile.mkstemp(prefix=".<name>.", suffix=TEMP_SUFFIX): 8 characters of its alphabet between them
_TEMP_NAME = re.compile(r"\..+\.[a-z0-9_]{8}" + re.escape(TEMP_SUFFIX), re.DOTALL)
# A writer holds an exclusive lock on its temporary file until the rename;
# the system drops it when the writer dies, SIGKILL included.  An unlocked
# temporary file is a dead run's leftover once older than the moment between
# creating and locking it; without locks (Windows), once an hour old.
LEFTOVER_SECONDS = 2
STALE_TEMP_SECONDS = 3600
_young: dict[str, list[str]] = {}  # directory swept in this process -> leftovers too young to remove then


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
    remove_stale_temporaries(target.parent, target.name)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=TEMP_SUFFIX)
    except OSError as exc:
        raise WriteError(f"cannot write next to it: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            _lock(fh.fileno())  # held until the rename: a later run knows the file is not a leftover
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


def remove_stale_temporaries(directory: Path, target: str | None = None) -> None:
    """Remove the temporary files that ``--fix`` runs killed while writing
    (SIGKILL, power loss) left in ``directory``, before writing there:
    regular files (not links) named exactly as ``write_atomic`` names them,
    ``.<name>.<8 random characters>.celerylint.tmp``, that no live writer
    holds locked.  The directory is swept once per run, for leftovers more
    than ``LEFTOVER_SECONDS`` old; those of ``target`` (the file about to be
    written) go whatever their age.  Without file locks, only leftovers more
    than ``STALE_TEMP_SECONDS`` old go.  Such files are never linted (not ``*.py``)."""
    key = os.fspath(directory)
    if key not in _young:
        _young[key] = _sweep(key)
    if target is None or fcntl is None:
        return
    prefix = f".{target}."
    mine = [name for name in _young[key] if name.startswith(prefix) and len(name) == len(prefix) + 8 + len(TEMP_SUFFIX)]
    for name in mine:
        if _remove_unlocked(os.path.join(key, name)):
            _young[key].remove(name)


def _sweep(directory: str) -> list[str]:
    """Remove the old enough leftovers of ``directory``; the younger ones' names."""
    now = time.time()
    cutoff = now - (LEFTOVER_SECONDS if fcntl is not None else STALE_TEMP_SECONDS)
    young: list[str] = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if not entry.name.endswith(TEMP_SUFFIX) or not _TEMP_NAME.fullmatch(entry.name):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not stat.S_ISREG(st.st_mode):
                    continue
                if st.st_mtime < now - STALE_TEMP_SECONDS:  # also where the file system has no locks
                    try:
                        os.unlink(entry.path)
                    except OSError:
                        pass
                elif st.st_mtime >= cutoff or not _remove_unlocked(entry.path):
                    young.append(entry.name)
    except OSError:
        pass
    return young


def _lock(fd: int) -> None:
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a file system without locks: the file is still removed when an hour old
            pass


def _remove_unlocked(path: str) -> bool:
    """Remove ``path`` unless a live writer holds its lock; True when removed."""
    if fcntl is None:
        try:
            os.unlink(path)
            return True
        except OSError:
            return False
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.unlink(path)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


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
