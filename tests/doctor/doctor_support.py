"""A fake Redis for the doctor tests: a RESP server on 127.0.0.1 in a
thread, answering what a test tells it to (a reply of the wrong shape, a
reply sent a byte at a time, a length that lies).  Real Redis cannot send
those; everything real Redis can hold is tested against a real server
(``test_doctor.Server``)."""

from __future__ import annotations

import socket
import threading
import time

# A healthy broker's answers to what the doctor sends, by command name.
HEALTHY = {
    "AUTH": b"+OK\r\n",
    "SELECT": b"+OK\r\n",
    "PING": b"+PONG\r\n",
    "CONFIG": b"*2\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n",
    "SCAN": b"*2\r\n$1\r\n0\r\n*0\r\n",
    "ZCARD": b":0\r\n",
    "ZCOUNT": b":0\r\n",
    "LLEN": b":0\r\n",
}


def bulk(text: str | bytes) -> bytes:
    data = text.encode() if isinstance(text, str) else text
    return b"$%d\r\n%s\r\n" % (len(data), data)


def info(section: str, text: str) -> bytes:
    return bulk(f"# {section.capitalize()}\r\n{text}")


HEALTHY_INFO = {
    "memory": info("memory", "used_memory:1000\r\nmaxmemory:0\r\nmaxmemory_policy:noeviction\r\n"),
    "stats": info("stats", "evicted_keys:0\r\n"),
    "keyspace": info("keyspace", ""),
}


def parse(buffer: bytes):
    """One RESP command (an array of bulk strings) from the front of
    ``buffer``: (arguments, the rest), or None when it is incomplete."""
    if not buffer.startswith(b"*"):
        end = buffer.find(b"\r\n")
        return None if end < 0 else (buffer[:end].split(), buffer[end + 2:])  # an inline command
    end = buffer.find(b"\r\n")
    if end < 0:
        return None
    count, at, args = int(buffer[1:end]), end + 2, []
    for _ in range(count):
        end = buffer.find(b"\r\n", at)
        if end < 0:
            return None
        size = int(buffer[at + 1:end])
        if len(buffer) < end + 2 + size + 2:
            return None
        args.append(buffer[end + 2:end + 2 + size])
        at = end + 2 + size + 2
    return args, buffer[at:]


class FakeRedis:
    """``replies`` maps a command name (``"INFO"``, ``"ZRANGEBYSCORE"``; for
    INFO also ``"INFO memory"``) to the bytes to send, or to a callable
    taking the arguments and returning bytes or an iterable of bytes and
    pauses (a number: seconds to wait).  Anything else is answered as a
    healthy broker would.  ``commands`` records what was received."""

    def __init__(self, replies: dict | None = None) -> None:
        self.replies = replies or {}
        self.commands: list[list[bytes]] = []
        self.stopped = threading.Event()
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.listener.settimeout(0.1)
        self.port = self.listener.getsockname()[1]
        self.threads = [threading.Thread(target=self._accept, daemon=True)]
        self.threads[0].start()

    def url(self, auth: str = "", db: int = 0) -> str:
        return f"redis://{auth}127.0.0.1:{self.port}/{db}"

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.listener.accept()
            except (socket.timeout, OSError):
                continue
            worker = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self.threads.append(worker)
            worker.start()

    def _reply(self, args: list[bytes]):
        name = args[0].decode().upper()
        section = f"{name} {args[1].decode().lower()}" if len(args) > 1 else name
        reply = self.replies.get(section, self.replies.get(name))
        if reply is None:
            if name == "INFO":
                return HEALTHY_INFO.get(section.split()[-1], info("server", ""))
            return HEALTHY.get(name, b"-ERR unknown command\r\n")
        return reply(args) if callable(reply) else reply

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(0.1)
        buffer = b""
        try:
            while not self.stopped.is_set():
                parsed = parse(buffer)
                if parsed is None:
                    try:
                        chunk = conn.recv(65536)
                    except socket.timeout:
                        continue
                    if not chunk:
                        return
                    buffer += chunk
                    continue
                args, buffer = parsed
                self.commands.append(args)
                reply = self._reply(args)
                for piece in [reply] if isinstance(reply, bytes) else reply:
                    if self.stopped.is_set():
                        return
                    if isinstance(piece, (int, float)):
                        time.sleep(piece)
                    else:
                        conn.sendall(piece)
        except OSError:
            return  # the client went away
        finally:
            conn.close()

    def close(self) -> None:
        self.stopped.set()
        self.listener.close()
        for t in self.threads:
            t.join(5)


def trickle(header: bytes = b"$100000000\r\n", every: float = 0.5):
    """A reply that never ends: ``header``, then one byte every ``every`` s."""
    def reply(args):
        yield header
        while True:
            yield every
            yield b"x"
    return reply


def flood(header: bytes = b"$100000000\r\n", chunk: int = 1 << 20):
    """A reply as long as ``header`` says, sent as fast as the client reads."""
    def reply(args):
        yield header
        block = b"x" * chunk
        for _ in range(int(header[1:-2]) // chunk + 1):
            yield block
    return reply


def measured(args: list[str], cwd, env: dict, timeout: float = 60):
    """Run ``args`` to its end (killed after ``timeout`` s): (exit status,
    stdout, stderr, seconds, peak RSS in bytes of that process alone, from
    ``wait4``)."""
    import os
    import subprocess
    import tempfile

    import signal
    import sys

    started = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        # A small launcher forks the command: Linux keeps a process's peak RSS
        # across exec, so a child forked straight from a large test worker
        # (pytest-xdist) would report the worker's size.
        proc = subprocess.Popen([sys.executable, "-c", _LAUNCHER, *args], cwd=cwd, env=env, stdout=out, stderr=err,
                                start_new_session=True)
        killer = threading.Timer(timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
        killer.start()
        try:
            proc.wait()
        finally:
            killer.cancel()
        out.seek(0)
        err.seek(0)
        stderr, _, peak = err.read().decode("utf-8", "replace").rpartition("\nMAXRSS ")
        if not _:
            stderr, peak = peak, "0"
        return (proc.returncode, out.read().decode("utf-8", "replace"), stderr,
                time.monotonic() - started, int(peak.strip() or 0) * 1024)


_LAUNCHER = """import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
sys.stderr.write("\\nMAXRSS %d\\n" % usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""
