"""Redis as Celery sees it: broker/backend/cache URLs normalised to
(host, port, db), and the ``maxmemory-policy`` of Redis servers found in
``redis*.conf`` files, docker-compose ``command:``/``args:`` lines and
``CONFIG SET`` calls in code."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

REDIS_SCHEMES = ("redis", "rediss", "redis+socket", "sentinel")


@dataclass(frozen=True)
class RedisAddress:
    host: str
    port: int
    db: int | None  # None: not in the URL (a bare ``host:port`` cache LOCATION)

    def instance(self) -> tuple[str, int]:
        return self.host, self.port

    def __str__(self) -> str:
        return f"{self.host}:{self.port}/{self.db}"


def transport(url: str) -> str | None:
    """``redis``, ``sqs``, ``amqp``, ... from a broker URL's scheme."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme in REDIS_SCHEMES:
        return "redis"
    if scheme == "sqs":
        return "sqs"
    if scheme in ("amqp", "amqps", "pyamqp", "librabbitmq"):
        return "amqp"
    return scheme or None


def url_transport(resolved) -> str | None:
    """The transport of a resolved broker URL setting: from its value, else
    from the scheme an unknown value is known to have (``{"scheme": ...}``,
    ``values.Scheme``), also as an environment variable's default."""
    if isinstance(resolved.value, str):
        return transport(resolved.value)
    at = resolved.at
    encoded = at.value if resolved.is_unknown and at is not None and not at.cond else None
    if isinstance(encoded, dict) and "env" in encoded:
        encoded = encoded.get("default")
    scheme = encoded.get("scheme") if isinstance(encoded, dict) else None
    return transport(scheme + "://") if isinstance(scheme, str) else None


def parse_redis_url(url: str) -> RedisAddress | None:
    """(host, port, db) the way kombu and redis-py read it (celery-facts.md 6.3)."""
    url = url.split(";")[0].strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("redis", "rediss"):
        return None
    try:
        host, port = (parts.hostname or "localhost").lower(), parts.port or 6379
    except ValueError:
        return None
    if host == "127.0.0.1":
        host = "localhost"
    db = 0
    query = parse_qs(parts.query)
    path = parts.path.strip("/")
    if "db" in query and query["db"][0].isdigit():
        db = int(query["db"][0])
    elif path.isdigit():
        db = int(path)
    elif path:
        return None
    return RedisAddress(host, port, db)


@dataclass(frozen=True)
class PolicySource:
    """A ``maxmemory-policy`` setting: where, and for which host if known."""

    path: str
    line: int  # 1-based
    col: int  # 0-based start of the policy value
    policy: str
    host: str | None  # compose service name; None for a redis.conf or CONFIG SET


_CONF_LINE = re.compile(r"^[ \t]*maxmemory-policy[ \t]+(\S+)", re.IGNORECASE)
_CLI_FLAG = re.compile(r"--maxmemory-policy[\"']?[ \t=,]*[\"']?([\w-]+)")
_BARE_FLAG = re.compile(r"^\s*-\s*[\"']?--maxmemory-policy[\"']?\s*$")
_LIST_VALUE = re.compile(r"^\s*-\s*[\"']?([\w-]+)[\"']?\s*$")
_SERVICE = re.compile(r"^(?P<indent>[ ]{1,4})(?P<name>[\w.-]+):[ \t]*(?:#.*)?$")


def policies(path: str, text: str) -> list[PolicySource]:
    """Every ``maxmemory-policy`` in one redis.conf or compose file."""
    out = []
    name = path.rsplit("/", 1)[-1].lower()
    is_conf = name.endswith(".conf")
    in_services = False
    service: str | None = None
    service_indent = None
    pending_flag = False  # "- --maxmemory-policy" with the value on the next list item
    for number, line in enumerate(text.splitlines(), start=1):
        if is_conf:
            m = _CONF_LINE.match(line)
            if m:
                out.append(PolicySource(path, number, m.start(1), m.group(1).strip("\"'").lower(), None))
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if not line.startswith((" ", "\t")):
            in_services = stripped.rstrip(":") == "services" and stripped.endswith(":")
            service = None
            continue
        m = _SERVICE.match(line)
        if in_services and m and (service_indent is None or len(m.group("indent")) == service_indent):
            service_indent = len(m.group("indent"))
            service = m.group("name")
            continue
        if pending_flag and service:
            pending_flag = False
            m = _LIST_VALUE.match(line)
            if m:
                out.append(PolicySource(path, number, m.start(1), m.group(1).lower(), service.lower()))
                continue
        flag = _CLI_FLAG.search(line)
        if not flag and _BARE_FLAG.match(line):
            pending_flag = True
            continue
        if flag and service:
            out.append(PolicySource(path, number, flag.start(1), flag.group(1).lower(), service.lower()))
    return out
