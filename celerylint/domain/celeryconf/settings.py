"""What the configuration model is made of: assignments of settings, the
sources that hold them, the apps, and a setting's resolved value."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Container, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

from ...core.model import Edit, Fix
from .paths import TEST_PATH
from .settings_table import Table, table
from .values import NULL, plain

DJANGO_TARGETS = frozenset({"django.conf:settings", "django.conf.settings"})


# (path, if id) -> the branch an if/elif/else takes: the world the
# configuration rules are checked in (worlds.py); none: every such
# setting whose branches differ is unknown, one of ``Resolved.values``
BRANCHES: ContextVar[dict[tuple[str, int], int] | None] = ContextVar("branches", default=None)


def is_test_path(path: str) -> bool:
    return bool(TEST_PATH.search(path))


Pos = tuple[int, int, int, int]  # line, col, end_line, end_col


def fact_position(fact: dict[str, Any] | None) -> Pos | None:
    if fact is None or "line" not in fact:
        return None
    return fact["line"], fact["col"], fact["end_line"], fact["end_col"]


@dataclass
class Assignment:
    """One place that sets a setting: ``name`` as written."""

    name: str
    value: Any  # encoded (see values.py)
    path: str
    pos: Pos  # of the name
    value_pos: Pos | None
    cond: bool
    via: str
    # key -> (value, pos, literal, path): ``X["key"] = v`` may be in another file than X
    items: dict[str, tuple[Any, Pos | None, bool, str]] = field(default_factory=dict)
    # the last assignment of this name in each branch of an ``if``/``elif``/``else``
    # that has one in every branch (this one among them): the value is one of theirs
    alternatives: list[Assignment] | None = None
    alt: list[int] | None = None  # [if id, branch, branches] of an if/elif/else at module level

    def fix_replacing(self, value: str, description: str, safe: bool = False):
        """The fix that sets this assignment's value to ``value`` (source
        text), or None."""
        if self.value_pos is None:
            return None
        line, col, end_line, end_col = self.value_pos
        return Fix(description, (Edit(line, col, end_line, end_col, value),), safe, self.path)

    @property
    def line(self) -> int:
        return self.pos[0]


@dataclass
class Resolved:
    """A setting's effective value: ``state`` is set | default | unknown."""

    state: str
    value: Any = None  # plain Python value (NULL for a literal None)
    env: str | None = None
    at: Assignment | None = None
    values: list[Any] | None = None  # unknown because it is one of these (if/else branches)

    @property
    def is_set(self) -> bool:
        return self.state == "set"

    @property
    def is_default(self) -> bool:
        return self.state == "default"

    @property
    def is_unknown(self) -> bool:
        return self.state == "unknown"

    @property
    def known(self) -> bool:
        return not self.is_unknown and self.value is not None

    @property
    def truthy(self) -> bool | None:
        if not self.known:
            return None
        return bool(self.value) and self.value is not NULL

    def shown(self) -> str:
        value = "None" if self.value is NULL else repr(self.value)
        if self.env:
            return f"{value} (default of the environment variable {self.env})"
        return value


class _AnyName:
    """Every name: what a chain that updates its globals with a value
    celerylint cannot read may set (``Source.runtime``)."""

    def __contains__(self, name: object) -> bool:
        return True


ANY_NAME = _AnyName()


def union_names(groups: Iterable[Container[str]]) -> Container[str]:
    out: set[str] = set()
    for names in groups:
        if names is ANY_NAME:
            return ANY_NAME
        out.update(names)
    return frozenset(out)


@dataclass
class Source:
    """A module (with its star-import chain) that an app loads settings from."""

    module: str
    path: str
    django: bool
    namespace: str | None
    assignments: list[Assignment]  # in effect order
    open: str | None  # why settings may come from elsewhere
    files: list[str]  # the chain's files, the target first
    # (index in ``assignments``, names): where the chain hands its globals()
    # to code that may set these settings at run time (facts/runtime_settings.py)
    runtime: tuple[int, Container[str]] | None = None
    # whether a file of the chain whose non-Celery assignments celerylint
    # did not record may assign the name (Model.source)
    hidden: Callable[[str], bool] | None = None

    @cached_property
    def by_name(self) -> dict[str, list[Assignment]]:
        out: dict[str, list[Assignment]] = defaultdict(list)
        for a in self.assignments:
            out[a.name].append(a)
        return out

    def celery_keys(self, t: Table) -> list[Assignment]:
        """Assignments Celery reads from this source (last of each name)."""
        out = []
        for name, assigned in self.by_name.items():
            if self.django and not name.isupper():
                continue
            if t.canonical(name, self.namespace):
                out.append(assigned[-1])
        return sorted(out, key=lambda a: (a.path, a.line))

    def old_style(self, t: Table) -> bool:
        """Celery's majority vote between old and new names (no namespace)."""
        if self.namespace:
            return False
        names = set(self.by_name)
        return len(names & t.old) > len(names & t.new)


@dataclass
class App:
    key: str
    path: str
    var: str
    pos: Pos  # the Celery(...) call
    stmt: Pos | None
    preconf: dict[str, list[Assignment]] = field(default_factory=lambda: defaultdict(list))
    open: list[str] = field(default_factory=list)
    config: dict[str, Any] | None = None  # the config_source fact
    config_args: dict[str, dict[str, Any]] = field(default_factory=dict)  # last_arg / namespace facts
    source: Source | None = None
    source_problem: str | None = None  # the config source exists but could not be read
    update_call: dict[str, Any] | None = None
    conf_stmts: list[dict[str, Any]] = field(default_factory=list)
    task_cls: str | None = None
    send_only: bool = False  # runs no tasks: made only to send, inspect or monitor (domain/apps.py)
    main: str | None = None  # Celery's first argument, when it is a literal
    profile: str | None = None  # the settings profile this copy of a Django app is read with (profiles.py)
    profiles: list[dict[str, Any]] = field(default_factory=list)  # every profile found, for --show-apps
    cls: str | None = None  # the project's Celery subclass it is made from
    notes: list[str] = field(default_factory=list)  # what is judged by a default (shapes.empty_default)
    # a method of its class makes it again (``super().__init__(...)`` in ``init_app``):
    # a setting written where the app is made would be lost, so no fix adds one
    remade: str | None = None

    @property
    def namespace(self) -> str | None:
        return self.config.get("namespace") if self.config else None

    def get(self, name: str) -> Resolved:
        """The effective value of new-style setting ``name``."""
        t = table()
        old = t.to_old.get(name)
        for key in (name, old):
            assigned = self.preconf.get(key) if key else None
            if assigned:
                return _from_django(assigned[-1], self.source) or _resolved(assigned[-1], assigned)
        if self.open:
            return Resolved("unknown")
        if self.config is not None:
            if self.source is None:
                return Resolved("unknown")
            assigned = find_all(self.source, name, t)
            found = assigned[-1] if assigned else None
            if set_at_run_time(self.source, name, found, t):
                return Resolved("unknown")
            if found is not None:
                return _resolved(found, assigned)
            if self.source.open:
                return Resolved("unknown")
        default = t.defaults.get(name)
        return Resolved("default", NULL if default is None else default)

    def items_of(self, name: str) -> dict[str, tuple[Any, Pos | None, bool, str]] | None:
        """Keys set on a dict setting (``broker_transport_options``): literal
        keys of its value plus later ``X["key"] = v`` assignments."""
        resolved = self.get(name)
        if resolved.at is None:
            return {} if resolved.is_default else None
        return dict(resolved.at.items)

    def where_configured(self) -> str:
        if self.source is not None:
            return self.source.path
        return self.path


_DJANGO_ATTRIBUTE = "name:django.conf.settings."


def _from_django(a: Assignment, source: Source | None) -> Resolved | None:
    """``app.conf.task_routes = settings.CELERY_ROUTES`` (Django's
    ``settings``) in an app that loads the Django settings: the value that
    settings module binds the name to, as ``django.conf.settings`` gives
    it at run time (None: not such an assignment)."""
    origin = a.value.get("same") if isinstance(a.value, dict) else None
    if not isinstance(origin, str) or not origin.startswith(_DJANGO_ATTRIBUTE) or a.value.get("suffix"):
        return None
    if a.cond or source is None or not source.django:
        return Resolved("unknown", at=a)
    name = origin[len(_DJANGO_ATTRIBUTE):]
    assigned = source.by_name.get(name)
    if not assigned or source.open or (source.hidden is not None and source.hidden(name)):
        return Resolved("unknown", at=a)
    if source.runtime is not None and name in source.runtime[1]:
        return Resolved("unknown", at=a)
    return _resolved(assigned[-1], assigned)


def _resolved(a: Assignment, assigned: list[Assignment] | None = None) -> Resolved:
    """What ``a``, the last assignment of a name (of ``assigned``, all of
    them in the order they run), makes the value."""
    kept = _kept(assigned) if a.cond and not a.alternatives and assigned else None
    if kept is not None:
        return kept
    taken = BRANCHES.get()
    if taken and a.cond and a.alternatives and a.alt and (a.path, a.alt[0]) in taken:
        chosen = a.alternatives[taken[(a.path, a.alt[0])]]
        value, env = plain(chosen.value)
        return Resolved("unknown", at=chosen) if value is None else Resolved("set", value, env, chosen)
    if a.cond and a.alternatives:
        found = [plain(x.value) for x in a.alternatives]
        if all(v is not None for v, _ in found) and all(f == found[0] for f in found):
            value, env = found[0]
            return Resolved("set", value, env, a)  # every branch sets the same value
        known = all(v is not None for v, _ in found)
        return Resolved("unknown", at=a, values=[v for v, _ in found] if known else None)
    if a.cond:
        return Resolved("unknown", at=a)
    value, env = plain(a.value)
    if isinstance(value, dict) and a.items:
        value = {**value, **{k: plain(v[0])[0] for k, v in a.items.items()}}
    if value is None:
        return Resolved("unknown", at=a)
    return Resolved("set", value, env, a)


def _keys(source: Source, name: str, t: Table) -> list[str]:
    """The names Celery reads ``name`` by in ``source``, in order: the
    namespaced name, the plain name, the old name."""
    keys = []
    ns = source.namespace
    if ns:
        prefix = ns.rstrip("_") + "_"
        keys.append((prefix + name).upper() if prefix.isupper() else prefix + name)
    keys += [name, t.to_old.get(name)]
    return [k for k in keys if k and not (source.django and not k.isupper())]


def _kept(assigned: list[Assignment]) -> Resolved | None:
    """``X = True`` then ``if testing: X = True`` (or in a ``try``, a loop):
    whether the later assignments run or not, the value is the same.  The
    last unconditional assignment and every one after it set the same
    readable plain value: that value, at the unconditional one."""
    values = []
    for a in reversed(assigned):
        if a.items or (a.cond and a.alternatives):
            return None
        value = plain(a.value)
        if value[0] is None or isinstance(value[0], dict) or (values and value != values[0]):
            return None
        values.append(value)
        if not a.cond:
            return Resolved("set", value[0], value[1], a)
    return None


def find_all(source: Source, name: str, t: Table) -> list[Assignment] | None:
    """The assignments of the source that Celery reads for ``name``, in the
    order they run (the last one wins)."""
    for key in _keys(source, name, t):
        assigned = source.by_name.get(key)
        if assigned:
            return assigned
    return None


def find(source: Source, name: str, t: Table) -> Assignment | None:
    """The assignment of the source that Celery reads for ``name``."""
    assigned = find_all(source, name, t)
    return assigned[-1] if assigned else None


def set_at_run_time(source: Source, name: str, found: Assignment | None, t: Table) -> bool:
    """Whether code the chain hands its ``globals()`` to may set ``name``
    after ``found`` (Source.runtime): then its value is unknown."""
    if source.runtime is None:
        return False
    at, names = source.runtime
    if not any(key in names for key in _keys(source, name, t)):
        return False
    return found is None or next((i for i, a in enumerate(source.assignments) if a is found), -1) < at
