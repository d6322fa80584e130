"""``--statistics``: how many findings of each code, most frequent first, as
ruff prints them (``[*]`` when ``--fix`` fixes some of them; in JSON,
``fixable`` is that boolean, as in ruff)."""

from __future__ import annotations

import json
from collections import Counter


def rows(findings, unsafe: bool = False) -> list[dict]:
    counts = Counter(f.code for f in findings)
    names = {f.code: f.name for f in findings}
    fixable = Counter(f.code for f in findings if f.fix is not None and (f.fix.safe or unsafe))
    return [{"code": code, "name": names[code], "count": count, "fixable": fixable[code] > 0}
            for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def render(findings, fmt: str, unsafe: bool = False) -> str:
    table = rows(findings, unsafe)
    if fmt == "json":
        return json.dumps(table, indent=2) + "\n"
    if not table:
        return ""
    width = max(len(str(r["count"])) for r in table)
    return "".join(f"{r['count']:>{width}}\t{r['code']}\t{'[*]' if r['fixable'] else '[ ]'} {r['name']}\n" for r in table)
