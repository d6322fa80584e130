from __future__ import annotations

from ..domain.celeryconf.model import Model
from ..domain.celeryconf.redis_conf import url_transport
from ..domain.celeryconf.rulebase import ConfigRule
from ..domain.celeryconf.texts import read
from ..domain.delays import human
from ..domain.deploy.model import deployment, worker_apps
from ..domain.deploy.rabbitmq import effective
from ..domain.unacked import longest_duration
from ..rule import Invalid, Valid


def _queues_set_their_own(m: Model, app) -> bool:
    """Whether the app's ``task_queues`` gives a queue its own
    ``x-consumer-timeout`` (``Queue(..., queue_arguments={...})``), or
    cannot be read to tell: the timeout in force is then per queue."""
    r = app.get("task_queues")
    a = r.at
    if a is None or a.value_pos is None:
        return False
    text = read(m, a.path)
    if text is None:
        return True
    lines = text.splitlines()[a.value_pos[0] - 1:a.value_pos[2]]
    return "consumer-timeout" in "\n".join(lines)


class RabbitmqConsumerTimeoutTooShort(ConfigRule):
    """
    ## What it does
    For an app whose broker is RabbitMQ (`amqp://`, `pyamqp://`; also a URL
    built from unknown parts whose literal head gives the scheme,
    `f"amqp://{user}@{host}//"`, `"amqp://{}//".format(...)`), compares
    RabbitMQ's `consumer_timeout` with the longest time a message can stay
    unacknowledged, reasoned as CL104 does for Redis: a literal
    `countdown`/`eta` in the code, a task's `default_retry_delay` it
    retries after, and, with `task_acks_late`, the tasks' time limits
    (global, per task, or a worker's `--time-limit`).

    The timeout is read from `rabbitmq.conf` (`consumer_timeout = ms`),
    `advanced.config` (`{consumer_timeout, ms}`) or
    `RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-rabbit consumer_timeout ms"` in
    the tree (see the deployment page); when none sets it, RabbitMQ's
    default applies: 30 minutes (since 3.8.15). Two different values in the
    tree, or the timeout turned off (`undefined`), report nothing. Nor does
    an app whose `task_queues` gives a queue its own `x-consumer-timeout`
    (`Queue(..., queue_arguments={"x-consumer-timeout": ms})`): RabbitMQ
    3.11.15 and later honour it per queue (3.10 ignores it), so which
    timeout applies to a task depends on its queue.

    ## Why is this bad?
    A message delivered to a consumer and not acknowledged within
    `consumer_timeout` makes RabbitMQ close the channel with
    `PRECONDITION_FAILED` and deliver the message again: a late-acknowledged
    task that runs longer, or a task waiting for its ETA in the worker (ETA
    and countdown messages are held unacknowledged until they run), runs
    twice, and the worker reconnects. Celery 5.5's native delayed delivery
    for quorum queues (`broker_native_delayed_delivery`) sends countdowns
    through delay exchanges instead, so the ETA half does not apply to
    quorum queues there; the time-limit half applies to every version and
    queue type. RabbitMQ 3.12+ also takes the timeout per queue (policy or
    `x-consumer-timeout`), which celerylint does not read.

    ## Example
    ```python
    # file: proj.py
    from celery import Celery
    app = Celery("proj", broker="amqp://rabbit//", task_acks_late=True, task_time_limit=3 * 3600)
    ```

    Use instead:
    ```python
    # file: proj.py
    from celery import Celery
    app = Celery("proj", broker="amqp://rabbit//", task_acks_late=True, task_time_limit=3 * 3600)
    # file: rabbitmq/rabbitmq.conf
    consumer_timeout = 14400000
    ```

    ## Fix safety
    No fix: the broker's configuration may live outside the repository.

    ## References
    - [RabbitMQ: delivery acknowledgement timeout](https://www.rabbitmq.com/docs/consumers#acknowledgement-timeout)
    - [Celery: RabbitMQ consumer timeout](https://docs.celeryq.dev/en/stable/userguide/calling.html#eta-and-countdown)
    """

    CODE = "CL124"
    NAME = "rabbitmq-consumer-timeout-too-short"
    FIX = "none"
    SUMMARY = "RabbitMQ's consumer_timeout is shorter than a late-acknowledged task's time limit or a countdown/ETA"
    HINT = "raise `consumer_timeout` in rabbitmq.conf above the longest time limit or countdown"
    TAGS = ("configuration", "deployment", "rabbitmq")

    VALID = (
        # a URL built from parts only under a condition: whatever else it is
        # when the condition fails is unknown
        Valid("""
            # file: celeryconfig.py
            import os
            broker_url = os.getenv("CELERY_BROKER_URL")
            if not broker_url:
                broker_url = f"amqp://{os.getenv('RABBIT_HOST')}//"
            task_acks_late = True
            task_time_limit = 3 * 3600
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
            """),
        # a URL whose scheme itself is unknown
        Valid("""
            import os
            from celery import Celery
            SCHEME = os.environ["BROKER_SCHEME"]
            app = Celery("proj", broker=f"{SCHEME}://rabbit//", task_acks_late=True, task_time_limit=3 * 3600)
            """),
        # a queue with its own timeout: per queue from RabbitMQ 3.11.15
        Valid("""
            # file: proj.py
            from celery import Celery
            from kombu import Queue
            app = Celery("proj", broker="amqp://guest@rabbit//")
            app.conf.task_acks_late = True
            app.conf.task_queues = (
                Queue("long", queue_arguments={"x-consumer-timeout": 7200000}),
                Queue("celery"),
            )
            @app.task(time_limit=5400)
            def crunch(): ...
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="amqp://rabbit//", task_acks_late=True, task_time_limit=3 * 3600)
            # file: docker-compose.yml
            services:
              rabbit:
                image: rabbitmq:3.12
                environment:
                  RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: "-rabbit consumer_timeout 21600000"
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="amqp://rabbit//", task_time_limit=3 * 3600)
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost", task_acks_late=True, task_time_limit=3 * 3600)
            """),
    )
    INVALID = (
        # a broker URL built from the environment: its scheme is known
        Invalid("""
            import os
            from celery import Celery
            USER = os.environ["RABBIT_USER"]
            BROKER = os.environ.get("BROKER_URL", "amqp://{}@{}//".format(USER, os.environ["RABBIT_HOST"]))
            app = Celery("proj", broker=BROKER, task_acks_late=True, task_time_limit=3 * 3600)
            """, message="`task_time_limit` of 3 h", at="5:7"),
        Invalid("""
            import os
            from celery import Celery
            HOST = os.environ["RABBIT_HOST"]
            USER = os.environ.get("RABBIT_USER")
            BROKER = f"amqp://{USER}@{HOST}//" if USER else f"amqp://{HOST}//"
            app = Celery("proj", broker=BROKER, task_acks_late=True, task_time_limit=3 * 3600)
            """, message="`task_time_limit` of 3 h", at="6:7"),
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="pyamqp://rabbit//", task_acks_late=True, task_time_limit=7200)
            # file: rabbitmq.conf
            consumer_timeout = 3600000
            """, message="1 h"),
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="amqp://rabbit//")
            @app.task
            def ping(): ...
            def later():
                ping.apply_async(countdown=2 * 3600)
            """, message="default"),
    )

    def check_model(self, m: Model):
        for app in worker_apps(m):
            broker = app.get("broker_url")
            if url_transport(broker) != "amqp":
                continue
            longest = longest_duration(m, app)
            if longest is None or _queues_set_their_own(m, app):
                continue
            ms, where = effective(deployment(m).consumer_timeouts)
            if ms is None or longest[0] * 1000 <= ms:
                continue
            seconds, what = longest
            message = (f"RabbitMQ's `consumer_timeout` is {human(ms / 1000)} ({where}) but {what}: RabbitMQ closes "
                       "the channel and delivers the message again while the first run is pending or running")
            yield self.at_app(app, message)
