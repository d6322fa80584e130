"""When the human-readable formats use colour, and how wide the terminal is.

``--color always`` and ``--color never`` win, wherever the report goes.
With ``--color auto`` (the default) a report written with ``--output`` has
no colour; on standard output a non-empty ``NO_COLOR`` turns colour off
(https://no-color.org), else a non-empty ``FORCE_COLOR`` turns it on
(https://force-color.org: CI logs that show colour), else colour is used
when standard output is a terminal."""

from __future__ import annotations

import os
import sys

CHOICES = ("auto", "always", "never")
MIN_WIDTH = 40


def use_color(choice: str, to_terminal: bool) -> bool:
    if choice != "auto":
        return choice == "always"
    if not to_terminal or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return _isatty()


def terminal_width(to_terminal: bool) -> int | None:
    """The terminal's width when the report goes to one, else None (a file
    or a pipe gets every line whole)."""
    if not (to_terminal and _isatty()):
        return None
    import shutil

    return max(shutil.get_terminal_size().columns, MIN_WIDTH)


def _isatty() -> bool:
    try:
        return sys.stdout is not None and sys.stdout.isatty()
    except (ValueError, AttributeError):
        return False


class Style:
    """ANSI styling through click, or none."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, **kw) -> str:
        if not self.color or not text:
            return text
        import click

        return click.style(text, **kw)

    def severity(self, text: str, severity: str) -> str:
        return self(text, fg={"error": "red", "warning": "yellow"}.get(severity, "blue"), bold=True)
