"""How long a message may stay unacknowledged on the broker: what the
Redis/SQS visibility timeout (CL104) and RabbitMQ's ``consumer_timeout``
(CL124) are compared with."""

from __future__ import annotations

import math

from .celeryconf.model import App, Model
from .celeryconf.values import number, plain
from .delays import django_sources, human, resolve_setting_delay
from .deploy.model import processes_for
from ..facts.tasks import RETRY_DELAY_FACT, SETTING_DELAY_FACT


def seconds_option(value: str | None) -> float | None:
    """A command-line option's value in seconds (``--time-limit=300``)."""
    try:
        found = float(value) if value else None
    except ValueError:
        return None
    return found if found is not None and math.isfinite(found) and found > 0 else None


def longest_duration(m: Model, app: App, worker_options: bool = True) -> tuple[float, str] | None:
    """The longest time a message may stay unacknowledged: a literal
    countdown/eta anywhere, or (with acks_late) a task's time limit, or one
    a worker of the app is started with (``worker_options``: the deployment
    model, ``domain/deploy``)."""
    seen: list[tuple[float, str]] = []
    for f in m.by_kind["delay"]:
        seen.append((f["seconds"], f"{'an' if f['delay_kind'] == 'eta' else 'a'} `{f['delay_kind']}` of {human(f['seconds'])} at {f['path']}:{f['line']}"))
    for f in m.by_kind[SETTING_DELAY_FACT]:  # countdown=settings.X, read in this app's Django settings
        for source in django_sources(m, app):
            value = resolve_setting_delay(f, source)
            if value is not None:
                article = "an" if f["delay_kind"] == "eta" else "a"
                seen.append((value, f"{article} `{f['delay_kind']}` of {human(value)} (`settings.{f['setting']}` in {source.path}) "
                                    f"at {f['path']}:{f['line']}"))
    for f in m.by_kind[RETRY_DELAY_FACT]:  # a retry sent with the task's ``default_retry_delay`` as its countdown
        if not f.get("retries"):
            continue
        values = [(f["seconds"], "")] if f.get("seconds") else [
            (value, f" (`settings.{f['setting']}` in {source.path})") for source in django_sources(m, app)
            if (value := resolve_setting_delay(f, source)) is not None]
        for value, where in values:
            seen.append((value, f"a retry after a `default_retry_delay` of {human(value)}{where} at {f['path']}:{f['line']}"))
    global_late = app.get("task_acks_late").truthy
    if global_late:
        for option in ("task_time_limit", "task_soft_time_limit"):
            r = app.get(option)
            value = number(r.value)
            if value and r.at is not None:
                seen.append((value, f"`{option}` of {human(value)} with acks_late on"))
        for p in processes_for(m, app) if worker_options else ():  # ``--time-limit`` on a worker's command line
            for option in ("time_limit", "soft_time_limit"):
                value = seconds_option(p.option(option))
                if value:
                    seen.append((value, f"`--{option.replace('_', '-')}` of {human(value)} at {p.where} with acks_late on"))
    for task in m.tasks:
        late = plain(task["options"].get("acks_late"))[0]
        if not (late is True or (global_late and late is None)):
            continue
        for option in ("time_limit", "soft_time_limit"):
            value = number(plain(task["options"].get(option))[0])
            if value:
                seen.append((value, f"task `{task['name']}` with acks_late and `{option}` of {human(value)} "
                                    f"({task['path']}:{task['line']})"))
    return max(seen, default=None)


def above(seconds: float) -> int:
    """The next whole hour strictly above ``seconds``."""
    return int(seconds // 3600 + 1) * 3600


