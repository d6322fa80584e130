"""The deployment of the linted tree: every worker and beat process its
launch files start, keyed to the apps of the configuration model.

The files are the launch files ``celeryconf.launch_files`` already reads
(lazily, once per run, only those that mention Celery or
``consumer_timeout``); each is parsed by the reader its name selects.
Files under test, example and documentation paths are not a deployment.
A script another file runs (a compose ``command: ./start-worker.sh``, a
Dockerfile ``COPY``'d ``/start-celeryworker``) gives its command lines to
that process, and is not counted again on its own.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from ...core.source import read_capped
from ...facts.python_workers import PYTHON_WORKER

from ..celeryconf.launch_files import launch_texts
from ..celeryconf.paths import LAUNCH_FILE_MAX_BYTES
from . import compose, dockerfile, helm, kubernetes, procfile, shell, supervisor, systemd
from .apps import named_apps
from .cmdline import UNKNOWN, Command, parse_words, python_argv, segments, split
from .paths import COMPOSE as _COMPOSE, YAML_NOTICE, is_deployment_path
from .process import Process
from .rabbitmq import ConsumerTimeout, consumer_timeouts
from .yamlfile import available as yaml_available

_YAML = re.compile(r"\.ya?ml$")
# a compose file by what it holds, whatever its name (cookiecutter-django's
# ``local.yml`` and ``production.yml`` until 2024): a top-level ``services:``
# whose entries build or run an image, and no Kubernetes ``kind:``
_COMPOSE_TEXT = re.compile(r"(?m)^services:[ \t]*(?:#.*)?$")
_SERVICE_IMAGE = re.compile(r"(?m)^[ \t]+(?:image|build):")
_KIND = re.compile(r"(?m)^(?:kind|apiVersion):")
_PROCFILE = re.compile(r"(?:^|/)Procfile[^/]*$")
_DOCKERFILE = re.compile(r"(?:^|/)(?:Dockerfile[^/]*|[^/]*\.[Dd]ockerfile)$")
_SHELL = re.compile(r"\.(?:ba)?sh$")
_SCRIPT_WORD = re.compile(r"^(?:\.{0,2}/)?[\w./-]+$")


@dataclass
class Deployment:
    processes: list[Process] = field(default_factory=list)
    consumer_timeouts: list[ConsumerTimeout] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # deployment files that did not load (templated YAML)


class _Reader:
    def __init__(self, texts: dict[str, str], root: Path | None) -> None:
        self.texts = texts
        self.root = root
        self.followed: set[str] = set()
        # image path -> the tree's path copied there, by the Dockerfile that copies it; ``copies``
        # holds those every Dockerfile copying the image path agrees on
        self.by_dockerfile: dict[str, dict[str, str]] = {}
        for path, text in sorted(texts.items()):
            if _DOCKERFILE.search(path):
                self.by_dockerfile[path] = {d: posixpath.normpath(s) for d, s in dockerfile.copies(path, text).items()}
        sources: dict[str, set[str]] = {}
        for copies in self.by_dockerfile.values():
            for dest, src in copies.items():
                sources.setdefault(dest, set()).add(src)
        self.copies = {dest: next(iter(found)) for dest, found in sources.items() if len(found) == 1}

    def follow(self, words: list[str] | str, path: str, built: str | None = None) -> list[tuple[Command, str | None, bool]]:
        """The Celery processes a command line starts: itself, or the script
        it runs (an image path as the Dockerfile ``built`` copies it, when the
        caller knows which one builds the image)."""
        if isinstance(words, str):
            words = split(words) or []
        found = parse_words(list(words))
        script = _inline_script(words) if found is not None else None
        if script is not None:  # ``sh -c`` with a script that may start several (``&``, one per line)
            started = shell.commands(script)
            if len(started) > 1:
                return [(command, None, conditional) for _, command, conditional in started]
        if found is not None:
            return [(found, None, False)]
        inner = _wrapped(words)
        if inner is not None:
            return self.follow(inner, path, built)
        copies = {**self.copies, **self.by_dockerfile[built]} if built in self.by_dockerfile else self.copies
        for script, args in self._scripts(words, path, copies):
            self.followed.add(script)
            started = shell.commands(self.texts[script], args)
            if started:  # else a wrapper (``bin/start-stunnel bin/run worker``): the next script runs them
                return [(command, f"{script}:{line}", conditional) for line, command, conditional in started]
        return []

    def _scripts(self, words: list[str], path: str, copies: dict[str, str]):
        """The scripts of the tree a command line runs, each with the words
        after it (its arguments), in the order the words name them."""
        for index, word in enumerate(words[:3]):
            if not _SCRIPT_WORD.match(word) or word in ("sh", "bash", "/bin/sh", "/bin/bash", "-c", "exec"):
                continue
            names = {word, copies.get(word, word), *_copied_into(word, copies)}
            here = posixpath.dirname(path)
            candidates = {posixpath.normpath(posixpath.join(here, n.lstrip("/"))) for n in names}
            candidates |= {posixpath.normpath(n.lstrip("/")) for n in names}
            found = [c for c in candidates if c in self.texts or self._load(c)]
            if not found:
                base = posixpath.basename(copies.get(word, word))
                found = [p for p in self.texts if posixpath.basename(p) == base and _SHELL.search(p)]
            if len(found) == 1:
                yield found[0], list(words[index + 1:])

    def chart_files(self, chart: str) -> list[str]:
        """The files of a chart directory and of its ``templates/`` at any
        depth (at most ``helm.MAX_TEMPLATES`` folders), relative to it."""
        prefix = chart + "/" if chart else ""
        if self.root is None:
            return [p[len(prefix):] for p in self.texts if p.startswith(prefix)]
        out: list[str] = []
        folders = ["", "templates/"]
        while folders and len(folders) < helm.MAX_TEMPLATES:
            sub = folders.pop(0)
            try:
                names = sorted(os.listdir(self.root / (prefix + sub or ".")))
            except OSError:
                continue
            out += [sub + n for n in names]
            if sub:  # the folders of ``templates/``
                folders += [f"{sub}{n}/" for n in names if (self.root / (prefix + sub + n)).is_dir()
                            and not (self.root / (prefix + sub + n)).is_symlink()]
        return out

    def text_of(self, path: str) -> str | None:
        """The text of a file of the tree (a compose file another one ``extends``)."""
        return self.texts[path] if path in self.texts or self._load(path) else None

    def _load(self, path: str) -> bool:
        """Read a script no launch-file pattern names (``compose/django/start``)."""
        if self.root is None or path.startswith("..") or not is_deployment_path(path):
            return False
        try:
            data = read_capped(self.root / path, LAUNCH_FILE_MAX_BYTES)
        except OSError:  # absent, a directory, over the cap
            return False
        self.texts[path] = data.decode("utf-8", "replace")
        return True


def _copied_into(word: str, copies: dict[str, str]) -> list[str]:
    """What a path inside a directory an image copies was in the tree
    (``/app/bin/run`` after ``COPY . /app``: ``bin/run``)."""
    out = []
    for dest, src in copies.items():
        inside = dest.rstrip("/") + "/"
        if word.startswith(inside) and inside != "/":
            out.append(posixpath.normpath(posixpath.join(src, word[len(inside):])))
    return out


def _runs_scripts(parse, text: str, entrypoints: bool) -> bool:
    """A launch file that names no Celery but may start it through another
    file: a Procfile's or an image's script, a compose file's (a ``.sh``
    it names), a service the compose file ``extends``, a ``command:``
    under the ENTRYPOINT of an image it builds
    (when a Dockerfile of the tree has one: a compose file is not parsed
    for nothing)."""
    if parse in (procfile.read, dockerfile.read):
        return True
    return parse is compose.read and ("extends" in text or ".sh" in text
                                      or (entrypoints and "build" in text and "command" in text))


_EXTENDS_FILE = re.compile(r"""(?m)^[ \t]+file:[ \t]*["']?([^"'\s#]+)""")


def _extended_files(texts: dict[str, str]) -> set[str]:
    """The files compose files name in ``extends: {file: ...}``."""
    out = set()
    for path, text in texts.items():
        if _YAML.search(path) and "extends" in text:
            for name in _EXTENDS_FILE.findall(text):
                out.add(posixpath.normpath(posixpath.join(posixpath.dirname(path), name)))
    return out


def _reader_for(path: str, text: str):
    if _COMPOSE.search(path) or (_YAML.search(path) and _COMPOSE_TEXT.search(text) and _SERVICE_IMAGE.search(text)
                                 and not _KIND.search(text)):
        return compose.read
    if _PROCFILE.search(path):
        return procfile.read
    if _DOCKERFILE.search(path):
        return dockerfile.read
    if path.endswith(".service"):
        return systemd.read
    if "[program:" in text and path.endswith((".conf", ".ini")):
        return supervisor.read
    if _YAML.search(path) and "containers" in text and "kind:" in text:
        return kubernetes.read
    return None


def _inline_script(words: list[str]) -> str | None:
    """The script of ``sh -c "..."`` / ``bash -c "..."`` (after ``exec``,
    ``env`` and the like), or None."""
    for at, word in enumerate(words[:-1]):
        if word == "-c":
            return words[at + 1] if at and posixpath.basename(words[at - 1]) in ("sh", "bash", "ash", "dash", "zsh") else None
    return None


def _wrapped(words: list[str]) -> list[str] | None:
    """The command line a wrapper runs: the string of ``bash -c "..."``
    (its last simple command: ``wait-for-it db:5432 && worker.sh``), or
    what follows the last ``--`` (``wait-for-it.sh -t 0 broker:6379 --
    /app/worker.sh start``); None when ``words`` wrap nothing."""
    if "-c" in words[:3]:
        at = words.index("-c")
        if at + 1 < len(words):
            inner = segments(split(words[at + 1]) or [])
            return inner[-1] if inner else None
    if "--" in words[1:-1]:
        return words[len(words) - words[::-1].index("--"):]
    return None


def read(texts: dict[str, str], root: Path | None = None) -> Deployment:
    """The deployment the files ``path -> text`` describe (scripts they run
    read from ``root``)."""
    texts = {p: t for p, t in texts.items() if is_deployment_path(p)}
    out = Deployment()
    reader = _Reader(texts, root)
    yaml_files = False
    charted: set[str] = set()  # the templates of the charts read
    if yaml_available():
        for chart in helm.charts(list(texts), reader.text_of):
            found, templates = helm.read(chart, reader.chart_files(chart), reader.text_of, reader.follow)
            out.processes.extend(found)
            charted.update(templates)
    entrypoints = any(_DOCKERFILE.search(p) and "ENTRYPOINT" in t for p, t in texts.items())
    extended = _extended_files(texts)
    for path in sorted(texts):
        text = texts[path]
        parse = _reader_for(path, text)
        if path in charted or (parse is compose.read and path in extended and not _COMPOSE.search(path)):
            continue  # a chart's template; services other compose files ``extends``, deployed only through them
        if parse is None or ("celery" not in text and not _runs_scripts(parse, text, entrypoints)):
            continue
        if parse in (compose.read, kubernetes.read):
            yaml_files = True
            if not yaml_available():
                continue
            if "{{" in text:  # a Helm or Jinja template: what it renders is not known
                out.unread.append(path)
                continue
        found = compose.read(path, text, reader.follow, reader.text_of) if parse is compose.read else parse(path, text, reader.follow)
        out.processes.extend(found)
    for path in sorted(texts):  # scripts no other file runs: processes of their own
        if _SHELL.search(path) and path not in reader.followed:
            for line, command, conditional in shell.commands(texts[path]):
                out.processes.append(Process(path, line, "shell", posixpath.basename(path), command, None, None,
                                             conditional))
    if yaml_files and not yaml_available():
        out.notices.append(YAML_NOTICE)
    out.consumer_timeouts = consumer_timeouts(texts)
    return out


def deployment(m) -> Deployment:
    """The deployment of the model's tree, read once per run."""
    cached = getattr(m, "_deployment", None)
    if cached is None:
        cached = m._deployment = read(launch_texts(m), Path(m.root))
        cached.processes.extend(python_processes(m.project.of_kind(PYTHON_WORKER)))
    return cached


def python_processes(facts: list[dict]) -> list[Process]:
    """Workers the project's Python code starts (``facts/python_workers.py``):
    how many times that code runs is not known (replicas unknown)."""
    out = []
    for f in sorted(facts, key=lambda f: (f["path"], f["line"], f["col"])):
        command = python_argv(f["argv"], f["launcher"]) if is_deployment_path(f["path"]) else None
        if command is None:
            continue
        if f["app"] and f["launcher"] == "worker_main":
            command.app = f["app"]  # the app object whose worker_main runs: an -A in argv changes nothing
        out.append(Process(f["path"], f["line"], "python", f["name"], command, None))
    return out


def processes_for(m, app) -> list[Process]:
    """The processes that start ``app``: named by their ``-A`` (the app's
    module or object, or a module ``apps.named_apps`` ties to it), or, when
    the project has one app that runs workers, every process without ``-A``."""
    module, _, var = app.key.rpartition(":")
    workers = [a for a in m.relevant_apps() if not a.send_only]
    only = len(workers) == 1 and workers[0].key == app.key and workers[0].path == app.path
    return [p for p in deployment(m).processes
            if p.starts(module, var, only) or (p.command.app not in (None, UNKNOWN) and app.key in named_apps(m, p.command.app))]


def runs_only_beat(m, app) -> bool:
    """The deployment starts ``app`` only as ``celery beat``, the project has
    other apps to run tasks with, and every worker the deployment starts
    names its app (``-A``), never this one: no worker runs ``app``, so its
    worker settings mean nothing (a beat app with a configuration of its
    own, beside the workers' apps)."""
    if not any(a is not app and not a.send_only for a in m.relevant_apps()):
        return False  # first: most projects have one app, and need not read their deployment here
    mine = processes_for(m, app)
    if not mine or any(p.role != "beat" for p in mine):
        return False
    workers = [p for p in deployment(m).processes if p.role != "beat"]
    return bool(workers) and all(p.command.app not in (None, UNKNOWN) for p in workers)


def worker_apps(m) -> list:
    """The configured apps some worker may run (``m.configured_apps()``
    but those ``runs_only_beat``): the rules on worker settings
    (acknowledgement, prefetch, time limits, pools) check these."""
    return [a for a in m.configured_apps() if not runs_only_beat(m, a)]
