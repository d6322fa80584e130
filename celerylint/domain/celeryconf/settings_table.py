"""Celery's own setting names: new names, old upper-case names, the mapping
between them and the defaults, as ``celery.app.defaults`` defines them.

celerylint ships them for every stable Celery release from 4.0 on
(``settings_data.py``, generated from the releases' own ``defaults.py`` by
``python -m celerylint.devtools celery-data``) and never imports Celery at
run time: it lints projects on any Celery release, installed beside it or
not, and never forces a Celery version on them.  ``table()`` is the newest
release's table; a name of any covered release is known
(``Table.known``), and ``introduced_in``/``last_in`` say which releases
have a name.  Only the tests read the installed Celery (``live_table``)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from functools import cache
from typing import Any

# Documented settings that Celery reads elsewhere (``conf.get``), not in
# ``defaults.py`` (celery-facts.md 1.6): an unknown-name rule accepts them.
_READ_ELSEWHERE = frozenset(
    [f"{p}_{s}" for p in ("beat", "events", "worker") for s in ("executable", "gid", "logfile", "pidfile", "uid", "umask")]
    + ["cassandra_secure_bundle_path", "override_backends", "redis_backend_credential_provider",
       "redis_backend_health_check_interval", "redis_client_name", "result_backend_thread_safe",
       "visibility_timeout"]
)


@dataclass(frozen=True)
class Table:
    new: frozenset[str]
    old: frozenset[str]
    to_new: dict[str, str]  # old upper-case name -> new name
    to_old: dict[str, str]
    defaults: dict[str, Any]
    # the names, new and old, of the older releases covered that the newest one dropped
    dropped: frozenset[str] = field(default=frozenset(), compare=False)

    def canonical(self, name: str, namespace: str | None) -> str | None:
        """The new name a key of a source stands for, as Celery looks it up
        (celery-facts.md 2.3); None if Celery does not read it."""
        return _canonical(name, namespace, self.new, self.to_new)

    def canonical_in_any_release(self, name: str, namespace: str | None) -> bool:
        """Does a covered Celery release read ``name`` (the newest, or an
        older one that had a setting since dropped)?"""
        if self.canonical(name, namespace):
            return True
        new = {n for n in self.dropped if n.islower()}
        old = {o: "" for o in self.dropped if o.isupper()}
        return bool(_canonical(name, namespace, new, old) or name in old)

    def is_old(self, name: str, namespace: str | None) -> bool:
        """An old upper-case name (and not also a valid namespaced new name)."""
        if name not in self.old:
            return False
        if namespace and namespace.isupper():
            prefix = namespace.rstrip("_") + "_"
            if name.startswith(prefix) and name[len(prefix):].lower() in self.new:
                return False
        return True

    def renamed(self, old: str, namespace: str | None) -> str:
        new = self.to_new[old]
        if namespace and namespace.isupper():
            return f"{namespace.rstrip('_')}_{new.upper()}"
        return new

    def known(self, name: str) -> bool:
        """A name some covered Celery release defines, or reads elsewhere."""
        return name in self.new or name in self.old or name in self.dropped or name in _READ_ELSEWHERE

    def suggestion(self, name: str, namespace: str | None) -> str | None:
        """The one close name, when it is clearly closer than any other."""
        found = self.suggestions(name, namespace)
        if not found:
            return None
        if found == [_unprefixed(name, self.old)]:
            return found[0]
        scores = [difflib.SequenceMatcher(None, name.lower(), s.lower()).ratio() for s in found]
        if scores[0] < 0.9:
            return None  # close enough to ask, not to rename
        return found[0] if len(found) == 1 or scores[0] - scores[1] >= 0.05 else None

    def suggestions(self, name: str, namespace: str | None) -> list[str]:
        """Real names close to an unknown ``name``, in the spelling the source uses."""
        if namespace and namespace.isupper():
            prefix = namespace.rstrip("_") + "_"
            base = name[len(prefix):].lower() if name.startswith(prefix) else name.lower()
            close = difflib.get_close_matches(base, sorted(self.new), n=3, cutoff=0.85)
            if not close and name.isupper():  # ``CELERY_IGNORE_RESULTS``: close to an old name, named as it is now
                old = difflib.get_close_matches(name, sorted(self.old), n=3, cutoff=0.85)
                close = list(dict.fromkeys(self.to_new[o] for o in old if self.to_new.get(o)))
            return [f"{prefix}{c.upper()}" for c in close]
        if name.isupper():
            bare = _unprefixed(name, self.old)
            return [bare] if bare else difflib.get_close_matches(name, sorted(self.old), n=3, cutoff=0.85)
        return difflib.get_close_matches(name, sorted(self.new | _READ_ELSEWHERE), n=3, cutoff=0.85)


def _unprefixed(name: str, old: set[str] | frozenset[str]) -> str | None:
    """An old name written with a ``CELERY_`` prefix it does not have
    (``CELERY_ENABLE_UTC``, Celery 3's spelling of ``ENABLE_UTC``;
    ``CELERY_BROKER_URL`` outside a ``CELERY`` namespace): the name meant."""
    bare = name[len("CELERY_"):] if name.startswith("CELERY_") else None
    return bare if bare in old else None


def _canonical(name: str, namespace: str | None, new: set[str] | frozenset[str], to_new: dict[str, str]) -> str | None:
    if namespace:
        prefix = namespace.rstrip("_") + "_"
        if name.startswith(prefix):
            rest = name[len(prefix):]
            candidate = rest.lower() if prefix.isupper() else rest
            if candidate in new and (rest.isupper() if prefix.isupper() else rest.islower()):
                return candidate
    if name in new:
        return name
    return to_new.get(name) or None


@cache
def table() -> Table:
    """The newest covered release's table (``settings_data.py``)."""
    from . import settings_data as data

    newest = len(data.RELEASES) - 1
    new = frozenset(n for n, runs in data.NEW.items() if runs[-1][1] == newest)
    to_new = {o: n for o, (n, runs) in data.OLD.items() if runs[-1][1] == newest}
    dropped = frozenset(data.NEW).union(data.OLD) - new - set(to_new)
    return Table(new, frozenset(to_new), to_new, {n: o for o, n in to_new.items()},
                 {n: data.DEFAULTS[n][-1][1] for n in sorted(new)}, dropped)


def _runs(name: str) -> tuple[tuple[int, int], ...]:
    from . import settings_data as data

    if name in data.NEW:
        return data.NEW[name]
    return data.OLD[name][1] if name in data.OLD else ()


def introduced_in(name: str) -> str | None:
    """The first covered Celery release that has setting ``name`` (new or
    old spelling); None if none has it."""
    from . import settings_data as data

    runs = _runs(name)
    return data.RELEASES[runs[0][0]] if runs else None


def last_in(name: str) -> str | None:
    """The last covered release that has ``name``, when the newest one no
    longer does; None otherwise."""
    from . import settings_data as data

    runs = _runs(name)
    return data.RELEASES[runs[-1][1]] if runs and runs[-1][1] != len(data.RELEASES) - 1 else None


def since(name: str) -> str:
    """`` (Celery X and later)`` for a setting the oldest covered release
    lacks, to follow its name in a message; else empty."""
    from . import settings_data as data

    first = introduced_in(name)
    return f" (Celery {first} and later)" if first and first != data.RELEASES[0] else ""


def live_table() -> Table:
    """The installed Celery's table, imported (the tests only)."""
    from celery.app import defaults

    return Table(
        new=frozenset(defaults.SETTING_KEYS),
        old=frozenset(defaults._OLD_SETTING_KEYS),
        to_new={k: v for k, v in defaults._TO_NEW_KEY.items() if v},
        to_old=dict(defaults._TO_OLD_KEY),
        defaults=dict(defaults.DEFAULTS),
    )
