"""Settings an ``if``/``elif``/``else`` sets to different values in its
branches (``DEBUG`` on or off, an environment flag): a configuration rule
reports what it reports in every branch, and nothing that depends on the
branch taken.

Each combination of branches is a world (at most ``MAX_WORLDS``; with
more, those settings stay unknown, as when no world is taken).  The rule
runs once per world; a finding is kept when every world has one of the
same code at the same place, where the assignments of one name in the
branches of one ``if`` count as one place: ``prefetch = 8`` in one branch
and ``prefetch = 16`` in the other give both findings, each at its own
line, while ``acks_late = False`` / ``acks_late = True`` gives none.
A world in which every app runs its tasks eagerly (``task_always_eager``:
no broker, no worker) is left out, unless every world is one.
Elsewhere (a setting missing where the app loads its configuration) the
finding is the first world's, whose message may name that world's value
of another setting; when the worlds' findings there differ, it has no
fix (one world's fix need not do for the others).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from itertools import product

from ...core.model import Finding
from .settings import BRANCHES
from .values import plain

MAX_WORLDS = 16


def in_every_world(m, run: Callable[[object], Iterable[Finding]], hint: str | None = None) -> list[Finding]:
    """The findings ``run`` gives in every world; ``hint``: the rule's, for a finding whose fix is dropped."""
    ifs, place = _varying(m)
    worlds = 1
    for _, _, branches in ifs:
        worlds *= branches
    if not ifs or worlds > MAX_WORLDS:
        return list(run(m))
    results, eager = [], []
    for choice in product(*(range(branches) for _, _, branches in ifs)):
        token = BRANCHES.set({(path, if_id): branch for (path, if_id, _), branch in zip(ifs, choice)})
        try:
            (eager if _runs_no_worker(m) else results).append(list(run(m)))
        finally:
            BRANCHES.reset(token)
    results = results or eager

    def key(f: Finding) -> tuple:
        return f.code, f.path, place.get((f.path, f.line), f.line)

    common = set.intersection(*({key(f) for f in found} for found in results))
    out: dict[tuple, Finding] = {}
    for found in results:
        for f in found:
            if key(f) not in common:
                continue
            first = out.setdefault((key(f), f.line, f.col), f)
            if f != first and first.fix is not None:
                # another world says it differently: its fix would not do for every branch
                out[(key(f), f.line, f.col)] = replace(first, fix=None, hint=hint)
    return list(out.values())


def _runs_no_worker(m) -> bool:
    """In this world every app that could run tasks runs them eagerly
    (``if broker: ... else: CELERY_TASK_ALWAYS_EAGER = True``, pretalx): no
    message reaches a broker, so the world says nothing either way and is
    left out, unless every world is such a one."""
    from .model import runs_eagerly

    apps = [a for a in m.relevant_apps() if not a.send_only]
    return bool(apps) and all(runs_eagerly(a) for a in apps)


def _varying(m) -> tuple[list[tuple[str, int, int]], dict[tuple[str, int], tuple]]:
    """The ifs whose branches set a setting to different known values
    (path, if id, number of branches), and the place of each line of
    those assignments: (path, if id, name)."""
    ifs: dict[tuple[str, int], int] = {}
    place: dict[tuple[str, int], tuple] = {}
    for assigned in m.assignments.values():
        for a in assigned:
            if not (a.alternatives and a.alt):
                continue
            values = [plain(x.value) for x in a.alternatives]
            if any(v is None for v, _ in values) or all(v == values[0] for v in values):
                continue
            ifs[(a.path, a.alt[0])] = a.alt[2]
            for x in a.alternatives:
                for pos in (x.pos, x.value_pos):
                    if pos is not None:
                        place[(x.path, pos[0])] = (a.path, a.alt[0], a.name)
    return [(path, if_id, n) for (path, if_id), n in sorted(ifs.items())], place
