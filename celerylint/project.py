"""The project phase: rules over the facts that every file contributed.

Facts are plain dicts (``kind``, ``path``, positions, data) recorded by
checkers during the per-file phase; they survive the cache and cross process
boundaries.  Non-Python files (Redis configuration, compose files) are given
to the project as text.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .config import Settings
from .model import Finding
from .registry import Entry


@dataclass
class Project:
    settings: Settings
    facts: list[dict[str, Any]] = field(default_factory=list)
    other_files: dict[str, str] = field(default_factory=dict)  # relative path -> text
    python_files: tuple[str, ...] = ()  # every linted Python file, relative

    def of_kind(self, kind: str) -> Iterable[dict[str, Any]]:
        return (f for f in self.facts if f["kind"] == kind)


def warm_up(entries: Iterable[Entry]) -> None:
    """Import what the project phase will need (the project rules, libcst,
    Celery's table of settings): done by a process that would otherwise
    wait for its workers."""
    wanted = [e for e in entries if e.kind == "project"]
    for entry in wanted:
        entry.load()
    if wanted:
        from .celeryconf.settings_table import table

        table()


def run_project(project: Project, entries: Iterable[Entry]) -> tuple[list[Finding], list[str]]:
    findings: list[Finding] = []
    errors: list[str] = []
    for entry in entries:
        if entry.kind != "project":
            continue
        try:
            for finding in entry.load()().check(project):
                if project.settings.enabled(finding.code, finding.path):
                    findings.append(finding)
        except Exception:
            errors.append(f"internal error in {entry.code}:\n{traceback.format_exc()}")
    return findings, errors
