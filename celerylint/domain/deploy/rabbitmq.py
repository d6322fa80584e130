"""RabbitMQ's ``consumer_timeout`` as the tree sets it: ``rabbitmq.conf``
(``consumer_timeout = 3600000``), ``advanced.config``
(``{rabbit, [{consumer_timeout, 3600000}]}``, or ``undefined`` to turn it
off), and ``-rabbit consumer_timeout N`` in
``RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS`` (a compose file, a Dockerfile
``ENV``, a shell script), a Dockerfile that writes
``consumer_timeout = N`` into ``rabbitmq.conf``, a Kubernetes ConfigMap
holding ``rabbitmq.conf``, and ``rabbitmqctl eval
'application:set_env(rabbit, consumer_timeout, N).'``.  Milliseconds; RabbitMQ's default is 1800000
(30 minutes) since 3.8.15 (15 minutes in 3.8.15's first builds, 30 since
3.8.17)."""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_MS = 1_800_000

_CONF = re.compile(r"^[ \t]*consumer_timeout[ \t]*=[ \t]*(\w+)", re.M)
_ADVANCED = re.compile(r"\{[ \t]*consumer_timeout[ \t]*,[ \t]*(\w+)[ \t]*\}")
_ECHOED = re.compile(r"[\"']consumer_timeout[ \t]*=[ \t]*(\w+)")  # ``RUN echo "consumer_timeout = N" >> rabbitmq.conf``
_SET_ENV = re.compile(r"set_env\([ \t]*rabbit[ \t]*,[ \t]*consumer_timeout[ \t]*,[ \t]*(\w+)")  # ``rabbitmqctl eval``
_ERL_ARGS = re.compile(r"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS[\"']?[ \t]*[:=][^\n]*?-rabbit[ \t]+consumer_timeout[ \t]+(\w+)")


@dataclass(frozen=True)
class ConsumerTimeout:
    path: str
    line: int
    ms: int | None  # None: turned off (``undefined``, ``false``), so no timeout


def _value(word: str) -> tuple[bool, int | None]:
    """``(readable, ms)``: a number, or ``undefined``/``false`` (no timeout)."""
    if word.isdigit():
        return True, int(word)
    if word in ("undefined", "false", "infinity"):
        return True, None
    return False, None


def consumer_timeouts(texts: dict[str, str]) -> list[ConsumerTimeout]:
    out = []
    for path, text in sorted(texts.items()):
        if "consumer_timeout" not in text:
            continue
        name = path.rsplit("/", 1)[-1]
        if name.endswith(".conf") and "rabbit" in name:
            patterns = (_CONF,)
        elif name.endswith(".config"):
            patterns = (_ADVANCED,)
        elif name.endswith((".yaml", ".yml")):  # compose environment, a ConfigMap holding rabbitmq.conf
            patterns = (_ERL_ARGS, _CONF)
        else:  # Dockerfiles, shell scripts
            patterns = (_ERL_ARGS, _ECHOED, _SET_ENV)
        for pattern in patterns:
            for found in pattern.finditer(text):
                readable, ms = _value(found.group(1))
                if readable:
                    out.append(ConsumerTimeout(path, text.count("\n", 0, found.start(1)) + 1, ms))
    return out


def effective(timeouts: list[ConsumerTimeout]) -> tuple[int | None, str]:
    """``(ms, where)``: the one value the tree sets, or RabbitMQ's default
    when it sets none; ``(None, "")`` when it sets several different ones
    or turns the timeout off."""
    values = {t.ms for t in timeouts}
    if not timeouts:
        return DEFAULT_MS, "RabbitMQ's default (since 3.8.15)"
    if len(values) == 1 and None not in values:
        return timeouts[0].ms, f"{timeouts[0].path}:{timeouts[0].line}"
    return None, ""
