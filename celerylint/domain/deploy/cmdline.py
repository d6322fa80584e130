"""One command line that starts Celery, read with ``shlex``: which process
it is (worker, beat, worker with an embedded beat) and the options that
decide what it does.

Every launcher is the same command line once split into words:
``celery -A proj worker ...``, ``python -m celery ...``, Django's
``manage.py celery worker`` (django-celery), the old ``celeryd`` and
``celerybeat`` programs (also as Django management commands), and
``celery multi start w1 w2 ...`` (one node per name, or ``N`` nodes).  A
shell form is cut at ``&&``, ``||``, ``;`` and ``|``; the first segment
that starts Celery is the process.

A value is kept as written once ``${VAR:-default}`` is replaced by its
default; one that still holds ``$``, ``{``, ``<%`` or ``%(`` (an
environment variable without a default, a Helm, Jinja, ``str.format`` or
ERB template) is unknown (``UNKNOWN``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

UNKNOWN = "?"  # a value set from a template or variable celerylint cannot resolve

# option -> the names it is written with; every one takes a value
_VALUED = {
    "app": ("-A", "--app"),
    "pool": ("-P", "--pool"),
    "concurrency": ("-c", "--concurrency"),
    "autoscale": ("--autoscale",),
    "queues": ("-Q", "--queues"),
    "exclude_queues": ("-X", "--exclude-queues"),
    "prefetch_multiplier": ("--prefetch-multiplier",),
    "optimization": ("-O",),
    "max_tasks_per_child": ("--max-tasks-per-child", "--maxtasksperchild"),
    "max_memory_per_child": ("--max-memory-per-child",),
    "time_limit": ("--time-limit",),
    "soft_time_limit": ("--soft-time-limit",),
    "config": ("--config",),  # Celery's global option: sets CELERY_CONFIG_MODULE (domain/deploy/configmod.py)
}
_BY_FLAG = {flag: option for option, flags in _VALUED.items() for flag in flags}
# options of Celery's commands that take a value read nowhere here (so that
# it is not taken for the subcommand)
_SKIPPED = frozenset({"-b", "--broker", "--result-backend", "--loader", "--workdir", "-n", "--hostname",
                      "-l", "--loglevel", "-f", "--logfile", "--pidfile", "-s", "--schedule", "--schedule-filename",
                      "-S", "--scheduler", "--statedb", "--uid", "--gid", "--umask", "--executable", "-I", "--include",
                      "--heartbeat-interval", "--max-interval", "--settings", "--pythonpath"})
_BEAT_FLAGS = frozenset({"-B", "--beat"})
# programs that name Celery without running it
# commands that never run their arguments (``mkdir -p celerybeat`` names a directory)
_NOT_RUN = frozenset({"echo", "printf", "grep", "pgrep", "pkill", "kill", "killall", "ps", "which", "pip", "pip3",
                      "cat", "test", "[", "if", "rm", "ls", "apt-get", "apk", "curl", "wget", "sleep",
                      "mkdir", "rmdir", "touch", "chown", "chmod", "chgrp", "cp", "mv", "ln", "cd", "install",
                      "head", "tail", "stat", "mktemp", "useradd", "adduser", "groupadd", "addgroup"})
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&"})
# ``${VAR:-default}`` / ``${VAR-default}`` / ``${VAR:=default}``: the default (no nested braces)
_DEFAULTED = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?[-=]([^{}$]*)\}")
# what is left of templating once ``${VAR:-default}`` is resolved: a variable, Helm/Jinja, Python's
# ``str.format``, ERB, supervisord's ``%(ENV_X)s``
_TEMPLATING = ("$", "{", "}", "<%", "%(")
_MULTI_VERBS = frozenset({"start", "restart"})


@dataclass
class Command:
    """What a command line says about the process it starts."""

    role: str  # worker | beat | worker+beat
    app: str | None = None  # the -A value as written (UNKNOWN from a variable); None when not given
    options: dict[str, str] = field(default_factory=dict)  # option -> value as written, or UNKNOWN
    nodes: int | None = 1  # ``celery multi``: how many workers it starts (None: unknown)
    beat_nodes: int | None = None  # ``celery multi ... -B:1``: how many of its nodes embed beat (None: all)
    launcher: str = "celery"  # celery | celery multi | celeryd | celerybeat | manage.py

    def queues(self, option: str = "queues") -> tuple[str, ...] | None:
        value = self.options.get(option)
        if value is None or value == UNKNOWN:
            return None
        return tuple(q.strip() for q in value.split(",") if q.strip())


def resolve(value: str) -> str:
    """A value with ``${VAR:-default}`` resolved; UNKNOWN when templating is left."""
    value = _DEFAULTED.sub(lambda found: found.group(1), value)
    return UNKNOWN if any(mark in value for mark in _TEMPLATING) else value


def split(text: str) -> list[str] | None:
    """The words of a shell command line; None when it does not split (an open quote)."""
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        return list(lexer)
    except ValueError:
        return None


def segments(words: list[str]) -> list[list[str]]:
    """A shell command's simple commands (``a && b; c | d``)."""
    out: list[list[str]] = [[]]
    for word in words:
        if word in _SEPARATORS:
            out.append([])
        else:
            out[-1].append(word)
    return [s for s in out if s]


def parse_words(words: list[str]) -> Command | None:
    """The Celery process the words start, or None (not a worker or beat)."""
    for segment in segments(words):
        found = _parse_segment(segment)
        if found is not None:
            return found
    return None


def parse_text(text: str) -> Command | None:
    words = split(text)
    return None if words is None else parse_words(words)


def parse_all(text: str) -> list[Command]:
    """Every Celery process a shell line starts: the first, and those that
    follow it while it runs in the background (``celery ... worker -Q a &
    celery ... worker -Q b``).  A process left in the foreground ends the
    list: ``&&``, ``||`` and ``;`` run the next command once it has ended,
    and a worker does not end."""
    words = split(text)
    if words is None:
        return []
    out: list[Command] = []
    segment: list[str] = []
    for word in [*words, ";"]:
        if word not in _SEPARATORS:
            segment.append(word)
            continue
        found = _parse_segment(segment) if segment else None
        segment = []
        if found is not None:
            out.append(found)
            if word != "&":
                break
    return out


def _program(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _parse_segment(words: list[str]) -> Command | None:
    if words and _program(words[0]) in _NOT_RUN:
        return None  # ``echo "start celery worker"``, ``pkill -f "celery beat"``
    for i, word in enumerate(words):
        if " " in word and "celery" in word:  # ``sh -c "celery -A proj worker"``
            name, eq, value = word.partition("=")
            if eq and name.rstrip("+").isidentifier():  # ``cmd="celery ... -Q $1"``, ``cmds+="..."``: run later by eval
                return parse_text(value)
            return parse_text(word)
        name = _program(word)
        if name in ("celeryd", "celerybeat", "celeryd-multi"):
            role = "beat" if name == "celerybeat" else "worker"
            return _options(words[i + 1:], role, name, nodes_first=name == "celeryd-multi")
        if name == "celery":
            manage = i > 0 and _program(words[i - 1]) == "manage.py"  # django-celery's ``manage.py celery worker``
            return _subcommand(words[i + 1:], "manage.py" if manage else "celery")
    return None


def _subcommand(words: list[str], launcher: str) -> Command | None:
    app = config = None
    i = 0
    while i < len(words):
        word = words[i]
        flag, eq, value = word.partition("=")
        if flag in ("-A", "--app"):
            if not eq:
                value = words[i + 1] if i + 1 < len(words) else ""
                i += 1
            app = resolve(value)
        elif word.startswith("-A") and len(word) > 2:
            app = resolve(word[2:])
        elif flag == "--config":  # a global option, written before the subcommand
            if not eq:
                value = words[i + 1] if i + 1 < len(words) else ""
                i += 1
            config = resolve(value) if value else UNKNOWN
        elif flag in _SKIPPED:
            i += 0 if eq else 1
        elif word.startswith("-"):
            pass
        else:
            rest = words[i + 1:]
            if word in ("worker", "celeryd"):
                found = _options(rest, "worker", launcher)
            elif word in ("beat", "celerybeat"):
                found = _options(rest, "beat", launcher)
            elif word == "multi" and rest and rest[0] in _MULTI_VERBS:
                found = _options(rest[1:], "worker", "celery multi", nodes_first=True)
            else:
                return None
            if app is not None and "app" not in found.options:
                found.app = app
            if config is not None:
                found.options.setdefault("config", config)
            return found
        i += 1
    return None


def _options(words: list[str], role: str, launcher: str, nodes_first: bool = False) -> Command:
    command = Command(role, launcher=launcher)
    if nodes_first:
        names = []
        for word in words:
            if word.startswith("-"):
                break
            names.append(word)
        words = words[len(names):]
        command.nodes = int(names[0]) if len(names) == 1 and names[0].isdigit() else (len(names) or None)
    i = 0
    while i < len(words):
        word = words[i]
        flag, eq, value = word.partition("=")
        if flag in _BEAT_FLAGS and role == "worker":
            command.role = "worker+beat"
        elif flag.split(":", 1)[0] in _BEAT_FLAGS and role == "worker":  # ``-B:1``: one node of ``celery multi``
            command.role = "worker+beat"
            command.beat_nodes = (command.beat_nodes or 0) + 1
        elif ":" in flag and flag.startswith("-") and flag.split(":", 1)[0] in _BY_FLAG:
            command.options[_BY_FLAG[flag.split(":", 1)[0]]] = UNKNOWN  # ``-Q:w1 a``: one node's value (multi)
            i += 0 if eq else 1
        elif flag in _BY_FLAG or (flag[:2] in _BY_FLAG and not flag.startswith("--")):
            option = _BY_FLAG.get(flag) or _BY_FLAG[flag[:2]]
            if flag not in _BY_FLAG:  # ``-c4``, ``-Ofair``, ``-Qa,b``
                value, eq = word[2:], "="
            elif not eq:
                value = words[i + 1] if i + 1 < len(words) else ""
                i += 1
            if option == "config":  # after the subcommand: Celery 4 read it, Celery 5 has no such worker option
                value = ""
            command.options.setdefault(option, resolve(value) if value else UNKNOWN)
        elif flag in _SKIPPED:
            i += 0 if eq else 1
        i += 1
    app = command.options.pop("app", None)
    if app is not None:
        command.app = app
    return command


def python_argv(argv: list[str | None], launcher: str) -> Command | None:
    """The process a command line written in Python starts: the ``argv`` of
    ``app.worker_main(argv)`` (``launcher`` ``worker_main``: Celery 5 wants
    ``worker`` in it; Celery 4 took the program name first, then the
    worker's options) or a list run as a program (``["celery", "-A", ...]``).
    An item celerylint cannot read (``None``) is an unknown value."""
    words = [w if w is not None else "${?}" for w in argv]
    if launcher != "worker_main":
        return parse_words(words)
    if "worker" in words:
        return _options(words[words.index("worker") + 1:], "worker", launcher)
    if words and not words[0].startswith("-") and words[0] != "${?}":
        return _options(words[1:], "worker", launcher)
    return None
