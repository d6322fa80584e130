"""``path:line:col: CODE [name] message`` with the fix or hint indented below."""

from __future__ import annotations

import click

from .printable import printable


def render(result, settings, *, color: bool = False, unsafe: bool = False, summary_line: str | None = None) -> str:
    def style(text: str, **kw) -> str:
        return click.style(text, **kw) if color else text

    lines = []
    for f in result.findings:
        where = style(f"{printable(f.path)}:{f.line}:{f.col + 1}:", bold=True)
        code = style(f.code, fg="red" if f.severity == "error" else "yellow", bold=True)
        lines.append(f"{where} {code} [{f.name}] {printable(f.message)}")
        if f.fix is not None:
            how = "--fix" if f.fix.safe else "--fix --unsafe-fixes"
            lines.append(style(f"    fix ({'safe' if f.fix.safe else 'unsafe'}, {how}): {printable(f.fix.description)}",
                               fg="cyan"))
        elif f.hint:
            lines.append(style(f"    hint: {printable(f.hint)}", dim=True))
    lines.append(summary(result, unsafe) if summary_line is None else summary_line)
    return "\n".join(lines) + "\n"


def summary(result, unsafe: bool) -> str:
    parts = []
    if result.fixed:
        n = sum(result.fixed.values())
        parts.append(f"Fixed {n} finding{'s' * (n != 1)} in {len(result.fixed)} file{'s' * (len(result.fixed) != 1)}.")
    findings = result.findings
    if not findings:
        parts.append(f"No findings in {result.files} file{'s' * (result.files != 1)} checked.")
        return " ".join(parts)
    files = len({f.path for f in findings})
    safe = sum(1 for f in findings if f.fix and f.fix.safe)
    hidden = sum(1 for f in findings if f.fix and not f.fix.safe)
    fixable = safe + (hidden if unsafe else 0)
    text = (f"{len(findings)} finding{'s' * (len(findings) != 1)} in {files} file{'s' * (files != 1)}, "
            f"{fixable} fixable with --fix")
    if hidden and not unsafe:
        text += f" ({hidden} more with --unsafe-fixes)"
    parts.append(text + ".")
    return " ".join(parts)
