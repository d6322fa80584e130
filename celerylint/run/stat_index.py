"""The stat index: what each file linted to, found again without reading it.

A warm run of a large tree should cost what ruff's does: a walk and a
``stat`` per file.  The content cache (``cache.py``) still reads and
prefilters every file to find its key; this index maps each relative path to
the ``(mtime_ns, size, inode, ctime_ns)`` the file had when it was read (as
one string) and to its result (``null`` for the usual file with no findings
and no facts; else its JSON text, decoded only when the file is unchanged),
so an unchanged file is neither read nor prefiltered.  A run on some files
(focus.py) reads the others only for their facts: those partial results are
kept beside the whole ones, under the path and the kind of reading
(``Linter.partial_kind``), for the next run on some files (a pre-commit
hook's); a whole run never takes them, and they are dropped once a whole
result of the same file content is kept.  The project phase's
findings are kept too, keyed by a hash of every fact and non-Python file it
reads, so that an unchanged tree imports neither libcst nor Celery.

Like git's index, it does not trust a file modified less than two seconds
before it was read (a write in the same timestamp tick could go unseen):
such a file is linted again next time.  One index per cache salt (celerylint
version and sources, settings, enabled checkers, root) lives in the cache
directory as ``index-<salt>.json``, written atomically; a lost race between
two runs costs misses, never a wrong hit, since every entry is checked
against the file's current ``stat``; entries of deleted files are dropped when the
index is next written.  An index that cannot be read, is not a regular file,
is larger than ``INDEX_MAX_BYTES`` or has another shape is empty; an entry of
another shape is a miss.  Runs that fix or diff read every file anyway and do
not use it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Union

from .cache_files import load_json
from ..core.model import FileResult, Finding

FORMAT = 4  # 2: signatures hold the ctime; 3: signatures and results as strings; 4: the project's reads
RACY_NS = 2_000_000_000
INDEX_MAX_BYTES = 256 << 20  # an index larger than this is neither written nor read


Kinds = Union[tuple[str, ...], Callable[[], tuple[str, ...]]]


def _keys(rel: str, kinds: Kinds):
    """(whole, key) of the entries that may serve ``rel``: its whole result,
    then its partial ones (``kinds`` asked only once the whole one did not serve)."""
    yield True, rel
    for kind in kinds() if callable(kinds) else kinds:
        yield False, f"{rel}\0{kind}"


def signature_text(sig) -> str:
    """A signature as the index keeps it."""
    return "%d %d %d %d" % tuple(sig)


def current_signature(path: Path | str) -> str | None:
    """``signature_text`` of the file as it is now; None when it cannot be stat'ed."""
    try:
        return signature_text(signature(os.stat(path)))
    except OSError:
        return None


def signature(st: os.stat_result) -> list[int]:
    """What identifies a file's content without reading it.  The ctime is
    set by the kernel on every change and cannot be set back, so an edit
    that keeps the size and restores the mtime (``os.utime``, ``touch -r``,
    ``rsync -t``) is still seen, as git's index sees it."""
    return [st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns]


class StatIndex:
    def __init__(self, directory: Path, salt: str, root: Path) -> None:
        self.path = directory / f"index-{salt}.json"
        self.root = root  # paths are relative to it
        self.seen: set[str] = set()
        self.entries: dict[str, list[Any]] = {}
        self.project: dict[str, Any] = {}
        self.changed = False
        self.whole: set[str] = set()  # the files whose whole result was found: never kept again as partial
        raw = load_json(self.path, INDEX_MAX_BYTES)
        if (type(raw) is dict and raw.get("format") == FORMAT and type(raw.get("files")) is dict
                and type(raw.get("project")) is dict):
            self.entries = raw["files"]  # each entry is checked when used
            self.project = raw["project"]

    def get(self, rel: str, path: Path | str, kinds: Kinds = ()) -> FileResult | None:
        """The result of ``rel`` if its file is unchanged: its whole result,
        or else a partial one of one of ``kinds`` (``Linter.partial_kinds``;
        a function is called only when no whole result serves)."""
        self.seen.add(rel)
        current: str | None = None
        for whole, key in _keys(rel, kinds):
            entry = self.entries.get(key)
            if type(entry) is not list or len(entry) != 2:
                continue
            current = current or current_signature(path)
            if current is None:
                return None
            sig, stored = entry
            found = self._result(rel, stored) if sig == current else None
            if found is not None:
                if whole:
                    self.whole.add(rel)
                return found
        return None

    def quiet_files(self, files: Iterable[tuple[str, str]], kinds_of: Callable[[str], tuple[str, ...]]) -> set[str]:
        """The relative paths among ``files`` ((rel, path) pairs) for which
        ``get`` would give a result with no finding and no fact, found
        without making it (``kinds_of(rel)``: their partial kinds).  The loop
        of a warm run over every file of the tree: the usual case (a whole
        result that is ``null``) is tried first, inline."""
        out: set[str] = set()
        entries, seen, whole = self.entries, self.seen, self.whole
        for rel, path in files:
            seen.add(rel)
            current = None
            entry = entries.get(rel)
            if type(entry) is list and len(entry) == 2:
                current = current_signature(path)
                if current is None:
                    continue
                if entry[0] == current:
                    if entry[1] is None:
                        whole.add(rel)
                        out.add(rel)
                    continue
            for kind in kinds_of(rel):
                entry = entries.get(f"{rel}\0{kind}")
                if type(entry) is not list or len(entry) != 2:
                    continue
                current = current or current_signature(path)
                if current is None:
                    break
                if entry[0] == current:
                    if entry[1] is None:
                        out.add(rel)
                    break
        return out

    @staticmethod
    def _result(rel: str, stored: Any) -> FileResult | None:
        if stored is None:
            return FileResult(rel)
        try:
            result = FileResult.from_stored(rel, json.loads(stored))
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError):
            return None
        result.stored_text = stored
        return result

    def put(self, result: FileResult, kind: str = "") -> None:
        """Remember ``result`` for its file (as partial of ``kind``, if given)
        unless it holds internal errors or the file was modified too recently
        to trust its timestamp."""
        sig = result.signature
        if sig is None or result.errors or time.time_ns() - sig[0] < RACY_NS or (kind and result.path in self.whole):
            return
        stored = None if result.blank() else result.stored_json()
        entry = [signature_text(sig), stored]
        key = f"{result.path}\0{kind}" if kind else result.path
        if self.entries.get(key) != entry:
            self.entries[key] = entry
            self.changed = True

    def project_findings(self, key: str) -> list[Finding] | None:
        """The project phase's findings kept for ``key``, while the files it
        read from disk besides the facts (``reads``) are unchanged."""
        if self.project.get("key") != key:
            return None
        try:
            reads = self.project.get("reads", {})
            if any(current_signature(os.path.join(self.root, rel)) != sig for rel, sig in reads.items()):
                return None
            return [Finding.from_dict(f) for f in self.project["findings"]]
        except (KeyError, TypeError, ValueError, AttributeError):
            return None

    def put_project(self, key: str, findings: list[Finding], reads: dict[str, str | None]) -> None:
        if self.project.get("key") != key or self.project.get("reads") != reads:
            self.project = {"key": key, "findings": [f.to_dict() for f in findings], "reads": reads}
            self.changed = True

    def save(self) -> None:
        """Write the index if anything changed, without the entries of files
        that no longer exist."""
        if not self.changed:
            return
        for key in [k for k in self.entries if k.partition("\0")[0] not in self.seen]:
            if not os.path.lexists(os.path.join(self.root, key.partition("\0")[0])):
                del self.entries[key]
        for key in [k for k in self.entries if "\0" in k]:  # a whole result of the same content serves
            part, whole = self.entries[key], self.entries.get(key.partition("\0")[0])
            if type(whole) is list and type(part) is list and whole[:1] == part[:1]:
                del self.entries[key]

        payload = json.dumps({"format": FORMAT, "files": self.entries, "project": self.project},
                             separators=(",", ":"), default=str).encode()
        if len(payload) > INDEX_MAX_BYTES:
            return  # it would be refused when read
        from .cache_files import prepare_directory, write_replacing

        try:
            prepare_directory(self.path.parent)
            write_replacing(self.path, payload)
        except OSError:
            pass
