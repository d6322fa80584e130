"""Broker URLs: masking, what is supported, and a read-only redis-py client.

The client refuses every command outside ``READ_COMMANDS`` before it is
sent, and every command after the run's deadline: a doctor run never
writes to Redis and stops within ``--timeout``.
"""

from __future__ import annotations

import inspect
import re
import time
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

# Everything a doctor run may send (connection set-up included).  The
# test suite compares a MONITOR of the server with this list.
READ_COMMANDS = frozenset({
    "AUTH", "SELECT", "PING",
    "CONFIG GET", "INFO",
    "SCAN", "TYPE", "TTL",
    "HLEN", "HMGET", "HGET", "HSCAN",
    "ZCARD", "ZCOUNT", "ZRANGEBYSCORE", "ZRANGE",
    "LLEN", "SSCAN",
    "SENTINEL GET-MASTER-ADDR-BY-NAME",  # to a sentinel, for a sentinel:// broker
})

_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:@/;]*)(?::(?P<pw>[^@/;]*))?@")


def mask(url: str) -> str:
    """The URL with any password replaced by ``****`` (every URL of a
    ``;``-separated list)."""
    def repl(m: re.Match) -> str:
        if m.group("pw") is None:
            return m.group(0)
        return f"{m.group('scheme')}{m.group('user')}:****@"

    return _USERINFO.sub(repl, url)


def secrets(url: str) -> list[str]:
    """The passwords in a URL, raw and decoded: scrubbed from any error text."""
    out = []
    for m in _USERINFO.finditer(url):
        pw = m.group("pw")
        if pw:
            out += [pw, unquote(pw)]
    return [s for s in out if s]


def scrub(text: str, url: str) -> str:
    for s in secrets(url):
        text = text.replace(s, "****")
    return text


class Unsupported(Exception):
    """A broker URL the doctor cannot check (the message says why)."""


class Deadline(Exception):
    """The run's ``--timeout`` has passed."""


class Refused(Exception):
    """A command outside ``READ_COMMANDS`` (a bug: never sent)."""


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
    first = url.split(";")[0].strip()
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
        if path and not path.isdigit():
            raise Unsupported(f"{mask(first)}: the database {path!r} is not a number")
        db = int(path) if path else 0
    if scheme == "sentinel":
        return Target(url.strip(), "sentinel", db)  # every sentinel of the list
    return Target(first, "tls" if scheme == "rediss" else "tcp", db)


def _query_db(query: str) -> int | None:
    m = re.search(r"(?:^|&)(?:db|virtual_host)=(\d+)", query)
    return int(m.group(1)) if m else None


def client(t: Target, deadline: float, **overrides):
    """A read-only redis-py client for ``t`` whose socket timeouts end at
    ``deadline`` (``time.monotonic()``).  ImportError when redis-py is missing."""
    import redis

    class ReadOnlyRedis(redis.Redis):
        def execute_command(self, *args, **options):
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
                if sock is not None:
                    sock.settimeout(left)
            return super().execute_command(*args, **options)

    left = max(deadline - time.monotonic(), 0.01)
    # RESP2 and no CLIENT SETINFO: the connection sends AUTH and SELECT at most
    # (redis-py 5+ would send HELLO 3 and CLIENT SETINFO; 4.x knows neither keyword)
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    common = dict(socket_timeout=left, socket_connect_timeout=left, retry=Retry(NoBackoff(), 0), protocol=2,
                  health_check_interval=0, single_connection_client=True)
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
    urls = [u.strip() for u in t.url.split(";") if u.strip()]
    for url in urls:
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
            first = urlsplit(urls[0])
            userinfo = first.netloc.rsplit("@", 1)[0] + "@" if "@" in first.netloc else ""
            return Target(f"redis://{userinfo}{master_host}:{master_port}/{t.db}", "tcp", t.db)
        errors.append(f"{host}:{port}: does not know a master named {name!r}")
    raise redis.ConnectionError(f"no sentinel gave the address of master {name!r} ({'; '.join(errors)})")
