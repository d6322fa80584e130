from __future__ import annotations

import re
from urllib.parse import urlsplit

from ..domain.celeryconf.model import Model
from ..domain.celeryconf.rulebase import ConfigRule, assignments_once, settings_everywhere, sources
from ..domain.celeryconf.settings import _resolved
from ..domain.celeryconf.values import plain
from ..rule import Invalid, Valid, django_project

URL_SETTINGS = ("broker_url", "broker_read_url", "broker_write_url", "result_backend")
# passwords that stand for "fill this in" or are the well-known default of a development server
PLACEHOLDERS = frozenset({
    "", "guest", "password", "passwd", "pass", "changeme", "change-me", "change_me", "secret", "xxx", "xxxx",
    "****", "*****", "your-password", "your_password", "yourpassword", "mypassword", "redacted",
})
# each bracketed form stops where another of its kind opens: one pass over ``${${${...``
_TEMPLATE = re.compile(r"\$\{[^{}]*\}|\$\w+|%\([^()]*\)s|\{[^{}]*\}|<[^<>]*>")
# hosts of a developer's machine or of a compose file's services
_LOCAL_SERVICE = re.compile(
    r"(?:redis|valkey|keydb|rabbit|rabbitmq|amqp|mq|broker|celery|db|database|postgres|postgresql|mysql|mariadb|"
    r"memcache|memcached|cache|sentinel)(?:[-_]?[a-z0-9]*)?"
)


def local_host(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in ("", "localhost", "::1", "0.0.0.0", "host.docker.internal") or host.startswith("127."):
        return True
    if host.endswith((".local", ".localhost")):  # not ".internal": cloud DNS names production hosts so
        return True
    return "." not in host and _LOCAL_SERVICE.fullmatch(host) is not None


def placeholder(password: str) -> bool:
    return password.strip().lower() in PLACEHOLDERS or _TEMPLATE.search(password) is not None


def leaked(url: str) -> str | None:
    """The URL with its password masked, when it holds a real-looking
    password for a host that is not a development one."""
    try:
        parts = urlsplit(url.strip())
        password, host = parts.password, parts.hostname or ""
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or password is None or placeholder(password) or local_host(host):
        return None
    user = parts.username or ""
    return f"{parts.scheme}://{user}:****@{host}" + (f":{port}" if port else "")


def urls(value) -> list[str]:
    if isinstance(value, str):
        return [u for u in value.split(";") if u.strip()]
    if isinstance(value, (list, tuple)):
        return [u for u in value if isinstance(u, str)]
    return []


class BrokerPasswordInUrl(ConfigRule):
    """
    ## What it does
    Checks that the broker URL (`broker_url`, `broker_read_url`,
    `broker_write_url`), the result backend URL (`result_backend`) and the
    `LOCATION` of each Django cache hold no literal password, also as the
    default of an environment variable (`os.environ.get("BROKER_URL",
    "amqp://app:s3cret@mq.example.com//")`). The message masks the password.

    This rule is off by default: enable it with
    `extend-select = ["CL115"]`.

    ## Why is this bad?
    A password in the code is a password in every clone, fork, CI log and
    backup of the repository, and in its history after it is changed. Whoever
    holds the broker's password can send any task to the workers (with a
    pickle serializer, run any code) and read every message. A default that is
    only used "when the variable is missing" is used exactly when a
    deployment forgets it.

    It does not report placeholders (`guest`, `password`, `changeme`,
    `pass`, `secret`, an empty password, `${VAR}`, `%(name)s`, `{name}`,
    `<password>`), URLs of development hosts (`localhost`, `127.0.0.1`,
    `*.local`, and service names of a compose file such as `redis`,
    `rabbitmq`, `db`, `broker`, `redis-cache`), URLs built at run time from
    values celerylint cannot read, or settings in test paths.

    ## Example
    ```python
    # celeryconfig.py
    broker_url = "amqp://app:Xk2p9vQe@mq.example.com:5672//"
    ```

    Use instead:
    ```python
    # celeryconfig.py
    import os

    broker_url = os.environ["BROKER_URL"]
    ```

    ## Fix safety
    No fix: the password must move to the deployment's secrets, and be
    changed, since the repository's history keeps it.

    ## References
    - [Celery: broker_url](https://docs.celeryq.dev/en/stable/userguide/configuration.html#broker-url)
    - [Celery: security](https://docs.celeryq.dev/en/stable/userguide/security.html)
    - [The Twelve-Factor App: config](https://12factor.net/config)
    """

    CODE = "CL115"
    NAME = "broker-password-in-url"
    SEVERITY = "warning"
    SUMMARY = "A literal password in the broker, result backend or cache URL: it is in every copy of the repository"
    HINT = "read the URL, or its password, from the environment or a secrets store, and change the password"
    TAGS = ("configuration", "security")
    DEFAULT_ENABLED = False

    VALID = (
        Valid(django_project("""
            CELERY_BROKER_URL = "amqp://guest:guest@rabbitmq.example.com:5672//"
            CELERY_RESULT_BACKEND = "redis://:password@redis.example.com:6379/1"
            CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": "redis://:@cache.example.com/0"}}
        """)),
        Valid(django_project("""
            CELERY_BROKER_URL = "amqp://app:s3cretpw@rabbitmq:5672//"
            CELERY_RESULT_BACKEND = "redis://:devpass123@localhost:6379/1"
            CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": "redis://:hunter2@redis-cache:6379/0"}}
        """)),
        Valid("""
            # file: celeryconfig.py
            import os
            broker_url = "amqp://app:${BROKER_PASSWORD}@mq.example.com//"
            result_backend = "db+postgresql://app:%(password)s@db.example.com/results"
            broker_read_url = f"amqp://app:{os.environ['BROKER_PASSWORD']}@mq.example.com//"
            broker_write_url = "amqp://app@mq.example.com//"
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
        """),
        Valid("""
            # file: proj.py
            import os
            from celery import Celery
            app = Celery("proj", broker=os.environ["BROKER_URL"], backend=os.environ.get("RESULT_BACKEND"))
            DATABASE_URL = "postgres://app:realpw@db.example.com/app"
        """),
        Valid("""
            # file: tests/celeryconfig.py
            broker_url = "amqp://app:s3cretpw@mq.example.com//"
        """),
    )
    INVALID = (
        Invalid(django_project("""
            import os
            CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "redis://:Tq8nZ4wLp2@prod-redis.example.com:6379/0")
        """), message="redis://:****@prod-redis.example.com:6379", at="2:21"),
        Invalid(django_project("""
            CACHES = {
                "default": {
                    "BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache",
                    "LOCATION": "127.0.0.1:11211",
                },
                "sessions": {
                    "BACKEND": "django_redis.cache.RedisCache",
                    "LOCATION": "rediss://default:Zp3kQ9wXv@cache.example.com:6380/2",
                },
            }
        """), message="the Django cache `sessions`", count=1),
        Invalid("""
            # file: proj.py
            from celery import Celery as C
            app = C("proj", broker="amqp://svc:Wm5tR8yN@10.0.4.12//;amqp://svc:Wm5tR8yN@10.0.4.13//",
                    backend="redis://localhost/1")
        """, count=1, message="amqp://svc:****@10.0.4.12"),
        Invalid("""
            # file: celeryconfig.py
            result_backend = "redis://:Qm7vX2pLr@redis-1.c.proj.internal:6379/1"
            broker_url = "redis://:Qm7vX2pLr@host.docker.internal:6379/0"
        """, count=1, message="`result_backend`"),
    )

    def check_model(self, m: Model):
        found = []
        for name in URL_SETTINGS:
            found += [(value.at, f"`{value.at.name}`", value.value, value.env)
                      for _, value in assignments_once(settings_everywhere(m, name))]
        seen = set()
        for source in sources(m):
            caches = source.by_name.get("CACHES")
            if not caches or (caches[-1].path, caches[-1].pos) in seen:
                continue
            a = caches[-1]
            seen.add((a.path, a.pos))
            if not _resolved(a).is_set:
                continue
            aliases, _ = plain(a.value)
            for alias, encoded in (aliases.items() if isinstance(aliases, dict) else ()):
                config, _ = plain(encoded)
                if isinstance(config, dict) and "LOCATION" in config:
                    location, env = plain(config["LOCATION"])
                    found.append((a, f"the Django cache `{alias}` (`LOCATION`)", location, env))
        for a, what, value, env in found:
            masked = [u for u in (leaked(url) for url in urls(value)) if u]
            if not masked:
                continue
            origin = f" as the default of the environment variable {env}" if env else ""
            yield self.at_assignment(a, f"{what} holds a password{origin} ({masked[0]}): anyone with a copy of the "
                                        "repository can use the broker or the backend")
