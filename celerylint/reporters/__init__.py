"""Report formats.  Reporters see plain findings, never CST nodes.

``render`` picks the reporter of a format name; each module is imported
only when its format is asked for.  Paths: the human formats print them
relative to the working directory, as ruff does (a file outside it:
absolute), so that they can be opened from where celerylint ran; the
machine formats (json, json-lines, sarif, gitlab, junit, rdjson, github)
keep them relative to the report root, the git work tree of the working
directory (else the directory of the nearest configuration file at or above
it, else the working directory: ``Roots.report_root``), which is what their consumers
resolve them against (SARIF's ``%SRCROOT%``, GitLab's and GitHub's
repository paths, fingerprints that must not change with the directory a
job ran from)."""

from __future__ import annotations

# The human-readable formats (colour, terminal width, summary line)
HUMAN = ("full", "concise", "grouped", "text")
FORMATS = (*HUMAN, "json", "json-lines", "junit", "gitlab", "rdjson", "sarif", "github")
DEFAULT = "full"


def render(fmt: str, result, settings, *, color: bool = False, width: int | None = None, unsafe: bool = False,
           summary_line: str | None = None, show_fixes: bool = False, sarif_rules: list | None = None) -> str:
    """The report of ``result`` in format ``fmt`` (``text`` is ``full``)."""
    if fmt in HUMAN:
        from .color import Style
        from .sources import here

        result, settings = here(result, settings)

        options = dict(style=Style(color), width=width, unsafe=unsafe, summary_line=summary_line,
                       show_fixes=show_fixes)
        if fmt == "concise":
            from .text import render as human
        elif fmt == "grouped":
            from .full import render_grouped as human
        else:
            from .full import render as human
        return human(result, settings, **options)
    if fmt == "sarif":
        from .sarif import render as sarif

        return sarif(result, settings, rules=sarif_rules)
    if fmt == "json-lines":
        from .json import render_lines

        return render_lines(result, settings)
    from importlib import import_module

    module = {"json": "json", "junit": "junit", "gitlab": "gitlab", "rdjson": "rdjson", "github": "github"}[fmt]
    return import_module(f".{module}", __name__).render(result, settings)


def rules_json() -> str:
    """``--list-rules --output-format json``: every rule, from the catalog
    (no rule is imported).  A stable interface: fields are only added."""
    import json

    from ..docs import help_uri
    from ..registry import rules

    return json.dumps([{
        "code": e.code, "name": e.name, "summary": e.summary, "severity": e.severity, "fix": e.fix,
        "scope": e.kind, "default_enabled": e.default_enabled, "url": help_uri(e.code),
    } for e in rules()], indent=2, ensure_ascii=False) + "\n"
