"""Celery's own setting names: new names, old upper-case names, the mapping
between them and the defaults, as ``celery.app.defaults`` defines them.

celerylint ships them (``settings_snapshot.py``, generated from a Celery
release by ``python -m celerylint.devtools --snapshot``) and never imports
Celery at run time: it lints projects on any Celery release, installed
beside it or not, and never forces a Celery version on them.  Only the
dev tool and the tests read the installed Celery (``live_table``)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
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

    def canonical(self, name: str, namespace: str | None) -> str | None:
        """The new name a key of a source stands for, as Celery looks it up
        (celery-facts.md 2.3); None if Celery does not read it."""
        if namespace:
            prefix = namespace.rstrip("_") + "_"
            if name.startswith(prefix):
                rest = name[len(prefix):]
                candidate = rest.lower() if prefix.isupper() else rest
                if candidate in self.new and (rest.isupper() if prefix.isupper() else rest.islower()):
                    return candidate
        if name in self.new:
            return name
        return self.to_new.get(name)

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
        return name in self.new or name in self.old or name in _READ_ELSEWHERE

    def suggestion(self, name: str, namespace: str | None) -> str | None:
        """The one close name, when it is clearly closer than any other."""
        found = self.suggestions(name, namespace)
        if not found:
            return None
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
            return [f"{prefix}{c.upper()}" for c in close]
        if name.isupper():
            return difflib.get_close_matches(name, sorted(self.old), n=3, cutoff=0.85)
        return difflib.get_close_matches(name, sorted(self.new | _READ_ELSEWHERE), n=3, cutoff=0.85)


@cache
def table() -> Table:
    """The table celerylint ships (``settings_snapshot.py``)."""
    from . import settings_snapshot as snapshot

    return Table(frozenset(snapshot.NEW), frozenset(snapshot.OLD), dict(snapshot.TO_NEW),
                 dict(snapshot.TO_OLD), dict(snapshot.DEFAULTS))


def live_table() -> Table:
    """The installed Celery's table (the dev tool and the tests only)."""
    from celery.app import defaults

    return Table(
        new=frozenset(defaults.SETTING_KEYS),
        old=frozenset(defaults._OLD_SETTING_KEYS),
        to_new={k: v for k, v in defaults._TO_NEW_KEY.items() if v},
        to_old=dict(defaults._TO_OLD_KEY),
        defaults=dict(defaults.DEFAULTS),
    )


def snapshot_source() -> str:
    """``settings_snapshot.py`` for the installed Celery (``python -m celerylint.devtools --snapshot``)."""
    import datetime
    from importlib.metadata import version
    from pprint import pformat

    t = live_table()
    for value in t.defaults.values():
        assert eval(repr(value), {"datetime": datetime, "inf": float("inf")}) == value, value  # noqa: S307
    return (
        f'"""Generated by `python -m celerylint.devtools --snapshot` from Celery {version("celery")}\n'
        "(``celery.app.defaults``); do not edit.  ``settings_table.table`` reads it:\n"
        'celerylint never imports Celery at run time."""\n\n'
        "import datetime  # noqa: F401 - in reprs of defaults\n\n"
        'inf = float("inf")  # in reprs of defaults\n\n'
        f"CELERY_VERSION = {version('celery')!r}\n"
        f"NEW = {pformat(tuple(sorted(t.new)))}\n"
        f"OLD = {pformat(tuple(sorted(t.old)))}\n"
        f"TO_NEW = {pformat(t.to_new)}\n"
        f"TO_OLD = {pformat(t.to_old)}\n"
        f"DEFAULTS = {pformat(t.defaults)}\n"
    )
