"""``celerylint rule CODE`` and ``celerylint rule --all``: a rule's
documentation, as ``ruff rule`` prints it (``--output-format json`` for
tools).  ``--explain CODE`` prints the same text."""

from __future__ import annotations

import json

import click

from .terminal import fail, write_stdout


def _record(entry) -> dict:
    """One rule as ``--output-format json`` gives it: the fields of
    ``--list-rules --output-format json`` and its whole documentation."""
    from ..docs import explain_text, help_uri

    return {"code": entry.code, "name": entry.name, "summary": entry.summary, "severity": entry.severity,
            "fix": entry.fix, "scope": entry.kind, "default_enabled": entry.default_enabled,
            "url": help_uri(entry.code), "explanation": explain_text(entry.code)}


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("code", required=False)
@click.option("--all", "every", is_flag=True, help="Every rule.")
@click.option("--output-format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: the documentation as Markdown; json: one object per rule.")
def rule(code, every, fmt) -> None:
    """Print the documentation of rule CODE (a code or a name), or of every rule with --all."""
    from ..config.messages import suggest_rule
    from ..docs import explain_text
    from ..registry import by_code, rules

    if every == bool(code):
        fail("give one rule code (celerylint rule CL203) or --all")
    if every:
        entries = list(rules())
    else:
        entry = by_code(code)
        if entry is None:
            from ..doctor.codes import explain as explain_doctor

            doctor = explain_doctor(code)
            if doctor is not None and fmt == "text":
                write_stdout((doctor + "\n").encode("utf-8"))
                return
            fail(f"unknown rule {code!r}{suggest_rule(code)}; see --list-rules")
        entries = [entry]
    if fmt == "json":
        records = [_record(e) for e in entries]
        text = json.dumps(records if every else records[0], indent=2, ensure_ascii=False) + "\n"
    else:
        text = "\n".join(explain_text(e.code) for e in entries) + "\n"
    write_stdout(text.encode("utf-8"))
