"""Run the real ``celerylint`` command in a forked process of an interpreter
that has imported it already: what ``python -m celerylint`` does, without
paying, for each of the suite's many hundred runs, the interpreter's start
and the imports (celerylint, click, libcst, the checkers: about half a
second each).

The server (this file, run as a script with a socket path) imports the
command line, libcst and every module of the package, then serves one
request at a time: it forks, and the child takes the request's working
directory, environment, argument list, standard input and output files
and runs ``celerylint.cli.commands.entry`` as ``__main__`` would, then
exits with its status.  The server answers with the child's pid, then
with its exit status, as ``subprocess`` gives it (``-N`` when killed by
signal N).

``conftest.cli`` uses it unless the run needs a fresh interpreter (an
environment variable Python reads when it starts: ``PYTHON*``, ``LANG``,
``LC_*``) or ``CELERYLINT_TEST_SUBPROCESS`` is set.
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

STARTUP_ENV = ("PYTHON", "LANG", "LC_")  # read when an interpreter starts: those runs get a real one


def _preload() -> None:
    import importlib
    import pkgutil

    import libcst  # noqa: F401

    import celerylint
    from celerylint.cli import commands  # noqa: F401

    for info in pkgutil.walk_packages(celerylint.__path__, "celerylint."):
        if info.name.endswith("__main__") or ".server" in info.name or ".doctor" in info.name:
            continue  # __main__ runs the command; the server and doctor import optional extras
        try:
            importlib.import_module(info.name)
        except Exception:  # an optional extra missing: the child imports what it can, as a run would
            pass


def _child(request: dict) -> None:
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, (name, mode) in enumerate(((request["stdin"], os.O_RDONLY), (request["stdout"], os.O_WRONLY),
                                       (request["stderr"], os.O_WRONLY))):
        opened = os.open(name, mode)
        os.dup2(opened, fd)
        os.close(opened)
    # the handlers a fresh interpreter starts with
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    sys.argv = ["celerylint", *request["args"]]
    code = 0
    try:
        from celerylint.cli.commands import entry

        entry()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException:  # what the interpreter would print before exiting with 1
        import traceback

        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code)


def serve(path: str) -> None:
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]  # as ``python -m celerylint`` does: the linted tree is never importable
    _preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(8)
    print("ready", flush=True)
    while True:
        connection, _ = listener.accept()
        pid = None
        try:
            with connection, connection.makefile("rw") as stream:
                request = json.loads(stream.readline())
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    connection.close()
                    _child(request)
                stream.write(f"{pid}\n")
                stream.flush()
                _, status = os.waitpid(pid, 0)
                pid = None
                stream.write(f"{os.waitstatus_to_exitcode(status)}\n")
                stream.flush()
        except OSError:  # the client gave up (a timeout, which kills the child): the next one is served
            if pid:
                os.waitpid(pid, 0)


class ForkServer:
    """A server started on first use, for the life of the test process."""

    def __init__(self) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="celerylint-forkserver-"))
        self.path = str(self.directory / "socket")
        self.process = subprocess.Popen([sys.executable, __file__, self.path], stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
        if self.process.stdout.readline().strip() != "ready":
            raise RuntimeError("the fork server did not start")

    def run(self, args: list[str], cwd: Path, env: dict, input: str | None, timeout: float):
        with tempfile.TemporaryDirectory(dir=self.directory) as scratch:
            files = {name: Path(scratch) / name for name in ("stdin", "stdout", "stderr")}
            files["stdin"].write_text(input or "")
            for name in ("stdout", "stderr"):
                files[name].write_bytes(b"")
            request = {"args": list(args), "cwd": str(cwd), "env": env, **{k: str(v) for k, v in files.items()}}
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
                client.settimeout(timeout)
                client.connect(self.path)
                with client.makefile("rw") as stream:
                    stream.write(json.dumps(request) + "\n")
                    stream.flush()
                    pid = int(stream.readline())
                    try:
                        code = int(stream.readline())
                    except (socket.timeout, TimeoutError):
                        os.kill(pid, signal.SIGKILL)
                        raise subprocess.TimeoutExpired(["celerylint", *args], timeout) from None
            # decoded as ``subprocess.run(text=True)`` does: the locale's encoding, universal newlines
            out, err = (io.TextIOWrapper(io.BytesIO(files[n].read_bytes())).read() for n in ("stdout", "stderr"))
        return subprocess.CompletedProcess([sys.executable, "-m", "celerylint", *args], code, out, err)

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        for entry in self.directory.iterdir():
            entry.unlink()
        self.directory.rmdir()


if __name__ == "__main__":
    serve(sys.argv[1])
