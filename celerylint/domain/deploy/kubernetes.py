"""Kubernetes manifests: the containers of each Deployment, StatefulSet,
DaemonSet, Pod and ReplicaSet, their ``command`` and ``args``, and
``spec.replicas`` (1 when absent; a DaemonSet runs one per node, unknown;
a HorizontalPodAutoscaler or a templated value makes it unknown).  A Helm
template does not load as YAML: unknown."""

from __future__ import annotations

from typing import Any

from .process import Process
from .yamlfile import documents, line_of

_WORKLOADS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "Pod", "ReplicaSet"})


def _replicas(kind: str, spec: dict[str, Any]) -> int | None:
    if kind == "DaemonSet":
        return None
    if kind == "Pod":
        return 1
    value = spec.get("replicas", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _strings(value: Any) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return [str(v) for v in value]
    return None


def read(path: str, text: str, follow) -> list[Process]:
    return read_docs(path, documents(text) or [], follow)


def read_docs(path: str, docs: list, follow) -> list[Process]:
    """The processes of the manifests ``docs`` (loaded YAML documents)."""
    out: list[Process] = []
    scaled = set()
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == "HorizontalPodAutoscaler":
            target = (doc.get("spec") or {}).get("scaleTargetRef") or {}
            if isinstance(target, dict):
                scaled.add(target.get("name"))
    for doc in docs:
        if not isinstance(doc, dict) or doc.get("kind") not in _WORKLOADS:
            continue
        kind = doc["kind"]
        spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
        pod = spec if kind == "Pod" else (spec.get("template") or {}).get("spec") if isinstance(spec.get("template"), dict) else None
        if not isinstance(pod, dict) or not isinstance(pod.get("containers"), list):
            continue
        metadata = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        name = str(metadata.get("name", kind))
        replicas = None if name in scaled else _replicas(kind, spec)
        for container in pod["containers"]:
            if not isinstance(container, dict):
                continue
            command, args = _strings(container.get("command")), _strings(container.get("args"))
            if command is None or args is None or not (command or args):
                continue
            line = line_of(container, "command" if command else "args", line_of(container, "name"))
            for cmd, via, conditional in follow(command + args, path):
                out.append(Process(path, line, "kubernetes", f"{name}/{container.get('name', '')}", cmd, replicas,
                                   via, conditional))
    return out
