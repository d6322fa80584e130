"""RabbitMQ brokers (``amqp://``, ``pyamqp://``, ``amqps://``), read through
the management HTTP API with GET requests only (the standard library's
``urllib``; every request ends by the run's deadline and reads at most
``REPLY_BYTES``).

The API's address: ``--management-url``, else derived from the broker URL:
``http://<broker host>:15672`` (``https://`` for ``amqps://``) with the
broker URL's user and password (kombu's ``guest``/``guest`` when it has
none) and its virtual host."""

from __future__ import annotations

import base64
import json
import socket
import ssl
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

from ..reporters.secrets import masked

SCHEMES = ("amqp", "amqps", "pyamqp", "librabbitmq")
MANAGEMENT_PORT = 15672
REPLY_BYTES = 16 * 1024 * 1024
PAGE_SIZE = 500  # queues read (one page of /api/queues)
QUEUE_COLUMNS = ("name,type,durable,messages_ready,messages_unacknowledged,consumers,arguments,policy,"
                 "effective_policy_definition,head_message_timestamp")
DEFAULT_CONSUMER_TIMEOUT = 1800  # s: rabbitmq.conf's default since 3.8.17


class ManagementError(Exception):
    """The management API could not be read: one line saying why."""


@dataclass(frozen=True)
class Management:
    base: str  # http(s)://host:port, no credentials
    user: str
    password: str
    vhost: str

    @property
    def shown(self) -> str:
        return f"{self.base} (user `{self.user}`)"


def is_amqp(url: str) -> bool:
    return url.split("://", 1)[0].lower() in SCHEMES if "://" in url else False


def management_for(broker_url: str, management_url: str | None) -> Management:
    """Where the management API of ``broker_url`` is, and how to log in."""
    broker = urlsplit(broker_url.split(";", 1)[0])
    vhost = unquote(broker.path[1:]) if broker.path.startswith("/") and len(broker.path) > 1 else "/"
    user = unquote(broker.username) if broker.username else "guest"
    password = unquote(broker.password) if broker.password is not None else "guest"
    if management_url:
        given = urlsplit(management_url)
        if given.scheme not in ("http", "https") or not given.hostname:
            raise ManagementError(f"--management-url {masked(management_url)}: not an http:// or https:// URL")
        if given.username:
            user = unquote(given.username)
            password = unquote(given.password or "")
        port = f":{given.port}" if given.port else ""
        return Management(f"{given.scheme}://{given.hostname}{port}{given.path.rstrip('/')}", user, password, vhost)
    scheme = "https" if broker.scheme.lower() == "amqps" else "http"
    host = broker.hostname or "localhost"
    host = f"[{host}]" if ":" in host else host
    return Management(f"{scheme}://{host}:{MANAGEMENT_PORT}", user, password, vhost)


class Api:
    """GET requests to one management API, each within the deadline."""

    def __init__(self, m: Management, deadline: float, timeout: float) -> None:
        self.m, self.deadline, self.timeout = m, deadline, timeout
        self.gets: list[str] = []  # the paths read, in order
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy from the environment
        token = base64.b64encode(f"{m.user}:{m.password}".encode()).decode()
        self.headers = {"Authorization": f"Basic {token}", "Accept": "application/json"}

    def get(self, path: str):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise ManagementError(f"{self.m.base}: stopped after --timeout {self.timeout:g} s; the checks were not "
                                  "all run")
        request = urllib.request.Request(self.m.base + path, headers=self.headers, method="GET")
        self.gets.append(path)
        try:
            with self.opener.open(request, timeout=left) as reply:
                body = reply.read(REPLY_BYTES + 1)
        except urllib.error.HTTPError as exc:
            raise ManagementError(self._http_error(exc, path)) from None
        except (socket.timeout, TimeoutError):
            raise ManagementError(f"{self.m.base}: stopped after --timeout {self.timeout:g} s waiting for the "
                                  "management API") from None
        except urllib.error.URLError as exc:
            raise ManagementError(self._unreachable(exc.reason)) from None
        except (ConnectionError, ssl.SSLError, OSError) as exc:
            raise ManagementError(self._unreachable(exc)) from None
        except Exception as exc:  # noqa: BLE001 - http.client's errors for what is not HTTP
            raise ManagementError(self._unreachable(exc)) from None
        if len(body) > REPLY_BYTES:
            raise ManagementError(f"{self.m.base}{path}: a reply longer than {REPLY_BYTES // (1024 * 1024)} MiB, "
                                  "the most the doctor reads")
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            raise ManagementError(f"{self.m.base}{path}: the reply is not JSON: is this the RabbitMQ management "
                                  "API? (pass --management-url)") from None

    def _http_error(self, exc, path: str) -> str:
        if exc.code == 401:
            return (f"{self.m.shown}: authentication failed at the management API (HTTP 401): the doctor logs in "
                    "with the broker URL's user and password unless --management-url names others")
        if exc.code == 403:
            return (f"{self.m.shown}: the user may not read {path} (HTTP 403): give it the `monitoring` tag "
                    "(read-only) or pass --management-url with such a user")
        if exc.code == 404:
            return (f"{self.m.base}{path}: not found (HTTP 404): this is not the RabbitMQ management API, or the "
                    "virtual host does not exist; pass --management-url")
        return f"{self.m.base}{path}: HTTP {exc.code} {exc.reason}"

    def _unreachable(self, reason) -> str:
        base = self.m.base
        if isinstance(reason, (socket.timeout, TimeoutError)):
            return f"{base}: stopped after --timeout {self.timeout:g} s waiting for the management API"
        if isinstance(reason, ConnectionRefusedError):
            return (f"{base}: connection refused: the management API is off (`rabbitmq-plugins enable "
                    "rabbitmq_management`) or listens elsewhere (pass --management-url)")
        if isinstance(reason, ssl.SSLError):
            hint = (": the server does not speak TLS there; use http://" if "WRONG_VERSION" in str(reason).upper()
                    or "wrong version" in str(reason) else "")
            return f"{base}: TLS failed ({_short(str(reason))}){hint}"
        if isinstance(reason, socket.gaierror):
            return f"{base}: cannot resolve the host ({reason})"
        text = f"{type(reason).__name__}: {_short(str(reason))}" if isinstance(reason, BaseException) else str(reason)
        hint = ""
        if base.startswith("http://") and type(reason).__name__ in ("RemoteDisconnected", "BadStatusLine",
                                                                     "ConnectionResetError"):
            hint = ": the server closed the connection without an HTTP reply; if it listens with TLS, use https://"
        return f"{base}: {text}{hint}"


def _short(text: str, most: int = 200) -> str:
    return text if len(text) <= most else text[:most] + "..."


def vhost_path(vhost: str) -> str:
    return quote(vhost, safe="")


def version(text) -> tuple[int, ...]:
    parts = []
    for p in str(text or "").split("."):
        digits = "".join(c for c in p if c.isdigit()) if p else ""
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)
