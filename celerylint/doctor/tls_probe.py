"""TLS on one side only: a ``rediss://`` URL against a plain Redis (the
TLS handshake would wait for the deadline: the server takes the
ClientHello for the start of a command), or ``redis://`` against a TLS
port.  A short probe sends ``PING`` in plain text (read-only, in
``connect.READ_COMMANDS``) and looks at the first bytes of the answer."""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

from .connect import Unsupported

PROBE_WAIT = 1.5  # s at most
PLAIN = "the server answers plain Redis there, not TLS: use redis:// (or enable TLS on the server)"
TLS = "the server expects TLS there: use rediss://"


def answer(t, deadline: float) -> str | None:
    """"plain" when a plain Redis answered, "tls" when a TLS server did
    (an alert) or closed the connection at once; None when unsure."""
    if t.kind not in ("tcp", "tls"):
        return None
    parts = urlsplit(t.url)
    try:
        host, port = parts.hostname or "localhost", parts.port or 6379
    except ValueError:
        return None
    wait = min(PROBE_WAIT, deadline - time.monotonic())
    if wait <= 0:
        return None
    try:
        with socket.create_connection((host, port), timeout=wait) as s:
            s.sendall(b"PING\r\n")
            first = s.recv(16)
    except (socket.timeout, TimeoutError):
        return None
    except ConnectionResetError:
        return "tls"
    except OSError:
        return None
    if first[:1] in (b"+", b"-"):
        return "plain"
    if not first or first[:1] in (b"\x15", b"\x16"):
        return "tls"
    return None


def plain_server(t, deadline: float) -> None:
    """Unsupported, at once, when a ``rediss://`` URL names a plain Redis."""
    if answer(t, deadline) == "plain":
        raise Unsupported(f"{t.shown}: {PLAIN}")


def hint(t, deadline: float) -> str:
    """A hint for an error of ``t`` when TLS is on one side only, or ""
    (the probe runs only in what is left of the run's deadline)."""
    found = answer(t, deadline)
    if t.kind == "tls" and found == "plain":
        return f"; {PLAIN}"
    if t.kind == "tcp" and found == "tls":
        return f"; {TLS}"
    return ""
