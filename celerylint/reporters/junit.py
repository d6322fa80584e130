"""JUnit XML for Jenkins (the JUnit plugin) and GitLab (``artifacts:
reports: junit``): a ``<testsuites>`` holding one ``<testsuite>`` per file
with findings, one ``<testcase>`` per finding with a ``<failure>`` (notes:
``<skipped>`` with the message, so they show without failing the build).
A clean run is one passing test case, so the report is never empty."""

from __future__ import annotations

import re
from collections import defaultdict
from xml.sax.saxutils import escape, quoteattr

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    """XML 1.0 cannot hold C0 controls (but tab, LF, CR) or lone surrogates,
    even as character references: they are shown as escapes."""
    return _XML_INVALID.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                            else f"\\u{ord(m.group()):04x}", text)


def _attr(text: str) -> str:
    return quoteattr(_clean(text), {"\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


def render(result, settings) -> str:
    by_file: dict[str, list] = defaultdict(list)
    for f in result.findings:
        by_file[f.path].append(f)
    failing = sum(1 for f in result.findings if f.severity != "note")
    skipped = len(result.findings) - failing
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuites name="celerylint" tests="{max(len(result.findings), 1)}" failures="{failing}" '
           f'errors="0" skipped="{skipped}" time="0">']
    if not by_file:
        out.append('  <testsuite name="celerylint" tests="1" failures="0" errors="0" skipped="0" time="0">')
        out.append('    <testcase name="celerylint" classname="celerylint" time="0"/>')
        out.append("  </testsuite>")
    for path, findings in by_file.items():
        fails = sum(1 for f in findings if f.severity != "note")
        out.append(f"  <testsuite name={_attr(path)} tests=\"{len(findings)}\" failures=\"{fails}\" errors=\"0\" "
                   f"skipped=\"{len(findings) - fails}\" time=\"0\">")
        for f in findings:
            name = f"{f.code} [{f.name}] at {path}:{f.line}:{f.col + 1}"
            out.append(f"    <testcase name={_attr(name)} classname={_attr(path)} file={_attr(path)} "
                       f"line=\"{f.line}\" time=\"0\">")
            body = f"{path}:{f.line}:{f.col + 1}: {f.code} [{f.name}] {f.message}"
            if f.fix is not None:
                body += f"\nfix ({'safe' if f.fix.safe else 'unsafe'}): {f.fix.description}"
            elif f.hint:
                body += f"\nhint: {f.hint}"
            tag = "skipped" if f.severity == "note" else "failure"
            out.append(f"      <{tag} message={_attr(f.message)} type={_attr(f.code)}>"
                       f"{escape(_clean(body))}</{tag}>")
            out.append("    </testcase>")
        out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"
