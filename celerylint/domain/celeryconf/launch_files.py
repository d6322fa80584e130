"""Worker options set outside Python: the launch files (Procfiles,
Dockerfiles, compose files, shell scripts, systemd units, supervisor
configs, ...) of the linted tree, read lazily (only when a rule is about to
report a missing setting, or for ``--show-apps``).  What is read from them
is in ``worker_cli.py``."""

from __future__ import annotations

from pathlib import Path

from ...core.walk import DEFAULT_EXCLUDE, LAUNCH_FILES
from ...core.walk import walk
from ...core.source import OTHER_FILE_MAX_BYTES, read_capped
from ..deploy.paths import COMPOSE as _COMPOSE
from .model import Model
from .tree_files import TreeFiles, linted_tree as _linted_tree, shared_tree_files

_MAX_BYTES = OTHER_FILE_MAX_BYTES  # 1 MiB, as for the files the project phase reads
# What makes a launch file worth keeping: a worker command line, the
# environment variables Celery reads before its configuration, RabbitMQ's consumer_timeout, and a compose
# service extending one of another file, which may hold the worker's command (domain/deploy).
_WANTED = (b"prefetch-multiplier", b"celery", b"CELERY_BROKER_URL", b"CELERY_RESULT_BACKEND", b"consumer_timeout",
           b"extends")


def _wanted(name: str, data: bytes) -> bool:
    """A launch file worth keeping: one that names a worker or what Celery
    reads, and also a Procfile, a Dockerfile or a compose file that builds
    an image and gives a command or names a script, which may name Celery
    only in the script they run (``worker: bin/run worker``,
    ``ENTRYPOINT ["/app/bin/run"]``, ``entrypoint: ... -- /app/worker.sh``)."""
    if name.startswith(("Procfile", "Dockerfile")) or name.endswith(".dockerfile"):
        return True
    if _COMPOSE.search(name) and ((b"build" in data and b"command" in data) or b".sh" in data):
        return True  # ``command: worker`` run by the ENTRYPOINT of the image it builds, or a script it names
    return any(w in data for w in _WANTED)


def prefetch_set_elsewhere(m: Model) -> bool:
    """``--prefetch-multiplier`` on a worker command line: in a compose
    file, or in the files that start workers (Procfile, shell scripts,
    Dockerfiles, systemd units, supervisor configs).  Any such file of the
    tree counts, whichever app it starts: precision first."""
    if any("prefetch-multiplier" in text for text in m.project.other_files.values()):
        return True
    return any("prefetch-multiplier" in text for text in launch_texts(m).values())


def launch_texts(m: Model) -> dict[str, str]:
    """``relative path -> text`` of the launch files that mention a worker or
    Celery's environment variables (the compose files the project phase
    already read included), read once per run."""
    cached = getattr(m, "_launch_texts", None)
    if cached is None:
        cached = m._launch_texts = {path: text for path, text in m.project.other_files.items()
                                    if _wanted(path.rpartition("/")[2], text.encode("utf-8", "replace"))}
        root = Path(m.root)
        shared = shared_tree_files(m)
        found = _launch_files(shared) if shared is not None else _scan_launch_files(_linted_tree(m))
        for path, data in found:
            try:
                rel = path.relative_to(root).as_posix()
            except ValueError:
                rel = path.as_posix()
            cached.setdefault(rel, data.decode("utf-8", "replace"))
    return cached


def _launch_files(shared: TreeFiles):
    for f in shared.files:
        if f.linted and LAUNCH_FILES.match(f.name):
            data = shared.read(f.path)
            if data is not None and _wanted(f.name, data):
                yield f.path, data


def _scan_launch_files(root: Path):
    for directory, dirnames, filenames in walk(str(root)):  # iterative: a deep tree is no RecursionError
        dirnames[:] = sorted(d for d in dirnames if d not in DEFAULT_EXCLUDE and not d.endswith(".egg-info"))
        for name in sorted(filenames):
            if not LAUNCH_FILES.match(name):
                continue
            path = Path(directory) / name
            try:  # OSError also for pipes, devices and files over the cap
                data = read_capped(path, _MAX_BYTES)
            except OSError:
                continue
            if _wanted(name, data):
                yield path, data
