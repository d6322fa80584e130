"""Compose files: each service's ``entrypoint:`` and ``command:`` (a string
or a list), its replicas (``deploy.replicas``, else ``scale``, else 1), and
its ``environment:`` (a list or a mapping).  A service that sets
``command:`` but no ``entrypoint:`` runs it under the exec-form
``ENTRYPOINT`` of the Dockerfile it builds, when that is a file of the
tree.  A service that ``extends:`` another service takes what it does not
set itself from it, as compose
merges them (``command``/``entrypoint`` replaced, ``environment`` and
``deploy`` merged key by key); the other service may be in another file
(``extends: {file: common.yml, service: x}``, relative to the extending
file), read only when it is a file of the tree outside test and
documentation paths (a missing file, a path leaving the tree, a cycle or
a chain deeper than ``MAX_EXTENDS`` leave the service unknown).  Read with PyYAML
(``yamlfile``); a value left templated (``${N}`` without a default) is
unknown."""

from __future__ import annotations

import posixpath
from functools import lru_cache
from typing import Any, Callable

from . import dockerfile
from .cmdline import UNKNOWN, resolve, split
from .process import Process
from .yamlfile import documents, line_of

MAX_EXTENDS = 8  # services in one ``extends`` chain


@lru_cache(maxsize=16)  # a file several services extend is parsed once
def services(text: str) -> dict[str, Any] | None:
    """The ``services:`` mapping, or None when the file does not load (a
    template among them)."""
    docs = documents(text) if "{{" not in text else None
    if not docs or not isinstance(docs[0], dict):
        return None
    found = docs[0].get("services")
    return found if isinstance(found, dict) else None


def replicas(service: dict[str, Any]) -> int | None:
    deploy = service.get("deploy")
    value = deploy.get("replicas") if isinstance(deploy, dict) and "replicas" in deploy else service.get("scale", 1)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and resolve(value).isdigit():
        return int(resolve(value))
    return None


def environment(service: dict[str, Any]) -> dict[str, str]:
    """The service's environment as written (``${X:-d}`` resolved, else UNKNOWN)."""
    env = service.get("environment")
    out: dict[str, str] = {}
    if isinstance(env, dict):
        for key, value in env.items():
            out[str(key)] = resolve(str(value)) if value is not None else UNKNOWN
    elif isinstance(env, list):
        for item in env:
            if isinstance(item, str) and "=" in item:
                key, _, value = item.partition("=")
                out[key.strip()] = resolve(value)
    return out


def _env_mapping(env: Any) -> dict[str, Any] | None:
    if isinstance(env, dict):
        return {str(k): v for k, v in env.items()}
    if isinstance(env, list) and all(isinstance(i, str) for i in env):
        return {i.partition("=")[0].strip(): i.partition("=")[2] if "=" in i else None for i in env}
    return None


def extended(name: str, found: dict[str, Any], seen: frozenset = frozenset(), path: str = "",
             load: Callable[[str], str | None] | None = None) -> dict[str, Any] | None:
    """The service ``name`` of the file ``path`` (its services ``found``)
    with what it ``extends:`` merged in; None when that cannot be read (a
    file not in the tree or not given ``load``, a missing service, a cycle,
    a chain too deep)."""
    service = found.get(name)
    if not isinstance(service, dict) or (path, name) in seen or len(seen) >= MAX_EXTENDS:
        return None
    ext = service.get("extends")
    if ext is None:
        return service
    base_name = ext if isinstance(ext, str) else ext.get("service") if isinstance(ext, dict) else None
    if not isinstance(base_name, str):
        return None
    base_path, base_found = path, found
    other = ext.get("file") if isinstance(ext, dict) else None
    if other is not None:
        base_path = posixpath.normpath(posixpath.join(posixpath.dirname(path), str(other)))
        text = load(base_path) if load is not None and not base_path.startswith("..") and "$" not in str(other) else None
        base_found = services(text) if text is not None else None
        if base_found is None:
            return None
    base = extended(base_name, base_found, seen | {(path, name)}, base_path, load)
    if base is None:
        return None
    merged = {**base, **{k: v for k, v in service.items() if k != "extends"}}
    for key in ("deploy",):
        if isinstance(base.get(key), dict) and isinstance(service.get(key), dict):
            merged[key] = {**base[key], **service[key]}
    if "environment" in base and "environment" in service:
        low, high = _env_mapping(base["environment"]), _env_mapping(service["environment"])
        merged["environment"] = {**low, **high} if low is not None and high is not None else None
    merged.pop("extends", None)
    return merged


def _words(value: Any) -> list[str] | str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return [str(v) for v in value]
    return None


def _built(build: Any, path: str) -> str | None:
    """The Dockerfile a service builds (``build: .`` or ``{context,
    dockerfile}``, relative to the compose file), as a path of the tree."""
    if isinstance(build, str):
        context, name = build, "Dockerfile"
    elif isinstance(build, dict) and isinstance(build.get("context", "."), str):
        context, name = build.get("context", "."), build.get("dockerfile", "Dockerfile")
    else:
        return None
    if not isinstance(name, str):
        return None
    target = posixpath.normpath(posixpath.join(posixpath.dirname(path), context, name))
    return None if target.startswith("..") else target


def _image_entrypoint(built: str | None, load: Callable[[str], str | None]) -> list[str] | None:
    """The exec-form ``ENTRYPOINT`` of the Dockerfile a service builds,
    which its ``command:`` runs under; None when it has none or the
    Dockerfile is not a file of the tree."""
    text = load(built) if built is not None else None
    return dockerfile.entrypoint(text) if text else None


def _stage_command(build: Any, built: str | None, load: Callable[[str], str | None]) -> list[str] | str | None:
    """What a service with neither ``command`` nor ``entrypoint`` runs when
    it builds a ``target`` stage of a Dockerfile of the tree that is not its
    last stage (the last one is read as the Dockerfile's own process)."""
    target = build.get("target") if isinstance(build, dict) else None
    text = load(built) if isinstance(target, str) and built is not None else None
    if not text or dockerfile.is_final_stage(text, target):
        return None
    return dockerfile.command(text, target)


def read(path: str, text: str, follow, load: Callable[[str], str | None] | None = None) -> list[Process]:
    """The processes of the compose file ``path``; ``load(path)`` gives the
    text of another file of the tree a service ``extends``."""
    found = services(text)
    out: list[Process] = []
    for name in found or {}:
        service = extended(name, found, path=path, load=load)
        if service is None:
            continue
        entrypoint, command = _words(service.get("entrypoint")), _words(service.get("command"))
        built = _built(service.get("build"), path)
        if entrypoint is None and command is not None and load is not None:
            image = _image_entrypoint(built, load)
            words = split(command) if isinstance(command, str) else command
            if image is not None and words is not None:
                entrypoint, command = image, words
        key = "command" if command is not None else "entrypoint"
        if isinstance(entrypoint, list) and isinstance(command, list):
            words: list[str] | str | None = entrypoint + command
        else:
            words = command if command is not None else entrypoint
        if words is None and load is not None:
            words, key = _stage_command(service.get("build"), built, load), "build"
        if words is None:
            continue
        line = line_of(service, key, line_of(found, name))
        for cmd, via, conditional in follow(words, path, built):
            out.append(Process(path, line, "compose", str(name), cmd, replicas(service), via, conditional))
    return out
