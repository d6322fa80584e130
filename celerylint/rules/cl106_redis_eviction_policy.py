from __future__ import annotations

from ..domain.celeryconf.model import Model, runs_eagerly
from ..domain.celeryconf.redis_conf import RedisAddress, policies
from ..domain.celeryconf.redis_instances import cache_locations, instance_of
from ..domain.celeryconf.rulebase import ConfigRule
from ..rule import Invalid, TextEdit, TextFix, Valid


def redis_instances(m: Model) -> set[tuple[str, int]]:
    """Every Redis instance the apps' broker, backend and caches name."""
    out = set()
    for app in m.relevant_apps():
        for name in ("broker_url", "result_backend"):
            r = app.get(name)
            address = instance_of(r.value, r.env) if r.known else None
            if address is not None:
                out.add(address.instance())
        for _, location, env, _ in cache_locations(app):
            address = instance_of(location, env)
            if address is not None:
                out.add(address.instance())
    return out


def brokers(m: Model) -> list[RedisAddress]:
    """The Redis brokers of the apps that send to one (not those that run tasks eagerly)."""
    out = []
    for app in m.relevant_apps():
        if runs_eagerly(app):
            continue
        r = app.get("broker_url")
        address = instance_of(r.value, r.env) if r.known else None
        if address is not None and address not in out:
            out.append(address)
    return out


class RedisEvictionPolicy(ConfigRule):
    """
    ## What it does
    Finds a `maxmemory-policy` other than `noeviction` on the Redis that
    serves as the Celery broker: in `redis*.conf` files, in docker-compose
    `command:`/`args:` lines (`--maxmemory-policy`), and in `CONFIG SET
    maxmemory-policy` calls in the code. A compose service is matched by
    name to the broker URL's host; a `redis.conf` or a `CONFIG SET` call is
    matched when the project names a single Redis instance, the broker's.

    ## Why is this bad?
    Celery's queues, unacked messages and bindings are ordinary Redis keys.
    Under memory pressure an evicting policy (`allkeys-lru`, `volatile-*`,
    `allkeys-random`, ...) deletes them like stale cache entries: queued
    tasks vanish without an error. `noeviction` makes a full Redis refuse
    writes instead, a loud failure rather than silent loss.

    ## Example
    ```yaml
    # file: docker-compose.yml
    services:
      redis:
        image: redis:7
        command: redis-server --maxmemory 256mb --maxmemory-policy allkeys-lru
    # file: proj.py
    from celery import Celery
    app = Celery("proj", broker="redis://redis:6379/0")
    ```

    Use instead:
    ```yaml
    # file: docker-compose.yml
    services:
      redis:
        image: redis:7
        command: redis-server --maxmemory 256mb --maxmemory-policy noeviction
    # file: proj.py
    from celery import Celery
    app = Celery("proj", broker="redis://redis:6379/0")
    ```

    ## Fix safety
    For a `CONFIG SET` call in code the fix sets `noeviction` (unsafe: a
    cache sharing that instance then fails writes when memory is full).
    Redis and compose files are not edited; the message says what to
    change.

    ## References
    - [Redis: key eviction](https://redis.io/docs/latest/develop/reference/eviction/)
    - [Celery: Redis key eviction](https://docs.celeryq.dev/en/stable/getting-started/backends-and-brokers/redis.html#key-eviction)
    """

    CODE = "CL106"
    NAME = "redis-eviction-policy"
    SEVERITY = "error"
    SUMMARY = "The broker's Redis has a `maxmemory-policy` other than `noeviction`: queued tasks are evicted silently"
    FIX = "sometimes"
    HINT = "set `maxmemory-policy noeviction` on the Redis instance that serves as broker"
    TAGS = ("configuration", "redis")
    OPTIONS = ("redis-config-files",)

    VALID = (
        # tasks run inline: the broker is not used
        Valid("""
            # file: proj.py
            import redis as r
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0")
            app.conf.task_always_eager = True
            r.Redis().config_set("maxmemory-policy", "allkeys-lru")
        """),
        Valid("""
            # file: proj.py
            import redis
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0")
            redis.Redis().config_set("maxmemory-policy", "noeviction")
        """),
        Valid("""
            # file: proj.py
            import redis
            from celery import Celery
            app = Celery("proj", broker="redis://broker:6379/0")
            cache = redis.Redis(host="cache")
            cache.config_set("maxmemory-policy", "allkeys-lru")
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="amqp://localhost")
            # file: redis.conf
            maxmemory-policy allkeys-lru
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://redis:6379/0")
            # file: docker-compose.yml
            services:
              redis:
                image: redis:7
                command: redis-server --maxmemory-policy noeviction
              cache:
                image: redis:7
                command: redis-server --maxmemory-policy allkeys-lru
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker=BROKER_URL)
            # file: redis.conf
            maxmemory-policy allkeys-lru
        """),
    )
    INVALID = (
        Invalid(
            """
            # file: proj.py
            import redis as r
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0")
            r.Redis().config_set("maxmemory-policy", "allkeys-lru")
            """,
            fixed="""
            # file: proj.py
            import redis as r
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0")
            r.Redis().config_set("maxmemory-policy", "noeviction")
            """,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://redis:6379/0")
            # file: docker-compose.yml
            services:
              web:
                image: proj
              redis:
                image: redis:7
                command: redis-server --maxmemory 100mb --maxmemory-policy allkeys-lru
            """,
            fixed=None,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0")
            # file: deploy/redis.conf
            maxmemory 2gb
            maxmemory-policy volatile-lru
            """,
            fixed=None,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://queue:6379/0")
            # file: compose.yaml
            services:
              queue:
                image: redis
                command: ["redis-server", "--maxmemory-policy", "allkeys-random"]
            """,
            fixed=None,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://queue:6379/0")
            # file: docker-compose.prod.yml
            services:
              queue:
                image: redis
                command:
                  - redis-server
                  - --maxmemory-policy
                  - volatile-ttl
            """,
            fixed=None,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            from redis import StrictRedis as SR
            app = Celery("proj", broker="redis://localhost:6379/0")
            def tune():
                SR().execute_command("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
            """,
            fixed="""
            # file: proj.py
            from celery import Celery
            from redis import StrictRedis as SR
            app = Celery("proj", broker="redis://localhost:6379/0")
            def tune():
                SR().execute_command("CONFIG", "SET", "maxmemory-policy", "noeviction")
            """,
        ),
    )

    def check_model(self, m: Model):
        targets = brokers(m)
        if not targets:
            return
        hosts = {b.host for b in targets}
        single = len(redis_instances(m)) == 1
        for path, text in sorted(m.project.other_files.items()):
            for p in policies(path, text):
                if p.policy == "noeviction":
                    continue
                if (p.host is not None and p.host in hosts) or (p.host is None and single):
                    where = f"compose service `{p.host}`" if p.host else "this Redis"
                    yield self.finding(f"{where} serves as the Celery broker but has `maxmemory-policy {p.policy}`: "
                                       "under memory pressure Redis evicts queued task messages silently; use `noeviction`",
                                       path, p.line, p.col, p.line, p.col + len(p.policy))
        for f in m.by_kind["config_set"]:
            if f["policy"].lower() == "noeviction" or not (f["host"] in hosts if f["host"] else single):
                continue
            pos = (f["line"], f["col"], f["end_line"], f["end_col"])
            fix = TextFix("set `maxmemory-policy` to noeviction", (TextEdit(*pos, '"noeviction"'),), False, f["path"])
            yield self.at(f"`CONFIG SET maxmemory-policy {f['policy']}` on the broker's Redis: under memory pressure "
                          "Redis evicts queued task messages silently; use `noeviction`", f["path"], pos, fix)
