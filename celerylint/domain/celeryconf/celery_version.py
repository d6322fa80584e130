"""Whether the project pins Celery below 4, read from the files that list its
dependencies (``requirements*.txt``, ``requirements/*.txt``, ``Pipfile``,
``pyproject.toml``, ``setup.cfg``, ``setup.py``).

Celery 4 renamed the settings (``BROKER_URL`` became ``broker_url``, a
Django namespace became possible) and its tables know Celery 3's names
only as far as they kept working.  On a project that pins Celery 3 the old
names are the only names: the rules about setting names (CL107, CL109,
CL110) would give advice that breaks it, so they do not judge it.

Every requirement of ``celery`` found must bound it below 4 (``==3.1.25``,
``<4``, ``~=3.1``, Poetry's ``^3.1``); one without a bound, or allowing 4,
makes the version unknown, and the rules run as usual."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ...core.walk import requirement_file
from .tree_files import shared_tree_files

# ``celery`` as a requirement: not ``django-celery``, ``celery-redbeat``,
# ``celery_once``; extras allowed; then a version specifier, or TOML's
# ``celery = "..."`` / ``celery = {version = "..."}``
_REQUIREMENT = re.compile(
    r"""(?P<quote>["']?)(?<![\w.-])celery(?:\[[^\]\n]*\])?(?![\w-])"""
    r"""(?:\s*(?P<spec>(?:===|==|~=|<=|>=|!=|<|>)[^;#"'\n]*)"""
    r"""|\s*=\s*(?:\{[^}\n]*?version\s*=\s*)?["'](?P<toml>[^"'\n]*)["'])?(?P<rest>.*)""",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r"^\s*(?:(===|==|~=|<=|>=|!=|<|>|\^|~)\s*)?v?(\d+(?:\.\d+)*)")


def unless_below_4(m, findings: Iterable) -> list:
    """The ``findings`` of a rule about setting names, none when the project
    pins Celery below 4: the dependency files are read only when there is a
    finding to withhold."""
    found = list(findings)
    return [] if found and celery_below_4(m) else found


def celery_below_4(m) -> bool:
    """The project's dependency files pin Celery below 4 (see the module's
    docstring); once per model."""
    cached = getattr(m, "_celery_below_4", None)
    if cached is None:
        cached = m._celery_below_4 = _below_4(m)
    return cached


def _below_4(m) -> bool:
    shared = shared_tree_files(m)
    if shared is None:
        return False
    found = False
    for f in shared.files:
        if f.foreign or not requirement_file(f.directory.rpartition("/")[2], f.name):
            continue
        data = shared.read(f.path)
        if data is None or b"celery" not in data.lower():
            continue
        for line in data.decode("utf-8", "replace").splitlines():
            spec = requirement(line)
            if spec is None:
                continue
            if not bounded_below_4(spec):
                return False
            found = True
    return found


def requirement(line: str) -> str | None:
    """The version specifier of a requirement of Celery on ``line`` ("" for
    none), or None when the line requires no Celery (another package, a
    comment, prose that names Celery)."""
    line = line.split("#", 1)[0]
    for match in _REQUIREMENT.finditer(line):
        spec = match.group("spec") if match.group("spec") is not None else match.group("toml")
        if spec is not None:
            return spec
        rest = match.group("rest").strip()
        alone = not line[:match.start()].strip() and (rest in ("", ",", "\\") or rest.startswith(";"))
        if match.group("quote") or alone:
            return ""  # ``celery``, ``"celery",``: any version
    return None


def bounded_below_4(spec: str) -> bool:
    """Whether a version specifier (``==3.1.25``, ``>=3.1,<4.0``, ``^3.1``)
    allows no Celery 4 or later."""
    for clause in spec.split(","):
        match = _CLAUSE.match(clause)
        if match is None:
            continue
        op = match.group(1) or "=="
        version = tuple(int(n) for n in match.group(2).split("."))
        if op in ("==", "===", "^", "~", "<=") and version[0] < 4:
            return True
        if op == "<" and version + (0,) * (3 - len(version)) <= (4, 0, 0):
            return True
        if op == "~=" and version[0] < 4 and len(version) >= 2:  # ``~=3.1``: below 4
            return True
    return False
