"""GitHub Actions workflow commands: one ``::warning``/``::error`` line each."""

from __future__ import annotations

from .printable import printable


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(result, settings) -> str:
    out = []
    for f in result.findings:
        level = {"error": "error", "note": "notice"}.get(f.severity, "warning")
        props = [f"file={_prop(printable(f.path))}", f"line={f.line}"]
        if f.end_line == f.line:
            props += [f"endLine={f.end_line}", f"col={f.col + 1}", f"endColumn={max(f.end_col, f.col) + 1}"]
        else:
            props += [f"endLine={f.end_line}"]
        props.append(f"title={_prop(f'celerylint ({f.code})')}")
        message = f"{f.code} [{f.name}] {printable(f.message)}"
        if f.fix is not None:
            message += f"\nfix: {printable(f.fix.description)}"
        elif f.hint:
            message += f"\nhint: {printable(f.hint)}"
        out.append(f"::{level} {','.join(props)}::{_data(message)}")
    return "\n".join(out) + ("\n" if out else "")
