"""The keys of ``[tool.celerylint]`` and what configuration errors say: where a key is, what was meant.
"""

from __future__ import annotations

import re

# The keys of [tool.celerylint] besides the options (config.declared_options).
KEYS = (
    "select", "extend-select", "ignore", "extend-ignore", "exclude", "extend-exclude",
    "force-exclude", "respect-gitignore", "per-file-ignores", "extend-per-file-ignores",
    "cache-dir", "extend", "fixable", "extend-fixable", "unfixable", "output-format", "fix", "unsafe-fixes",
)


def suggestion(word: str, candidates) -> str:
    """`` (did you mean 'lock-ttl'?)`` for the closest candidate, or ''."""
    import difflib

    wanted = word.strip().lower().replace("_", "-")
    pool = {c.lower(): c for c in candidates}
    if wanted in pool and wanted != word:
        return f" (did you mean {pool[wanted]!r}?)"
    close = difflib.get_close_matches(wanted, list(pool), n=1, cutoff=0.6)
    return f" (did you mean {pool[close[0]]!r}?)" if close else ""


def suggest_rule(word: str) -> str:
    """`` (did you mean 'CL203' (lock-without-ttl)?)`` for the rule whose code
    or name is closest to ``word``, or ''."""
    import difflib

    from ..registry import rules

    by = {e.code.lower(): e for e in rules()} | {e.name: e for e in rules()}
    wanted = word.strip().lower().replace("_", "-")
    if re.fullmatch(r"cl[\doil]+", wanted):  # CL2O3, CLI03: letters typed for digits
        wanted = "cl" + wanted[2:].translate(str.maketrans("oil", "011"))
    close = difflib.get_close_matches(wanted, list(by), n=1, cutoff=0.6)
    if not close:
        return ""
    entry = by[close[0]]
    return f" (did you mean {entry.code!r} ({entry.name})?)"


def where_of(source: str, lines: list[str] | None, key: str, with_key: bool = True) -> str:
    """``file:line: key`` when the key's line is found, else ``file: key``."""
    if not with_key:
        return where_of(source, lines, key).rpartition(": ")[0]
    if lines:
        pattern = re.compile(r"^\s*(?:" + re.escape(key) + r'|"' + re.escape(key) + r'"' + r"|'" + re.escape(key) + r"')\s*=")
        for number, line in enumerate(lines, 1):
            if pattern.match(line):
                return f"{source}:{number}: {key}"
    return f"{source}: {key}"
