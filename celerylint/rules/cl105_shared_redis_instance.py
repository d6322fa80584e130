from __future__ import annotations

from dataclasses import replace

from ..domain.celeryconf.model import Model, Resolved, runs_eagerly
from ..domain.celeryconf.redis_conf import RedisAddress
from ..domain.celeryconf.redis_instances import cache_locations, cache_origins, comparable, instance_of, unknown_origin
from ..domain.celeryconf.rulebase import ConfigRule
from ..rule import Invalid, Valid, django_project


class SharedRedisInstance(ConfigRule):
    """
    ## What it does
    Compares the Redis instance (host and port) of each Celery app's broker
    with its Django `CACHES` (a warning) and its result backend (a note,
    only when both use the same database number). URLs are compared only
    when both are literals or both come from the same environment variable
    (its default is used), so a development default never stands for
    production. Two values read at run time from the same place (one
    module-level name such as `REDIS_URL = env.str("REDIS_URL")`, one
    settings-object attribute, one environment variable without a default)
    are the same URL whatever it is, and so are two URLs made by one
    f-string template of such places (`f"redis://{REDIS_HOST}:{REDIS_PORT}/0"`
    and `.../1`: one instance, two databases): the message says where they
    are read from.

    Not reported: a result backend on the broker's instance in another
    database (`redis://localhost:6379/0` and `/1`, a common and reasonable
    layout: results expire, and nothing flushes them).

    ## Why is this bad?
    A cache is tuned to lose keys: its instance runs an eviction policy such
    as `allkeys-lru`, which evicts queued task messages like stale cache
    entries, and Django's `cache.clear()` is `FLUSHDB` (on the same
    database it wipes the queues and unacked messages). Eviction policy and
    memory limits belong to the instance, not to a database number. A
    result backend in the broker's own database mixes result keys into the
    queue's keyspace: a `FLUSHDB` meant for results takes the queues too.

    ## Example
    ```python
    # settings.py
    CELERY_BROKER_URL = "redis://redis:6379/0"
    CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache",
                          "LOCATION": "redis://redis:6379/0"}}
    ```

    Use instead:
    ```python
    # settings.py
    CELERY_BROKER_URL = "redis://redis-broker:6379/0"  # noeviction
    CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache",
                          "LOCATION": "redis://redis-cache:6379/0"}}  # allkeys-lru
    ```

    ## Fix safety
    No automatic fix: a second Redis instance is a deployment change.

    ## References
    - [Celery: Redis caveats (key eviction)](https://docs.celeryq.dev/en/stable/getting-started/backends-and-brokers/redis.html#key-eviction)
    - [Redis: key eviction](https://redis.io/docs/latest/develop/reference/eviction/)
    """

    CODE = "CL105"
    NAME = "shared-redis-instance"
    SEVERITY = "warning"
    SUMMARY = "The broker shares a Redis instance with a cache (or its database with the result backend): queued tasks get evicted or flushed"
    HINT = "give the broker its own Redis instance with maxmemory-policy noeviction"
    TAGS = ("configuration", "redis")

    VALID = (
        # the location changed by a nested item under a condition: unknown
        Valid(django_project("""
            import os
            REDIS_URL = os.environ["REDIS_URL"]
            CELERY_BROKER_URL = REDIS_URL
            CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": REDIS_URL}}
            if os.environ.get("CACHE_URL"):
                CACHES["default"]["LOCATION"] = os.environ["CACHE_URL"]
        """)),
        # a format spec or a field celerylint does not evaluate: unknown
        Valid(django_project("""
            REDIS_HOST = "redis"
            CELERY_BROKER_URL = "redis://{:>5}:6379".format(REDIS_HOST)
            CELERY_RESULT_BACKEND = "redis://{0.host}:6379/0".format(REDIS_HOST)
        """)),
        # tasks run inline (onadata's docker settings): no broker in use
        Valid(django_project("""
            CELERY_BROKER_URL = "redis://cache:6379"
            CELERY_TASK_ALWAYS_EAGER = True
            CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": "redis://cache:6379"}}
        """)),
        Valid(django_project("""
            CELERY_BROKER_URL = "redis://broker:6379/0"
            CACHES = {
                "default": {"BACKEND": "redis_cache.RedisCache", "LOCATION": "cache:6379"},
                "memo": {"BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache", "LOCATION": "broker:6379"},
            }
        """)),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0", backend="redis://localhost:6379/1")
        """),
        Valid("""
            # file: celeryconfig.py
            broker_url = "redis://cache.internal:6379/1"
            result_backend = "redis://cache.internal:6379/2"
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://broker:6379/0", backend="redis://results:6379/0")
        """),
        Valid("""
            # file: proj.py
            import os
            from celery import Celery
            app = Celery("proj", broker=os.environ.get("BROKER_URL", "redis://localhost:6379/0"),
                         backend=os.environ.get("RESULT_URL", "redis://localhost:6379/1"))
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="amqp://localhost", backend="redis://localhost:6379/1")
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0", backend="django-db")
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            # file: proj/settings.py
            CELERY_BROKER_URL = "redis://broker:6379/0"
            CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": "redis://cache:6379/0"}}
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker=BROKER, backend="redis://localhost:6379/1")
        """),
        # unknown values from different names, a name bound again between the
        # two reads, a literal before the unknown part, a suffix that is not a
        # database path: not known to be one instance
        Valid(django_project("""
            import environ
            env = environ.Env()
            CELERY_BROKER_URL = env("BROKER_URL")
            CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": env("CACHE_URL")}}
        """)),
        Valid(django_project("""
            import os
            REDIS_URL = os.environ["BROKER_REDIS_URL"]
            CELERY_BROKER_URL = REDIS_URL
            REDIS_URL = os.environ["CACHE_REDIS_URL"]
            CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": REDIS_URL}}
        """)),
        Valid(django_project("""
            import os
            REDIS_HOST = os.environ["REDIS_HOST"]
            CELERY_BROKER_URL = "redis://" + REDIS_HOST + ":6379/0"
            CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": f"redis://{REDIS_HOST}:6380/0"}}
        """)),
        Valid(django_project("""
            import os
            REDIS_HOST = os.getenv("REDIS_HOST")
            CELERY_BROKER_URL = REDIS_HOST + ":6379"
            CACHES = {"default": {"BACKEND": "redis_cache.RedisCache", "LOCATION": REDIS_HOST + ":6380"}}
        """)),
        Valid(django_project("""
            from proj.config import settings
            CELERY_BROKER_URL = settings.BROKER_URL
            CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": settings.CACHE_URL}}
        """)),
    )
    INVALID = (
        # a cache alias set by item, and a nested option changed after (MuckRock): the
        # location stays known
        Invalid(django_project("""
            import os
            REDIS_URL = os.environ["REDIS_URL"]
            CELERY_BROKER_URL = REDIS_URL
            CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
            CACHES["default"] = {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": REDIS_URL, "OPTIONS": {}}
            CACHES["default"]["OPTIONS"]["IGNORE_EXCEPTIONS"] = True
        """), message="the Django cache `default` and the broker"),
        # a URL built with ``str.format`` from known parts
        Invalid(django_project("""
            REDIS_HOST = "redis"
            REDIS_PORT = 6379
            CELERY_BROKER_URL = "redis://{}:{}".format(REDIS_HOST, REDIS_PORT)
            CELERY_RESULT_BACKEND = "redis://{host}:{port}/0".format(host=REDIS_HOST, port=REDIS_PORT)
        """), fixed=None, message="the same Redis instance redis:6379 and the same database 0"),
        # one Python name read at run time (django-environ without a default)
        Invalid(django_project("""
            import environ
            env = environ.Env()
            REDIS_URL = env.str("REDIS_URL")
            CELERY_BROKER_URL = REDIS_URL
            CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": REDIS_URL}}
        """), fixed=None, message="both are read at run time from REDIS_URL, so they are one URL whatever its value, "
                                  "with the same database"),
        # os.environ[...], and another database path appended to it
        Invalid(django_project("""
            import os
            REDIS_URL = os.environ["REDIS_URL"]
            CELERY_BROKER_URL = REDIS_URL
            CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": f"{REDIS_URL}/1"}}
        """), fixed=None, message="(another database path)"),
        # a settings object's attribute (pydantic, environs), imported
        Invalid(django_project("""
            from proj.config import settings
            CELERY_BROKER_URL = settings.REDIS_URL
            CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": settings.REDIS_URL}}
        """), fixed=None, message="read at run time from settings.REDIS_URL"),
        # django-redis-cache's bare host:port LOCATION; 127.0.0.1 is localhost
        Invalid(django_project("""
            CELERY_BROKER_URL = "redis://127.0.0.1:6379/0"
            CACHES = {"default": {"BACKEND": "redis_cache.RedisCache", "LOCATION": "localhost:6379"}}
        """), fixed=None, message="use the same Redis instance localhost:6379: eviction policy"),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/celery.py
            import os
            from celery import Celery as C
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
            app = C("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            # file: proj/settings.py
            import os
            REDIS_URL = os.environ.get("REDIS_URL", "redis://redis:6379")
            CELERY_BROKER_URL = REDIS_URL + "/0"
            CACHES = {
                "default": {
                    "BACKEND": "django_redis.cache.RedisCache",
                    "LOCATION": f"{REDIS_URL}/1",
                }
            }
            """,
            fixed=None,
        ),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            # file: proj/settings.py
            CELERY_BROKER_URL = "redis://127.0.0.1:6379/0"
            CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://localhost:6379"}}
            """,
            fixed=None,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0")
            app.conf.result_backend = "redis://localhost:6379/0"
            """,
            fixed=None, message="the same database 0",
        ),
    )

    def check_model(self, m: Model):
        for app in m.relevant_apps():
            if runs_eagerly(app):
                continue  # tasks run inline: the broker is not used
            broker = app.get("broker_url")
            if not broker.known:
                yield from self._same_origin(app, broker)
                continue
            address = instance_of(broker.value, broker.env)
            if address is None:
                continue
            backend = app.get("result_backend")
            if backend.known and backend.at is not None and comparable(broker.env, backend.env):
                other = instance_of(backend.value, backend.env)
                if other is not None and other.instance() == address.instance() and other.db == address.db:
                    finding = self.at_assignment(backend.at, self._message("the result backend", address, other, broker))
                    yield replace(finding, severity="note")
            for alias, location, env, caches in cache_locations(app):
                other = instance_of(location, env)
                if other is not None and comparable(broker.env, env) and other.instance() == address.instance():
                    yield self.at_assignment(caches, self._message(f"the Django cache `{alias}`", address, other, broker))

    def _same_origin(self, app, broker: Resolved):
        """A broker URL read at run time from one name (``REDIS_URL``) and a
        cache ``LOCATION`` (or result backend) read from the same one: the
        same string, whatever it is."""
        origin = unknown_origin(broker)
        if origin is None:
            return
        backend = app.get("result_backend")
        if backend.at is not None and unknown_origin(backend) == origin:
            yield replace(self.at_assignment(backend.at, self._same_message("the result backend", origin, True)),
                          severity="note")
        for alias, other, caches in cache_origins(app):
            if other[0] != origin[0]:
                continue
            if other[2] == origin[2]:
                yield self.at_assignment(caches, self._same_message(f"the Django cache `{alias}`", origin, True))
            elif all(not o[2] or o[2].startswith("/") or o[2].isdigit() for o in (origin, other)):
                # ``REDIS_URL`` and ``REDIS_URL + "/1"`` (or ``f"{REDIS_URL}1"`` after a URL ending in
                # ``/``: learningequality/studio): another database path, the same host and port
                yield self.at_assignment(caches, self._same_message(f"the Django cache `{alias}`", origin, False))

    @staticmethod
    def _same_message(what: str, origin: tuple[str, str, str], same_db: bool) -> str:
        head = (f"{what} and the broker use the same Redis instance: both are read at run time from "
                f"{origin[1]}, so they are one URL whatever its value")
        if same_db:
            wipe = "a cache clear (FLUSHDB)" if "cache" in what else "a FLUSHDB"
            return f"{head}, with the same database: {wipe} wipes the queued tasks too, and eviction and memory limits hit both"
        return f"{head} (another database path): eviction policy and memory limits are per instance, so pressure from one evicts or blocks the other"

    @staticmethod
    def _message(what: str, broker: RedisAddress, other: RedisAddress, resolved: Resolved) -> str:
        origin = f" (from {resolved.env})" if resolved.env else ""
        head = f"{what} and the broker{origin} use the same Redis instance {broker.host}:{broker.port}"
        if other.db is None:
            return f"{head}: eviction policy and memory limits are per instance, so pressure from one evicts or blocks the other"
        if other.db == broker.db:
            wipe = "a cache clear (FLUSHDB)" if "cache" in what else "a FLUSHDB"
            return (f"{head} and the same database {broker.db}: {wipe} wipes the queued tasks too, "
                    "and eviction and memory limits hit both")
        return (f"{head} (databases {broker.db} and {other.db}): eviction policy and memory limits are per instance, "
                "so pressure from one evicts or blocks the other")
