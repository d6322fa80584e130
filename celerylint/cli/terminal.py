"""Writing to the terminal: the report's bytes to stdout or ``--output``,
messages to stderr, and the exit on a usage error."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import click


def err(message: str) -> None:
    """One message on stderr, its control characters escaped (it may quote
    file names and file content).  A stderr that cannot be written to
    (closed, a full disk) loses the message, nothing else."""
    from ..reporters.printable import printable

    try:
        click.echo(printable(message, newlines=True), err=True)
    except (OSError, ValueError):
        pass


def fail(message: str) -> None:
    err(f"celerylint: error: {message}")
    sys.exit(2)


def emit(report: bytes, output: Path | None) -> None:
    """The report to ``--output`` or standard output."""
    if output is not None:
        try:
            output.write_bytes(report)
        except OSError as exc:
            fail(f"cannot write {output}: {exc.strerror or exc}")
    elif report:
        write_stdout(report)


def write_stdout(data: bytes) -> None:
    """Write the report's bytes to standard output as they are: not through
    ``click.echo``, which re-encodes text and strips escape sequences when
    stdout is not a terminal.  A stdout that fails (``>/dev/full``) is one
    line on stderr and exit status 2; a reader that left (``| head``), exit
    status 2 alone."""
    stream = sys.stdout
    try:
        stream.flush()
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError):  # not a file (tests, an embedding application)
            buffer = getattr(stream, "buffer", None)
            if buffer is None:
                stream.write(data.decode("utf-8", "replace"))
            else:
                buffer.write(data)
            stream.flush()
            return
        write_fd(fd, data)
    except (OSError, ValueError) as exc:  # ValueError: a stream closed under us
        stdout_to_devnull()  # what is left in its buffer must not fail again at exit
        if getattr(exc, "errno", None) == errno.EPIPE:  # the reader left (``| head``): nothing to say
            sys.exit(2)
        fail(f"cannot write the report to standard output: {getattr(exc, 'strerror', None) or exc}")


def write_fd(fd: int, data: bytes) -> None:
    """All of ``data``, or an OSError: a buffered stream returns quietly
    after a partial write to a pipe its reader closed, losing the rest."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:  # a descriptor left non-blocking by whoever gave it to us
            import select

            select.select([], [fd], [])


def stdout_to_devnull() -> None:
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass
