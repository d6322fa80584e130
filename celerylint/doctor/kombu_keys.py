"""The keys kombu's Redis transport and Celery's Redis result backend make
(kombu 5.x ``kombu/transport/redis.py``, celery ``backends/base.py``).

* queue ``q`` is the list ``q``; with priorities, also ``q\\x06\\x16<step>``
  for the steps 3, 6, 9 (``sep``, ``priority_steps``);
* ``_kombu.binding.<exchange>``: a set of ``routing_key␆␖pattern␆␖queue``
  (kombu 5.7 adds ``_kombu.binding_permanent.<exchange>`` and
  ``_kombu.binding_deadlines``);
* ``unacked`` (hash tag -> JSON ``[message, exchange, routing_key]``),
  ``unacked_index`` (sorted set tag -> delivery time), ``unacked_mutex``;
* results: ``celery-task-meta-<id>``, ``celery-taskset-meta-<id>``,
  ``chord-unlock-<id>`` and ``<group key>.j``/``.t`` chord counters.

Every key may carry the ``global_keyprefix`` transport option.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SEP = "\x06\x16"
PRIORITY_STEPS = (0, 3, 6, 9)
BINDING_PREFIX = "_kombu.binding."
KOMBU_PREFIX = "_kombu."  # bindings, and kombu 5.7's ``binding_permanent.*``/``binding_deadlines``
RESULT_PREFIXES = ("celery-task-meta-", "celery-taskset-meta-", "chord-unlock-", "celery-chord-")


@dataclass
class Layout:
    prefix: str = ""
    sep: str = SEP
    unacked: str = "unacked"
    unacked_index: str = "unacked_index"
    unacked_mutex: str = "unacked_mutex"
    priority_steps: tuple[int, ...] = PRIORITY_STEPS
    queues: set[str] = field(default_factory=set)  # unprefixed queue names, from the bindings

    @classmethod
    def from_options(cls, options: dict | None) -> Layout:
        options = options if isinstance(options, dict) else {}

        def text(name, default):
            value = options.get(name)
            return value if isinstance(value, str) else default

        steps = options.get("priority_steps")
        if not (isinstance(steps, (list, tuple)) and all(isinstance(s, int) for s in steps) and steps):
            steps = PRIORITY_STEPS
        return cls(text("global_keyprefix", ""), text("sep", SEP), text("unacked_key", "unacked"),
                   text("unacked_index_key", "unacked_index"), text("unacked_mutex_key", "unacked_mutex"),
                   tuple(steps))

    def key(self, name: str) -> str:
        return self.prefix + name

    @property
    def binding_pattern(self) -> str:
        return self.glob_escape(self.key(BINDING_PREFIX)) + "*"

    @staticmethod
    def glob_escape(text: str) -> str:
        return "".join("\\" + c if c in "*?[]\\" else c for c in text)

    def queue_of_binding_member(self, member: str) -> str | None:
        parts = member.split(self.sep)
        return parts[-1] if len(parts) >= 3 and parts[-1] else None

    def queue_keys(self, queue: str) -> list[str]:
        """The lists that hold queue ``queue``: itself, then one per priority step."""
        return [self.key(queue)] + [self.key(f"{queue}{self.sep}{p}") for p in self.priority_steps if p]

    def is_celery_key(self, key: str) -> bool:
        if key.startswith(RESULT_PREFIXES):  # the result backend has its own prefix option
            return True
        if self.prefix:
            if not key.startswith(self.prefix):
                return False
            key = key[len(self.prefix):]
        if key in (self.unacked, self.unacked_index, self.unacked_mutex) or key.startswith(KOMBU_PREFIX):
            return True
        if key.startswith(RESULT_PREFIXES):
            return True
        base = key.rsplit(self.sep, 1)[0] if self.sep in key else key
        return base in self.queues
