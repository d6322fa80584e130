"""Every regular expression celerylint keeps at module level runs in linear
time on hostile text: each ``re.Pattern`` attribute (alone or in a dict,
tuple or list) of every module of the package, and every prefilter
``Regex`` of every checker, on 50 KB adversarial strings (long runs of
word characters, spaces, dots, ``a+a+...``, ``${``, ``{{``, quotes, ``@``,
``:``, ``/``..., each with a tail that makes a match fail late).  Each
pattern is run as its module uses it (``finditer``, which costs what
``search``, ``sub`` and ``split`` cost, unless ``USES`` says ``match``;
prefilter needles through ``needles.search``) and must finish every string
within a second.

The patterns run in a child process (this file, run as a script) that
prints each time as it goes; one stuck in backtracking is killed, not
waited for.  A new pattern applied to file content or to broker replies
must pass here (CONTRIBUTING.md).
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import re
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

LIMIT = 1.0  # seconds, for one pattern on one 50 KB string (a quadratic one takes tens)
SIZE = 50_000

# Patterns their modules apply only with ``match`` or ``fullmatch`` (at one
# place: a search from every position is not what they cost).
USES = {
    "celerylint.engine.analysis:_HEADER": "match",
    "celerylint.domain.celeryconf.fixes:_COMMA_ENDS_LINE": "match",
    "celerylint.domain.celeryconf.worker_cli:_ENV": "match",
    "celerylint.reporters.vcs:_SCP": "match",
    "celerylint.reporters.vcs:_SHA": "fullmatch",
    "celerylint.run.writer:_TEMP_NAME": "fullmatch",
    "celerylint.doctor.connect:_NEXT_URL": "match",
    "celerylint.domain.celeryconf.redis_instances:_BARE": "fullmatch",
}
SKIPPED_MODULES = {"celerylint.__main__", "celerylint.devtools.__main__"}  # each runs its command line when imported


def adversarial() -> dict[str, str]:
    """Named 50 KB strings: a run of one shape, alone or after a prefix a
    pattern starts with, and a tail that makes a match fail late."""
    units = ("a", "1", "0", "A", "_", " ", "\t", " \t", "\n", "\r", "\r\n", "\n ", ".", "a.", "a+", "a + ", "a-",
             "-", "a=", "a = ", "a,", "a, ", "${", "$a", "{{", "{", "{a", "}", "%(", "%", "[", "(", "a(", "a[", "'",
             '"', "'a", '"a', "@", "a@", ":", "a:", "/", "a/", "a://", "#", "# a", "\\", "a ", "a\n", "*", "|",
             "a|", "<", "`", "=", "cache.", "cache[", "class a(", "task ", "Task", "redis://", ":a@", "a-b-", "--a ",
             "e", "settings", "from .")
    prefixes = ("%", "${", "{", "://", "redis://:", "@", ":", "#", "class ", "class a(", "cp ", "-", "--", "'", '"',
                "from ", "DJANGO_SETTINGS_MODULE", "caches[", "CELERY_", "@a", "{{ a|")
    runs = ("0", "a", " ", ".", "Task")
    pairs = (("cp ", "--a "), ("cp ", "-a "), ("COPY ", "./a"), ("class A(", "class A("), ("{{ a|", " "))
    out = {}
    for unit in units:
        out[repr(unit)] = unit * (SIZE // len(unit)) + "!"
    for prefix in prefixes:
        for run in runs:
            out[repr(prefix + run)] = prefix + run * (SIZE // len(run)) + "!"
    for prefix, run in pairs:
        out[repr(prefix + run)] = prefix + run * (SIZE // len(run)) + "!"
    return out


def _holders(value, name: str):
    if isinstance(value, re.Pattern):
        yield name, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, re.Pattern):
                yield f"{name}[{key!r}]", item
    elif isinstance(value, (tuple, list)) and not isinstance(value, bytes):
        for i, item in enumerate(value):
            if isinstance(item, re.Pattern):
                yield f"{name}[{i}]", item


def patterns() -> dict[str, object]:
    """``module:name`` -> a compiled pattern, or a prefilter ``Regex``."""
    import celerylint
    from celerylint.api.needles import All, Regex
    from celerylint.registry import entries

    found: dict[str, object] = {}
    seen: set = set()  # a pattern used in several places is run once

    def add(key: str, pattern) -> None:
        same = (type(pattern), bytes(pattern)) if isinstance(pattern, Regex) else (pattern.pattern, pattern.flags)
        if same not in seen:
            seen.add(same)
            found[key] = pattern

    for info in sorted(pkgutil.walk_packages(celerylint.__path__, "celerylint."), key=lambda i: i.name):
        if info.name in SKIPPED_MODULES:
            continue
        module = importlib.import_module(info.name)
        for attr, value in sorted(vars(module).items()):
            for name, pattern in _holders(value, attr):
                add(f"{info.name}:{name}", pattern)
            if isinstance(value, Regex):
                add(f"{info.name}:{attr}", value)

    def needles(requirement, where: str):
        if isinstance(requirement, Regex):
            add(f"{where}:REQUIRES:{bytes(requirement).decode('latin-1')}", requirement)
        elif isinstance(requirement, (tuple, list, All)) and not isinstance(requirement, bytes):
            for part in requirement:
                needles(part, where)

    for entry in entries():
        needles(entry.requires, f"{entry.module}.{entry.cls}")
    return found


def run_one(key: str, pattern, text: str) -> float:
    from celerylint.api.needles import Regex, search

    data = text.encode("utf-8") if isinstance(pattern, Regex) or isinstance(pattern.pattern, bytes) else text
    start = time.perf_counter()
    if isinstance(pattern, Regex):
        search(pattern, data)
    elif USES.get(key) == "match":
        pattern.match(data)
    elif USES.get(key) == "fullmatch":
        pattern.fullmatch(data)
    else:  # every match, as finditer finds them, without a Python object each
        pattern.subn(data[:0], data)
    return time.perf_counter() - start


def child(keys: list[str]) -> None:
    """Time every key on every string: one JSON line each, flushed."""
    found, texts = patterns(), adversarial()
    print("ready", flush=True)
    for key in keys:
        for name, text in texts.items():
            took = run_one(key, found[key], text)
            print(json.dumps([key, name, took]), flush=True)
            if took > LIMIT:  # failed: the rest of its strings need not be run
                break
        print(json.dumps([key, None, 0.0]), flush=True)


def timings(keys: list[str]) -> dict[str, tuple[float, str]]:
    """Each key's worst time and the string it took it on.  A child stuck on
    one string past the limit (with a margin for a loaded machine) is killed,
    the key recorded as too slow, and a new child goes on with the next key."""
    results: dict[str, tuple[float, str]] = {}
    todo = list(keys)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    while todo:
        proc = subprocess.Popen([sys.executable, __file__, *todo], stdout=subprocess.PIPE, text=True, env=env)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda out=proc.stdout: [lines.put(line.strip()) for line in out], daemon=True).start()
        try:
            assert _line(lines, 120) == "ready"
            worst, where, last = 0.0, "", ""
            while todo:
                line = _line(lines, LIMIT * 3)
                if line is None and proc.poll() is not None:
                    raise AssertionError(f"the timing process failed (exit {proc.returncode}) on {todo[0]}")
                if line is None:  # stuck in backtracking
                    results[todo.pop(0)] = (float("inf"), f"killed after {last!r}")
                    break
                key, name, took = json.loads(line)
                assert key == todo[0], (key, todo[0])
                if name is None:
                    results[todo.pop(0)] = (worst, where)
                    worst, where, last = 0.0, "", ""
                    continue
                last = name
                if took > worst:
                    worst, where = took, name
        finally:
            proc.kill()
            proc.wait()
    return results


def _line(lines: queue.Queue, timeout: float) -> str | None:
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        return None


ALL = patterns() if __name__ != "__main__" else {}


@pytest.fixture(scope="module")
def measured():
    return timings(sorted(ALL))


def test_the_walk_finds_the_patterns():
    """The collection reaches module patterns, dict members and prefilter needles."""
    assert "celerylint.engine.guard:_TOKEN" in ALL
    assert "celerylint.engine.guard:_STRING_REST['\"\"\"']" in ALL
    assert any(":REQUIRES:" in key for key in ALL)
    assert len(ALL) > 80


@pytest.mark.slow  # about 20 s for all, in one child process
@pytest.mark.parametrize("key", sorted(ALL))
def test_pattern_is_linear_on_adversarial_text(measured, key):
    worst, where = measured[key]
    assert worst <= LIMIT, f"{key} took {worst:.2f} s on {where!r}"


if __name__ == "__main__":
    child(sys.argv[1:])
