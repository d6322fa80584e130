"""Worker command lines and Celery's environment variables in launch files
(``launch_files.launch_texts``).

A worker command line is a line (joined with its backslash continuations)
where ``celery`` is followed by ``worker``: ``celery -A proj worker -c 4``,
``python -m celery --app=proj.celery:app worker``, compose ``command:``
and Dockerfile ``CMD [...]`` lists, ``ExecStart=``, supervisor
``command=``.  It is tied to an app by its ``-A``/``--app`` value: ``proj``
names every app of the package ``proj`` (Celery looks for ``proj.app``,
``proj.celery``, ...), ``proj.celery`` the apps of that module,
``proj.celery:app`` the one app; a command line without ``-A`` (or with a
value from the environment) is tied to every app.

``CELERY_BROKER_URL`` and ``CELERY_RESULT_BACKEND`` set in a compose
``environment:`` section (list or mapping form), a Dockerfile ``ENV``, a
shell script's ``export`` or a systemd unit's ``Environment=``
override the configuration's ``broker_url`` / ``result_backend`` in that
deployment (Celery reads them first, celery-facts.md 2.1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .launch_files import launch_texts

# option -> the names it is written with; each takes a value
_OPTIONS = {
    "app": ("-A", "--app"),
    "prefetch_multiplier": ("--prefetch-multiplier",),
    "optimization": ("-O",),
    "concurrency": ("-c", "--concurrency"),
    "time_limit": ("--time-limit",),
    "soft_time_limit": ("--soft-time-limit",),
}
_BY_FLAG = {flag: option for option, flags in _OPTIONS.items() for flag in flags}
_TOKEN = re.compile(r"[^\s,\[\]]+")  # then without quotes: ``"--concurrency=${N}"``, ``["celery", "-A", ...]``
# A word before ``celery`` that makes the line prose ("... improved celery worker config", "The
# celery worker of ..."), not a command, unless the line says it is one.
_COMMAND = re.compile(r"(?i)\b(?:command|cmd|exec|execstart|entrypoint|program)\b")
_PROSE = re.compile(r"^[A-Za-z]+$")
_PRINTS = frozenset({"echo", "printf"})  # a line that prints its words runs none of them
_LAUNCHERS = frozenset({"exec", "run", "env", "sudo", "nice", "gosu", "su", "hupper", "watchmedo", "poetry", "pipenv",
                        "uv", "python", "python3", "sh", "bash", "command", "cmd", "time", "nohup"})
# Files whose environment settings are a deployment's: compose files, Dockerfiles, shell scripts, systemd units.
_ENV_FILES = re.compile(r"(?:^|/)(?:(?:docker-)?compose[^/]*\.ya?ml|Dockerfile[^/]*|[^/]*\.(?:ba)?sh|[^/]*\.service|Procfile[^/]*)$")
_ENV = re.compile(r"""^\s*(?:-\s*|ENV\s+|export\s+|Environment=)?["']?(CELERY_BROKER_URL|CELERY_RESULT_BACKEND)["']?"""
                  r"""\s*[:=]\s*["']?([^"'\s#]*)""")
ENV_SETTINGS = {"CELERY_BROKER_URL": "broker_url", "CELERY_RESULT_BACKEND": "result_backend"}


@dataclass
class WorkerCommand:
    path: str
    line: int
    app: str | None  # the -A value as written
    options: dict[str, str] = field(default_factory=dict)  # option -> value as written

    def starts(self, module: str, var: str) -> bool:
        """Whether this command line may start the app ``module:var``."""
        if self.app is None or "$" in self.app:
            return True
        target, _, attr = self.app.partition(":")
        if attr:
            return module == target and attr == var
        return module == target or module.startswith(target + ".")


@dataclass
class EnvOverride:
    path: str
    line: int
    name: str  # CELERY_BROKER_URL | CELERY_RESULT_BACKEND
    value: str  # as written (may be ``${REDIS_URL}``)

    @property
    def setting(self) -> str:
        return ENV_SETTINGS[self.name]


def _logical_lines(text: str):
    """``(first line number, text)`` with backslash continuations joined."""
    pending, start = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        yield start, pending + line
        pending = ""
    if pending:
        yield start, pending


def parse_command(tokens: list[str], command: bool = True) -> tuple[str | None, dict[str, str]] | None:
    """``(app, options)`` of a ``celery ... worker ...`` token list, or None."""
    try:
        first = next(i for i, t in enumerate(tokens) if t == "celery" or t.endswith("/celery"))
        tokens.index("worker", first + 1)
    except (StopIteration, ValueError):
        return None
    before = tokens[first - 1] if first else ""
    if tokens[0] in _PRINTS or (not command and _PROSE.match(before) and before.lower() not in _LAUNCHERS):
        return None
    options: dict[str, str] = {}
    rest = tokens[first + 1:]
    i = 0
    while i < len(rest):
        token = rest[i]
        flag, eq, value = token.partition("=")
        if flag in _BY_FLAG:
            if not eq or not value:  # ``-c 4``, ``--concurrency="${N}"``
                value = rest[i + 1] if i + 1 < len(rest) else ""
                i += 1
            options.setdefault(_BY_FLAG[flag], value)
        elif token.startswith("-A") and len(token) > 2:  # -Aproj
            options.setdefault("app", token[2:])
        i += 1
    return options.pop("app", None), options


def worker_commands(m) -> list[WorkerCommand]:
    cached = getattr(m, "_worker_commands", None)
    if cached is None:
        cached = m._worker_commands = []
        for path, text in sorted(launch_texts(m).items()):
            if "celery" not in text:
                continue
            for number, line in _logical_lines(text):
                if "celery" not in line or "worker" not in line or line.lstrip().startswith(("#", ";")):
                    continue
                tokens = [t.replace('"', "").replace("'", "") for t in _TOKEN.findall(line)]
                parsed = parse_command([t for t in tokens if t], bool(_COMMAND.search(line)))
                if parsed is not None:
                    cached.append(WorkerCommand(path, number, parsed[0], parsed[1]))
    return cached


def env_overrides(m) -> list[EnvOverride]:
    cached = getattr(m, "_env_overrides", None)
    if cached is None:
        cached = m._env_overrides = []
        for path, text in sorted(launch_texts(m).items()):
            if not _ENV_FILES.search(path) or ("CELERY_BROKER_URL" not in text and "CELERY_RESULT_BACKEND" not in text):
                continue
            for number, line in enumerate(text.splitlines(), 1):
                found = _ENV.match(line)
                if found and found.group(2):
                    cached.append(EnvOverride(path, number, found.group(1), found.group(2)))
    return cached


def commands_for(m, app) -> list[WorkerCommand]:
    """The command lines that may start ``app``: by its module, or by a
    module that names it in another way (``domain/deploy/apps.py``), as the
    deployment rules tie processes to apps."""
    from ..deploy.apps import named_apps

    module, _, var = app.key.rpartition(":")
    return [c for c in worker_commands(m)
            if c.starts(module, var) or (c.app and "$" not in c.app and app.key in named_apps(m, c.app))]
