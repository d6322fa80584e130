"""``concise``: ``path:line:col: CODE [name] message`` with the fix or hint
indented below; and what every human-readable format shares (the finding's
line, the summary, ``--show-fixes``)."""

from __future__ import annotations

from .color import Style
from .printable import printable


def location(f) -> str:
    return f"{printable(f.path)}:{f.line}:{f.col + 1}:"


def title(f, style: Style) -> tuple[str, str]:
    """(styled, plain) ``CODE [name]``."""
    return f"{style.severity(f.code, f.severity)} [{f.name}]", f"{f.code} [{f.name}]"


def fix_words(fix) -> str:
    how = "--fix" if fix.safe else "--fix --unsafe-fixes"
    return f"fix ({'safe' if fix.safe else 'unsafe'}, {how})"


def fit(prefix: str, plain_prefix: str, message: str, width: int | None, *, wrap: bool) -> list[str]:
    """``prefix`` + ``message`` on one line; on a terminal (``width``), the
    message wrapped (``wrap``) or shortened with an ellipsis to fit."""
    if width is None or len(plain_prefix) + 1 + len(message) <= width:
        return [f"{prefix} {message}"]
    if not wrap:
        room = max(width - len(plain_prefix) - 2, 10)
        return [f"{prefix} {message[:room].rstrip()}…"]
    import textwrap

    lines = textwrap.wrap(message, width=width, initial_indent=" " * (len(plain_prefix) + 1),
                          subsequent_indent="    ", break_long_words=False, break_on_hyphens=False)
    return [prefix + " " + lines[0][len(plain_prefix) + 1:], *lines[1:]] if lines else [prefix]


def render(result, settings, *, style: Style, width: int | None = None, unsafe: bool = False,
           summary_line: str | None = None, show_fixes: bool = False) -> str:
    lines = []
    for f in result.findings:
        styled, plain = title(f, style)
        lines += fit(f"{style(location(f), bold=True)} {styled}", f"{location(f)} {plain}",
                     printable(f.message), width, wrap=False)
        if f.fix is not None:
            lines.append(style(f"    {fix_words(f.fix)}: {printable(f.fix.description)}", fg="cyan"))
        elif f.hint:
            lines.append(style(f"    hint: {printable(f.hint)}", dim=True))
    lines += footer(result, unsafe, summary_line, show_fixes)
    return "\n".join(lines) + "\n"


def footer(result, unsafe: bool, summary_line: str | None, show_fixes: bool) -> list[str]:
    lines = applied(result) if show_fixes else []
    return [*lines, summary(result, unsafe) if summary_line is None else summary_line]


def applied(result, verb: str = "Fixed") -> list[str]:
    """``--show-fixes``: the fixes ``--fix`` applied (``--diff``: would
    apply), per file and code, as ruff lists them."""
    by_file = getattr(result, "fixed_codes", None) or {}
    if not by_file:
        return []
    n = sum(sum(codes.values()) for codes in by_file.values())
    lines = [f"{verb} {n} finding{'s' * (n != 1)}:"]
    for path in sorted(by_file):
        lines.append(f"- {printable(path)}:")
        for (code, name), count in sorted(by_file[path].items()):
            lines.append(f"    {count} × {code} ({name})")
    return lines


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
