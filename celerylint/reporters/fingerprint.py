"""GitHub code scanning's ``primaryLocationLineHash``.

A rolling polynomial hash (base 37, 64-bit wrap-around) over the next 100
non-blank characters from the start of each line, spaces and tabs skipped,
line endings normalised to LF, an end marker (65535) and zero padding after
the text.  Equal hashes in one file are told apart by a ``:n`` counter.  The
same values upload-sarif computes, so ours are kept and no warning is logged.
"""

from __future__ import annotations

BLOCK = 100
BASE = 37
MASK = (1 << 64) - 1
END = 65535
_FIRST = pow(BASE, BLOCK, 1 << 64)


def line_hashes(text: str) -> dict[int, str]:
    """``{line number: "hex:count"}`` for every line of ``text``."""
    window = [0] * BLOCK
    starts = [-1] * BLOCK
    state = {"hash": 0, "index": 0}
    counts: dict[str, int] = {}
    out: dict[int, str] = {}

    def emit() -> None:
        value = format(state["hash"], "x")
        counts[value] = counts.get(value, 0) + 1
        out[starts[state["index"]]] = f"{value}:{counts[value]}"
        starts[state["index"]] = -1

    def push(code: int) -> None:
        i = state["index"]
        oldest = window[i]
        window[i] = code
        state["hash"] = (BASE * state["hash"] + code - _FIRST * oldest) & MASK
        state["index"] = (i + 1) % BLOCK

    line = 0
    line_start = True
    prev_cr = False
    units = text.encode("utf-16-le")
    codes = [int.from_bytes(units[i:i + 2], "little") for i in range(0, len(units), 2)]
    for code in [*codes, END]:
        if code in (32, 9) or (prev_cr and code == 10):
            prev_cr = False
            continue
        if code == 13:
            code, prev_cr = 10, True
        else:
            prev_cr = False
        if starts[state["index"]] != -1:
            emit()
        if line_start:
            line_start = False
            line += 1
            starts[state["index"]] = line
        if code == 10:
            line_start = True
        push(code)
    for _ in range(BLOCK):
        if starts[state["index"]] != -1:
            emit()
        push(0)
    return out


def fingerprints(findings, sources) -> list[str]:
    """A stable identifier for each finding (JSON ``fingerprint``, GitLab's
    Code Quality ``fingerprint``): SHA-256 of the code, the path and the
    text of the finding's first and last lines with all whitespace removed,
    plus a counter among equal keys in the file, 32 hex digits.  Moving the
    code, re-indenting it or editing other lines keeps it; editing the
    flagged line changes it.  Without a readable file (a broker URL), the
    message stands for the text."""
    import hashlib

    counts: dict[str, int] = {}
    out = []
    for f in findings:
        source = sources.get(f.path)
        if source is None:
            content = f.message
        else:
            lines = {f.line, f.end_line}
            content = "\n".join("".join(source.line(n).split()) for n in sorted(lines))
        key = f"{f.code}\0{f.path}\0{content}"
        counts[key] = counts.get(key, 0) + 1
        digest = hashlib.sha256(f"{key}\0{counts[key]}".encode("utf-8", "surrogateescape")).hexdigest()
        out.append(digest[:32])
    return out
