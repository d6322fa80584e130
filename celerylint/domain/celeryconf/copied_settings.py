"""Settings profiles a Dockerfile copies into place: taiga's image runs
``cp docker/config.py settings/config.py`` and sets
``DJANGO_SETTINGS_MODULE=settings.config``, a module the tree does not hold.
The profile is read from the linted source, its relative imports resolved as
if it sat at its destination (``Model.copy_of``)."""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

# ``RUN cp docker/config.py settings/config.py`` or ``COPY conf/prod.py proj/settings/prod.py``
# in a Dockerfile: the image's settings module is a file kept elsewhere in the tree
_COPY = re.compile(rb"(?:\bcp|^[ \t]*COPY)[ \t]+(?:-[\w=-]+[ \t]+)*(?:\./)?([\w./-]+\.py)[ \t]+(?:\./)?([\w./-]+\.py)\b",
                   re.MULTILINE)


def _dockerfile_copies(m) -> list[tuple[str, str, str, set[str]]]:
    """``(destination, linted source, Dockerfile, DJANGO_SETTINGS_MODULE
    values)`` for each settings file a Dockerfile at the root or one
    directory below copies into place, when it also sets
    DJANGO_SETTINGS_MODULE (paths relative to the root; a bounded look, not
    a walk of the tree, since it is made for every Django app)."""
    cached = getattr(m, "_copies", None)
    if cached is not None:
        return cached
    from ...core.walk import DEFAULT_EXCLUDE
    from ...core.source import read_capped
    from .paths import DSM as _DSM
    from .paths import LAUNCH_FILE_MAX_BYTES as _MAX_BYTES

    root, linted, cached = Path(m.root), set(m.project.python_files), []
    try:
        tops = sorted(e.name for e in os.scandir(root) if e.is_dir() and e.name not in DEFAULT_EXCLUDE)
    except OSError:
        tops = []
    for directory in ("", *tops):
        try:
            names = sorted(e.name for e in os.scandir(root / directory) if e.name.startswith("Dockerfile"))
        except OSError:
            continue
        for name in names:
            rel = posixpath.join(directory, name)
            try:
                data = read_capped(root / rel, _MAX_BYTES)
            except OSError:
                continue
            if b"DJANGO_SETTINGS_MODULE" not in data:
                continue
            named = {v.group(1).decode("ascii", "replace").rstrip(".") for v in _DSM.finditer(data)}
            for match in _COPY.finditer(data):
                source, target = (g.decode("utf-8", "replace") for g in match.groups())
                if source in linted and target not in linted:
                    cached.append((target, source, rel, named))
    m._copies = cached
    return cached


def copied_profiles(m, here: str, package: str) -> list[tuple[str, str, str, str]]:
    """``(module, linted source, why, Dockerfile)`` of the profiles a
    Dockerfile copies into the settings directory ``here`` (of ``package``),
    each registered with the model (``Model.copy_of``)."""
    out = []
    for target, source, dockerfile, named in _dockerfile_copies(m):
        stem = posixpath.basename(target)[:-3]
        module = f"{package}.{stem}" if package else stem
        if posixpath.dirname(target) != here or "." in stem or stem == "__init__" or module not in named:
            continue
        m.copy_of(module, source)
        out.append((module, source, f"copied to {target} by {dockerfile}", dockerfile))
    return out
