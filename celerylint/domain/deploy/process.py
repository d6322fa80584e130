"""A process of the deployment, and how it is tied to an app."""

from __future__ import annotations

from dataclasses import dataclass

from .cmdline import UNKNOWN, Command


@dataclass
class Process:
    path: str  # the file that defines it
    line: int
    kind: str  # compose | procfile | dockerfile | kubernetes | systemd | supervisor | shell | python
    name: str  # the service, process type, program or unit it is
    command: Command
    replicas: int | None = 1  # how many copies run; None: not stated or not readable
    via: str | None = None  # ``path:line`` of the script the command line is in, when another file runs it
    conditional: bool = False  # one branch of a script (``case``/``if``): which one runs is not known

    @property
    def role(self) -> str:
        return self.command.role

    @property
    def runs_beat(self) -> bool:
        return self.command.role in ("beat", "worker+beat")

    @property
    def instances(self) -> int | None:
        """How many beat or worker processes this starts: replicas times nodes."""
        if self.replicas is None or self.command.nodes is None:
            return None
        return self.replicas * self.command.nodes

    def option(self, name: str) -> str | None:
        """An option as written; None when not given or unknown."""
        value = self.command.options.get(name)
        return None if value in (None, UNKNOWN) else value

    def starts(self, module: str, var: str, only_app: bool) -> bool:
        """Whether this process starts the app ``module:var``: its ``-A``
        names the app's package, module or object; without ``-A`` (or from
        a variable) only when the project has one app (``only_app``)."""
        app = self.command.app
        if app is None or app == UNKNOWN:
            return only_app
        target, _, attr = app.partition(":")
        if attr:
            return module == target and attr == var
        return module == target or module.startswith(target + ".")

    @property
    def beats(self) -> int | None:
        """How many beat schedulers this starts (None: unknown)."""
        if not self.runs_beat:
            return 0
        if self.command.beat_nodes is not None:
            return None if self.replicas is None else self.replicas * self.command.beat_nodes
        return self.instances

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"
