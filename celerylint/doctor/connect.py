"""Broker URLs: masking, what is supported, and a read-only redis-py client.

The client refuses every command outside ``READ_COMMANDS`` before it is
sent, and every command after the run's deadline; every read and write of
its socket ends by the deadline too (a server that sends its reply a byte
at a time cannot hold a run past ``--timeout``), and one command's reply
is read up to ``REPLY_BYTES`` at most: a doctor run never writes to Redis
and stops within ``--timeout``.
"""

from __future__ import annotations

import inspect
import re
import socket
import time
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from ..reporters.secrets import masked

# Everything a doctor run may send (connection set-up included).  The
# test suite compares a MONITOR of the server with this list.
READ_COMMANDS = frozenset({
    "AUTH", "SELECT", "PING",
    "CONFIG GET", "INFO",
    "SCAN", "TYPE", "TTL",
    "HLEN", "HMGET", "HGET", "HSCAN", "HSTRLEN",
    "ZCARD", "ZCOUNT", "ZRANGEBYSCORE", "ZRANGE",
    "LLEN", "SSCAN",
    "SENTINEL GET-MASTER-ADDR-BY-NAME",  # to a sentinel, for a sentinel:// broker
})

REPLY_BYTES = 32 * 1024 * 1024  # read for one command at most (the unacked bodies read at once stay under half)

# a ``;`` that starts the next URL of a list (``sentinel://h1;sentinel://h2``)
_NEXT_URL = re.compile(r"\s*[A-Za-z][A-Za-z0-9+.-]*://")


def mask(url: str) -> str:
    """The URL with any password replaced by ``****`` (every URL of a
    ``;``-separated list), by the URL's structure (``reporters.secrets``)."""
    return masked(url)


def urls(value: str) -> list[str]:
    """The URLs of a kombu broker URL list.  It is split only at a ``;``
    the next URL's ``scheme://`` follows, so a ``;`` in a password stays
    in the password (and is never taken for a host)."""
    out, start = [], 0
    at = value.find(";")
    while at >= 0:
        if _NEXT_URL.match(value, at + 1):
            out.append(value[start:at].strip())
            start = at + 1
        at = value.find(";", at + 1)
    out.append(value[start:].strip())
    return [u for u in out if u]


def first_url(value: str) -> str:
    found = urls(value)
    return found[0] if found else ""


class Unsupported(Exception):
    """A broker URL the doctor cannot check (the message says why)."""


class Deadline(Exception):
    """The run's ``--timeout`` has passed."""


class Refused(Exception):
    """A command outside ``READ_COMMANDS`` (a bug: never sent)."""


class Oversized(Exception):
    """A reply longer than ``REPLY_BYTES`` (a server that lies about a length)."""


class Malformed(Exception):
    """A reply that cannot be read (the message says which): the wrong type,
    a number that is not one, nesting too deep to parse."""


@dataclass(frozen=True)
class Target:
    url: str  # as given (may hold a password: never printed, see ``shown``)
    kind: str  # "tcp", "tls", "unix", "sentinel" (``url`` lists the sentinels)
    db: int

    @property
    def shown(self) -> str:
        return mask(self.url)


def target(url: str) -> Target:
    """Which server and database a kombu broker URL names, or Unsupported."""
    first = first_url(url)
    scheme = first.split("://", 1)[0].lower() if "://" in first else ""
    if scheme not in ("redis", "rediss", "redis+socket", "unix", "sentinel"):
        raise Unsupported(f"{mask(first)}: not a Redis broker URL (scheme {scheme or 'missing'!r}); "
                          "the doctor checks Redis brokers only")
    try:
        parts = urlsplit(first)
    except ValueError as exc:
        raise Unsupported(f"{mask(first)}: not a valid URL ({exc})") from None
    if scheme in ("redis+socket", "unix"):
        db = _query_db(parts.query)
        return Target(first, "unix", db if db is not None else 0)
    try:
        parts.port
    except ValueError:
        raise Unsupported(f"{mask(first)}: the port is not a number") from None
    path = parts.path.strip("/")
    db = _query_db(parts.query)
    if db is None:
        if path and not (path.isascii() and path.isdigit()):
            raise Unsupported(f"{mask(first)}: the database {path!r} is not a number")
        db = int(path) if path else 0
    if scheme == "sentinel":
        return Target(url.strip(), "sentinel", db)  # every sentinel of the list
    return Target(first, "tls" if scheme == "rediss" else "tcp", db)


def _query_db(query: str) -> int | None:
    m = re.search(r"(?:^|&)(?:db|virtual_host)=(\d+)", query)
    return int(m.group(1)) if m else None


class _BoundedSocket:
    """A connection's socket whose every read and write ends by the run's
    deadline (the timeout is set to what is left before each call, so a
    server trickling bytes cannot extend it), and whose reads for one
    command stop at ``REPLY_BYTES`` (``left``, reset per command)."""

    def __init__(self, sock, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline
        self._wanted = None  # the timeout redis-py asked for (None: blocking)
        self.left = REPLY_BYTES

    def settimeout(self, timeout) -> None:
        self._wanted = timeout

    def gettimeout(self):
        return self._wanted

    def _arm(self) -> None:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout("the doctor's --timeout has passed")
        self._sock.settimeout(left if self._wanted is None else min(self._wanted, left))

    def _count(self, n: int) -> int:
        self.left -= n
        if self.left < 0:
            raise Oversized(f"a reply longer than {REPLY_BYTES // (1024 * 1024)} MiB, the most the doctor reads "
                            "for one command")
        return n

    def recv(self, size: int, *flags) -> bytes:
        self._arm()
        data = self._sock.recv(size, *flags)
        self._count(len(data))
        return data

    def recv_into(self, buffer, nbytes: int = 0, *flags) -> int:
        self._arm()
        return self._count(self._sock.recv_into(buffer, nbytes, *flags))

    def sendall(self, data, *flags) -> None:
        self._arm()
        self._sock.sendall(data, *flags)

    def send(self, data, *flags) -> int:
        self._arm()
        return self._sock.send(data, *flags)

    def __getattr__(self, name):
        return getattr(self._sock, name)


def client(t: Target, deadline: float, **overrides):
    """A read-only redis-py client for ``t`` whose socket reads and writes
    end by ``deadline`` (``time.monotonic()``).  ImportError when redis-py
    is missing."""
    import redis

    class ReadOnlyRedis(redis.Redis):
        def execute_command(self, *args, **options):
            name = self._before(args)
            try:
                return super().execute_command(*args, **options)
            except (redis.RedisError, Deadline, Refused, Oversized):
                raise
            except Exception as exc:  # redis-py's reading of a reply of the wrong shape
                raise _malformed(name, exc) from None

        def batch(self, *commands) -> list:
            """Read-only commands sent at once (one round trip): their replies,
            as the server sent them (no redis-py conversion)."""
            names = [self._before(args) for args in commands]
            conn = self.connection
            try:
                conn.send_packed_command(conn.pack_commands(commands))
                return [conn.read_response() for _ in commands]
            except BaseException as exc:
                conn.disconnect()  # replies may be left unread: the next command reconnects
                if isinstance(exc, Exception) and not isinstance(exc, (redis.RedisError, Deadline, Oversized)):
                    raise _malformed(names[0], exc) from None
                raise

        def _before(self, args) -> str:
            """Refuse a command that is not read-only, and any after the
            deadline; the command's name, as an error names it."""
            name = str(args[0]).upper()
            if name in ("CONFIG", "CLIENT", "ACL", "SENTINEL") and len(args) > 1:
                name = f"{name} {str(args[1]).upper()}"
            if name not in READ_COMMANDS:
                raise Refused(f"{name} is not a read-only command the doctor may send")
            left = deadline - time.monotonic()
            if left <= 0:
                raise Deadline()
            for conn in _connections(self):
                conn.socket_timeout = conn.socket_connect_timeout = left
                sock = getattr(conn, "_sock", None)
                if isinstance(sock, _BoundedSocket):
                    sock.left = REPLY_BYTES
                elif sock is not None:  # a redis-py without redis_connect_func: one timeout per command
                    sock.settimeout(left)
            return f"{name} {args[1]}" if name == "INFO" and len(args) > 1 else name

    def bounded(conn) -> None:
        """Before the connection's AUTH and SELECT: its socket keeps the deadline."""
        conn._sock = _BoundedSocket(conn._sock, deadline)
        conn.on_connect()

    left = max(deadline - time.monotonic(), 0.01)
    # RESP2 and no CLIENT SETINFO: the connection sends AUTH and SELECT at most
    # (redis-py 5+ would send HELLO 3 and CLIENT SETINFO; 4.x knows neither keyword)
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    common = dict(socket_timeout=left, socket_connect_timeout=left, retry=Retry(NoBackoff(), 0), protocol=2,
                  health_check_interval=0, single_connection_client=True, redis_connect_func=bounded)
    accepted = inspect.signature(redis.Redis.__init__).parameters
    if "driver_info" in accepted:  # redis-py 7+: None sends no CLIENT SETINFO
        common["driver_info"] = None
    else:
        common.update(lib_name=None, lib_version=None)
    common = {k: v for k, v in common.items() if k in accepted}
    url = t.url
    if t.kind == "unix":
        parts = urlsplit(url)
        return ReadOnlyRedis(unix_socket_path=unquote(parts.path), db=t.db, password=_password(parts),
                             username=unquote(parts.username) if parts.username else None,
                             **{k: v for k, v in common.items() if k != "socket_connect_timeout"},
                             socket_connect_timeout=left)
    parts = urlsplit(url)
    kwargs = dict(host=parts.hostname or "localhost", port=parts.port or 6379, db=t.db,
                  username=unquote(parts.username) if parts.username else None, password=_password(parts), **common)
    kwargs.update(overrides)
    if t.kind == "tls":
        kwargs["ssl"] = True
        query = dict(q.split("=", 1) for q in parts.query.split("&") if "=" in q)
        reqs = query.get("ssl_cert_reqs")
        if reqs:
            kwargs["ssl_cert_reqs"] = {"CERT_NONE": "none", "CERT_OPTIONAL": "optional",
                                       "CERT_REQUIRED": "required"}.get(reqs.upper(), reqs.lower())
        for key in ("ssl_ca_certs", "ssl_certfile", "ssl_keyfile"):
            if query.get(key):
                kwargs[key] = unquote(query[key])
    return ReadOnlyRedis(**kwargs)


def _malformed(name: str, exc: Exception) -> Malformed:
    if isinstance(exc, RecursionError):
        return Malformed(f"{name}: nested too deeply to read")
    text = str(exc) if len(str(exc)) <= 200 else str(exc)[:200] + "..."
    return Malformed(f"{name}: {type(exc).__name__}: {text}")


def _password(parts) -> str | None:
    return unquote(parts.password) if parts.password else None


def _connections(r):
    conn = getattr(r, "connection", None)
    if conn is not None:
        yield conn
    pool = getattr(r, "connection_pool", None)
    if pool is not None:
        yield from getattr(pool, "_available_connections", ())
        yield from getattr(pool, "_in_use_connections", ())


def sentinel_master(t: Target, options: dict, deadline: float) -> Target:
    """The current master of a ``sentinel://`` broker, as kombu finds it:
    the ``master_name`` transport option, asked of each sentinel in turn
    (``sentinel_kwargs`` authenticates to the sentinels; the URL's own user
    and password, to the master).  Unsupported without ``master_name``;
    redis.ConnectionError when no sentinel knows the master."""
    import redis

    name = options.get("master_name") if isinstance(options, dict) else None
    if not isinstance(name, str) or not name:
        raise Unsupported(f"{t.shown}: a Sentinel broker needs broker_transport_options['master_name'], which "
                          "celerylint cannot read here; pass the master with --broker-url redis://<host>:<port>/<db> "
                          "(`redis-cli -h <sentinel> -p 26379 SENTINEL get-master-addr-by-name <master_name>`)")
    sentinel_kwargs = options.get("sentinel_kwargs") if isinstance(options.get("sentinel_kwargs"), dict) else {}
    auth = {k: sentinel_kwargs.get(k) for k in ("username", "password")}
    errors = []
    listed = urls(t.url)
    for url in listed:
        parts = urlsplit(url)
        try:
            port = parts.port or 26379
        except ValueError:
            continue
        host = parts.hostname or "localhost"
        try:
            s = client(Target(url, "tcp", 0), deadline, host=host, port=port, db=0, **auth)
            try:
                address = s.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)
            finally:
                s.close()
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError) as exc:
            errors.append(f"{host}:{port}: {exc}")
            continue
        if address:
            master_host, master_port = (a.decode() if isinstance(a, bytes) else str(a) for a in address[:2])
            first = urlsplit(listed[0])
            userinfo = first.netloc.rsplit("@", 1)[0] + "@" if "@" in first.netloc else ""
            return Target(f"redis://{userinfo}{master_host}:{master_port}/{t.db}", "tcp", t.db)
        errors.append(f"{host}:{port}: does not know a master named {name!r}")
    raise redis.ConnectionError(f"no sentinel gave the address of master {name!r} ({'; '.join(errors)})")
