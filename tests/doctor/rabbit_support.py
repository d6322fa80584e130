"""A real RabbitMQ for the doctor tests (Debian's ``rabbitmq-server`` with
the management plugin), and a loopback HTTP proxy that records the
methods of the requests it forwards.

The server binds to 127.0.0.1 only (AMQP, management, Erlang distribution,
and its own ``epmd`` on a free port), keeps its data and logs in a
temporary directory, and is stopped by process id: ``rabbitmq-server``'s
process group, then the ``epmd`` this module started."""

from __future__ import annotations

import base64
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

# Debian's /usr/sbin/rabbitmq-server switches to the ``rabbitmq`` user, who may not
# write the test's directory; the script it wraps runs as whoever starts it
SERVER = ("/usr/lib/rabbitmq/bin/rabbitmq-server" if os.path.exists("/usr/lib/rabbitmq/bin/rabbitmq-server")
          else shutil.which("rabbitmq-server"))
EPMD = shutil.which("epmd")
MISSING = ("rabbitmq-server is not installed (.ci/run installs it with apt-get install rabbitmq-server); "
           "this doctor test needs a real RabbitMQ with its management plugin")
NODE_CONSUMER_TIMEOUT_MS = 60_000  # planted in rabbitmq.conf: shorter than the test project's task_time_limit


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Rabbit:
    """``consumer_timeout_ms`` goes to rabbitmq.conf; ``tick_ms`` to
    advanced.config's ``channel_tick_interval``: how often each channel
    checks its oldest unacknowledged delivery against the timeout (60 s by
    default, so a short timeout is enforced within a test's time)."""

    def __init__(self, base: Path, consumer_timeout_ms: int = NODE_CONSUMER_TIMEOUT_MS,
                 tick_ms: int | None = None) -> None:
        self.consumer_timeout_ms = consumer_timeout_ms
        self.amqp_port, self.http_port, self.epmd_port, self.dist_port = (free_port() for _ in range(4))
        self.base = base
        base.mkdir(parents=True, exist_ok=True)
        for sub in ("mnesia", "log", "plugins"):
            (base / sub).mkdir(exist_ok=True)
        (base / "enabled_plugins").write_text("[rabbitmq_management].\n")
        (base / "rabbitmq.conf").write_text(
            f"listeners.tcp.default = 127.0.0.1:{self.amqp_port}\n"
            f"management.tcp.port = {self.http_port}\n"
            "management.tcp.ip = 127.0.0.1\n"
            f"consumer_timeout = {consumer_timeout_ms}\n"
            "collect_statistics_interval = 500\n")
        if tick_ms is not None:
            (base / "advanced.config").write_text(f"[{{rabbit, [{{channel_tick_interval, {tick_ms}}}]}}].\n")
        env = {**os.environ, "HOME": str(base), "ERL_EPMD_PORT": str(self.epmd_port),
               "ERL_EPMD_ADDRESS": "127.0.0.1", "RABBITMQ_NODENAME": f"doctor-{uuid.uuid4().hex[:8]}@localhost",
               "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1", "RABBITMQ_NODE_PORT": str(self.amqp_port),
               "RABBITMQ_DIST_PORT": str(self.dist_port), "RABBITMQ_MNESIA_BASE": str(base / "mnesia"),
               "RABBITMQ_LOG_BASE": str(base / "log"), "RABBITMQ_CONFIG_FILE": str(base / "rabbitmq.conf"),
               "RABBITMQ_ENABLED_PLUGINS_FILE": str(base / "enabled_plugins"),
               "RABBITMQ_PLUGINS_EXPAND_DIR": str(base / "plugins"), "RABBITMQ_PID_FILE": str(base / "pid"),
               "RABBITMQ_ADVANCED_CONFIG_FILE": str(base / "advanced.config"),
               "RABBITMQ_CONF_ENV_FILE": str(base / "rabbitmq-env.conf"),
               "RABBITMQ_FEATURE_FLAGS_FILE": str(base / "mnesia" / "feature_flags"),
               # distribution on loopback too, and never an epmd of the node's own (it would outlive the test)
               "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": "-start_epmd false -kernel inet_dist_use_interface {127,0,0,1}",
               "RABBITMQ_CTL_ERL_ARGS": "-start_epmd false"}
        self.env = env
        # our own epmd, in the foreground: the node registers with it, and it is stopped by its pid
        self.epmd = subprocess.Popen([EPMD, "-port", str(self.epmd_port), "-address", "127.0.0.1"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        self.log = open(base / "server.log", "wb")
        self.proc = subprocess.Popen([SERVER], env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.started = time.monotonic()
        deadline = time.monotonic() + 90
        while True:
            try:
                self.api("GET", "/api/overview")
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    log = (base / "server.log").read_text(errors="replace")[-2000:]
                    self.stop()
                    raise RuntimeError(f"rabbitmq-server did not start:\n{log}")
                time.sleep(0.3)
        self.boot_seconds = time.monotonic() - self.started

    @property
    def management(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def url(self, user: str = "guest", password: str = "guest") -> str:
        return f"amqp://{user}:{password}@127.0.0.1:{self.amqp_port}//"

    def api(self, method: str, path: str, body: dict | None = None):
        """The test's own (administrative) requests: setting things up."""
        token = base64.b64encode(b"guest:guest").decode()
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.management + path, data=data, method=method,
                                         headers={"Authorization": f"Basic {token}",
                                                  "content-type": "application/json"})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=10) as reply:
            text = reply.read()
        return json.loads(text) if text else None

    def ctl(self, *args: str) -> None:
        """``rabbitmqctl`` against this node (its cookie is in ``HOME``)."""
        ctl = os.path.join(os.path.dirname(SERVER), "rabbitmqctl")
        done = subprocess.run([ctl, "-n", self.env["RABBITMQ_NODENAME"], *args], env=self.env, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr

    def wait_for(self, predicate, seconds: float = 20):
        """Wait until ``predicate(queues)`` holds for /api/queues (the
        management statistics lag by ``collect_statistics_interval``)."""
        deadline = time.monotonic() + seconds
        while True:
            queues = {q["name"]: q for q in self.api("GET", "/api/queues/%2F")}
            if predicate(queues):
                return queues
            assert time.monotonic() < deadline, f"RabbitMQ's statistics never showed it: {queues}"
            time.sleep(0.3)

    def stop(self) -> None:
        for proc in (self.proc,):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)  # its beam and its port programs
            proc.wait(timeout=30)
        self.epmd.kill()
        self.epmd.wait(timeout=10)
        self.log.close()


class MethodLog(http.server.ThreadingHTTPServer):
    """A proxy on 127.0.0.1 that forwards every request to ``upstream``
    and records ``(method, path)``: what the doctor sent."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.seen: list[tuple[str, str]] = []
        super().__init__(("127.0.0.1", 0), _Forward)
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def close(self) -> None:
        self.shutdown()
        self.server_close()


class _Forward(http.server.BaseHTTPRequestHandler):
    def _any(self) -> None:
        self.server.seen.append((self.command, self.path))
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else None
        request = urllib.request.Request(self.server.upstream + self.path, data=body, method=self.command,
                                         headers={k: v for k, v in self.headers.items() if k.lower() != "host"})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(request, timeout=10) as reply:
                status, data = reply.status, reply.read()
        except urllib.error.HTTPError as exc:
            status, data = exc.code, exc.read()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _any

    def log_message(self, *args) -> None:
        pass
