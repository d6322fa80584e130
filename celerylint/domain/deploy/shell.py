"""Shell scripts: every line (with its backslash continuations) that starts
a worker or beat.  A script that chooses with ``case``/``if`` runs one of
its branches, so the command lines inside a branch are marked conditional,
and so are the lines after a branch that may end the script (``exec`` or
``exit`` in it: ``if [ "$1" = web ]; then exec gunicorn ...; fi``); a line
outside every branch after branches that only prepare (``if [ -n "$MIGRATE" ];
then migrate; fi`` then ``exec celery ... -B``) runs whenever the script does.
One that chooses by its first argument (``case "$1" in worker) ...;; esac``,
the ``bin/run worker`` of a Procfile) runs the branch that argument selects
when the caller gives it as a word."""

from __future__ import annotations

import fnmatch
import re

from .cmdline import Command, parse_all

_BRANCH = re.compile(r"^[ \t]*(?:case|if|elif|else|then)\b", re.M)
_CASE_ON_FIRST = re.compile(r"""^[ \t]*case[ \t]+"?\$(?:1|\{1\})"?[ \t]+in[ \t]*$""")
_PATTERN = re.compile(r"^[ \t]*(?:\([ \t]*)?([^()\s][^()]*)\)(.*)$")
_WORD = re.compile(r"^[\w.:/*?-]+$")
# ``cat <<EOF`` / ``cat <<-'EOF'``
_PRINTED_HEREDOC = re.compile(r"""^[ \t]*cat[ \t]+<<(-?)[ \t]*["']?(\w+)""")


def logical_lines(text: str):
    """``(first line number, text)`` with backslash continuations joined."""
    pending, start = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        yield start, pending + line
        pending = ""
    if pending:
        yield start, pending


def commands(text: str, args: list[str] | None = None) -> list[tuple[int, Command, bool]]:
    """``(line, command, conditional)`` of each Celery process the script
    starts, run with ``args`` when they are known."""
    if "celery" not in text:
        return []
    chosen = _chosen_branch(text, args[0]) if args else None
    if chosen is not None:
        skipped, rest = chosen
        conditional = _BRANCH.search(rest) is not None
    else:
        skipped, conditional = set(), _BRANCH.search(text) is not None
    skipped = skipped | _printed(text)
    certain = _unconditional(text) if chosen is None else None
    out = []
    for number, line in logical_lines(text):
        if "celery" not in line or line.lstrip().startswith("#") or number in skipped:
            continue
        for found in parse_all(line):  # ``celery ... worker -Q a & celery ... worker -Q b``: both
            out.append((number, found, conditional if certain is None else number not in certain))
    return out


_OPENS = re.compile(r"^(?:if|case|while|until|for|select)\b")
_CLOSES = re.compile(r"(?:^|[;&|][ \t]*)(?:fi|esac|done)\b[ \t;]*(?:#.*)?$")
_ENDS = re.compile(r"(?:^|[;&|(][ \t]*|\bthen[ \t]+|\belse[ \t]+)(?:exec|exit|return)\b")
_TESTED = re.compile(r"^(?:\[|test\b)|\|\|")


def _unconditional(text: str) -> set[int]:
    """The first numbers of the logical lines that run whenever the script
    does: outside every ``if``/``case``/loop, not a test (``[ ... ] && ...``,
    ``... || ...``), and before any branch or test that may end the script."""
    out: set[int] = set()
    depth, ended = 0, False
    for number, line in logical_lines(text):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        opens = bool(_OPENS.match(stripped))
        closes = bool(_CLOSES.search(stripped))
        tested = bool(_TESTED.search(stripped))
        if depth == 0 and not opens and not ended and not tested:
            out.add(number)
        if (depth > 0 or opens or tested) and _ENDS.search(stripped):
            ended = True  # the script may end here, in one case only
        depth = max(0, depth + opens - closes)
    return out


def _printed(text: str) -> set[int]:
    """The numbers of the lines of the here-documents the script only
    prints (``cat <<EOF`` with no redirection or pipe: a usage text, next
    steps); a here-document written to a file or piped may be run."""
    out: set[int] = set()
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opened = _PRINTED_HEREDOC.match(lines[i])
        i += 1
        if opened is None or ">" in lines[i - 1] or "|" in lines[i - 1]:
            continue
        dash, word = opened.group(1), opened.group(2)
        start = i
        while i < len(lines) and (lines[i].lstrip("\t") if dash else lines[i]) != word:
            i += 1
        out.update(range(start + 1, i + 1))  # line numbers count from 1
        i += 1
    return out


def _chosen_branch(text: str, arg: str) -> tuple[set[int], str] | None:
    """For a script with one ``case "$1" in`` at its top level (no other
    ``case``): the numbers of the lines in the branches ``arg`` does not
    select, and the text that runs (the chosen branch and what is outside
    the ``case``).  None when ``arg`` is not a plain word or the ``case``
    cannot be read."""
    if not _WORD.match(arg) or any(c in arg for c in "*?"):
        return None
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if re.match(r"^[ \t]*case\b", line)]
    if len(starts) != 1 or not _CASE_ON_FIRST.match(lines[starts[0]]):
        return None
    branches: list[tuple[list[str], list[int]]] = []  # (patterns, line indexes)
    end = None
    for i in range(starts[0] + 1, len(lines)):
        stripped = lines[i].strip()
        if stripped == "esac":
            end = i
            break
        head = _PATTERN.match(lines[i]) if not branches or _closed(lines, branches[-1][1]) else None
        if head is not None:
            patterns = [p.strip().strip("\"'") for p in head.group(1).split("|")]
            branches.append((patterns, [i]))
        elif branches:
            branches[-1][1].append(i)
        elif stripped and not stripped.startswith("#"):
            return None
    if end is None or not branches:
        return None
    chosen = next((b for b in branches if any(fnmatch.fnmatchcase(arg, p) for p in b[0])), None)
    skipped = {i + 1 for b in branches if b is not chosen for i in b[1]}
    run = [line for i, line in enumerate(lines) if i + 1 not in skipped and i != starts[0]]
    return skipped, "\n".join(run)


def _closed(lines: list[str], indexes: list[int]) -> bool:
    """The branch of these lines has ended with ``;;`` (a new pattern may start)."""
    return lines[indexes[-1]].rstrip().endswith(";;")
