"""The result cache: what linting a file produced, keyed by what it depends on.

An entry holds one file's findings *and* facts, so an unchanged file is
neither parsed for its own rules nor for the project phase.  Its key is a
hash of the file's bytes, its path and module name (findings carry the path,
relative imports depend on the module name), the checkers enabled for it,
``Settings.fingerprint()``, the celerylint version and a stamp of the
installed celerylint and libcst sources (so an edited checkout never serves
stale results).  Only files that reached libcst are cached: for the others
the byte prefilter is cheaper than a lookup.

Location: ``.celerylint_cache/`` in the project root (``Settings.root``: the
repository holding the working directory, else the working directory), or
``$CELERYLINT_CACHE_DIR``.  Linting a path outside the working directory
still uses that cache, never one next to the linted files (they may be
read-only or belong to someone else); entries are content-addressed, so
sharing one cache between checkouts is correct.  A ``.celerylint_cache``
that is a symbolic link (or resolves outside the root) is not used, nor a
subdirectory of it that is one: they may have come with the checkout.

Entries are written to a temporary file and renamed into place, so two runs
sharing the cache see a whole entry or none; anything unreadable, not a
regular file, larger than ``ENTRY_MAX_BYTES`` or not of the shape written is
a miss.
A directory that cannot be written just means no cache.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from .. import __version__
from ..config.settings import Settings
from ..core.model import FileResult
from .cache_files import load_json, prepare_directory, write_replacing

DIRNAME = ".celerylint_cache"
ENV = "CELERYLINT_CACHE_DIR"
FORMAT = 1
ENTRY_MAX_BYTES = 64 << 20  # one file's findings and facts; a larger entry is neither written nor read


def usable_cache_dir(root: Path, configured: Path | None = None) -> tuple[Path | None, str | None]:
    """The cache directory, or None and why it is not used.  ``$CELERYLINT_CACHE_DIR``
    is used as given.  The default ``.celerylint_cache`` comes with the
    checkout: when it is a symbolic link, or resolves outside the root, a
    committed link could make celerylint write (and drop a ``.gitignore``
    with ``*``) wherever it points, so the run goes without a cache."""
    explicit = configured or os.environ.get(ENV)  # configured: --cache-dir or cache-dir (cli_settings.py)
    if explicit:
        return Path(explicit), None
    directory = root / DIRNAME
    if directory.is_symlink():
        return None, f"{directory}: is a symbolic link; running without the cache (set ${ENV} for a cache elsewhere)"
    real, base = os.path.realpath(directory), os.path.realpath(root)
    if os.path.commonpath([real, base]) != base:
        return None, f"{directory}: resolves outside {root}; running without the cache (set ${ENV} for a cache elsewhere)"
    return directory, None


def _source_stamp() -> str:
    """Sizes and mtimes of celerylint's own files, and libcst's version."""
    import importlib.util

    parts = []
    for dirpath, dirnames, filenames in os.walk(Path(__file__).parent):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                st = os.stat(os.path.join(dirpath, name))
                parts.append(f"{dirpath}/{name}:{st.st_size}:{st.st_mtime_ns}")
    spec = importlib.util.find_spec("libcst")
    if spec is not None and spec.origin:
        try:
            parts.append((Path(spec.origin).parent / "_version.py").read_text(encoding="utf-8", errors="replace"))
        except OSError:
            parts.append(spec.origin)
    return "\n".join(parts)


class Cache:
    """The salt (settings fingerprint, source stamp) and the modules that
    hash and serialise are computed and imported on the first file that
    needs libcst: a pre-commit run on files without Celery content pays
    nothing for the cache."""

    def __init__(self, directory: Path, settings: Settings) -> None:
        self.directory = directory
        self.settings = settings
        self._salt: bytes | None = None
        self._ready = False
        self.writable = True
        self.hits = self.misses = 0

    @property
    def salt(self) -> bytes:
        if self._salt is None:  # computed only when a file needs libcst
            import hashlib

            text = f"{FORMAT}\n{__version__}\n{self.settings.fingerprint()}\n{_source_stamp()}"
            self._salt = hashlib.sha256(text.encode()).digest()
        return self._salt

    def key(self, data: bytes, path: str, module_name: str | None, checkers: Sequence[str]) -> str:
        import hashlib

        h = hashlib.sha256(self.salt)
        # a file name that is not UTF-8 holds lone surrogates: hash its bytes
        h.update(f"\0{path}\0{module_name}\0{','.join(checkers)}\0".encode("utf-8", "surrogateescape"))
        h.update(data)
        return h.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.directory / key[:2] / key[2:]

    def get(self, key: str, path: str) -> FileResult | None:
        raw = load_json(self._entry(key), ENTRY_MAX_BYTES)
        try:
            result = None if raw is None else FileResult.from_stored(path, raw)
        except (ValueError, KeyError, TypeError, AttributeError):
            result = None
        if result is None:
            self.misses += 1
            return None
        self.hits += 1
        return result

    def put(self, key: str, result: FileResult) -> None:
        """Store ``result`` unless it records an internal error (a rule that
        raised must raise again next time, not be silently remembered)."""
        if result.errors or not self.writable:
            return
        import json

        payload = json.dumps(result.stored(), separators=(",", ":"), default=str).encode()
        if len(payload) > ENTRY_MAX_BYTES:
            return  # it would be refused when read
        target = self._entry(key)
        try:
            if not self._ready:
                prepare_directory(self.directory)
                self._ready = True
            target.parent.mkdir(exist_ok=True)
            if target.parent.is_symlink():  # written into the repository as a link: write nothing through it
                return
            write_replacing(target, payload)
        except OSError:
            self.writable = False

    def stat_index(self, checkers: Sequence[str]):
        """The stat index for this salt, root and set of checkers."""
        import hashlib

        from .stat_index import StatIndex

        text = f"{self.settings.root}\0{','.join(checkers)}".encode()
        return StatIndex(self.directory, hashlib.sha256(self.salt + text).hexdigest()[:16], self.settings.root)


