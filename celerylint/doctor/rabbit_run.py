"""One RabbitMQ broker's checks, in order: the server, its alarms, the
virtual host's queues, the consumer timeout."""

from __future__ import annotations

from . import rabbit_checks
from .rabbitmq import Api, management_for


def check(url: str, static: dict, management_url: str | None, report, deadline: float, timeout: float) -> None:
    api = Api(management_for(url, management_url), deadline, timeout)
    report.notices.append(f"management API {api.m.shown}, virtual host `{api.m.vhost}`")
    server = rabbit_checks.overview(api, report)
    rabbit_checks.alarms(api, report)
    items = rabbit_checks.queues(api, report)
    rabbit_checks.queue_notes(items, report)  # CL158 from the broker's own consumer counts
    rabbit_checks.quorum_note(items, _celery_version(), report)
    rabbit_checks.consumer_timeouts(items, server, static, report)
    report.rabbit = (server, {q["name"]: q for q in items})


def _celery_version() -> str | None:
    """The Celery installed beside celerylint (its metadata: nothing is imported)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("celery")
    except PackageNotFoundError:
        return None
