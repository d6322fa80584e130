"""The text of a linted file as the fix loop holds it (it may have changed
it in an earlier round), else as on disk: what fixes and the readers of
non-Python files see."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...core.source import DecodeError, decode


def read(model: Any, path: str) -> str | None:
    """The text of ``path`` (relative to ``model.root``), or None when it cannot be read."""
    texts = getattr(model.project, "texts", None)
    if texts and path in texts:
        return texts[path]
    full = Path(model.root) / path
    note = getattr(model.project, "note_read", None)
    if note is not None:  # what the cached project findings depend on (run/project.py)
        note(path, full)
    try:
        return decode(full.read_bytes()).text
    except (OSError, DecodeError):
        return None
