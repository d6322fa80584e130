"""Helm charts of the tree: a directory with ``Chart.yaml``, ``values.yaml``
and ``templates/``.  Its templates are rendered with the chart's default
values (``helm_render``) and read as Kubernetes manifests.

What a release really runs also depends on the values it is installed with,
which the tree does not hold; so, precision first:

- a value that another values file of the chart (``values-prod.yaml``,
  ``values-lite.yaml``, ...) sets differently, or sets where
  ``values.yaml`` does not, is unknown;
- ``replicas`` is known only when the rendered workload states it from a
  line no unread condition guards; a workload without ``replicas`` (left
  to an autoscaler), and every workload of a chart that renders a
  ``HorizontalPodAutoscaler`` or a KEDA ``ScaledObject``, has unknown
  replicas;
- a workload or a command under a condition that is not read is shown as
  one branch (``conditional``), which CL121 does not count.

Only the charts that concern Celery are read: those whose ``values.yaml``
or one of whose templates is a launch file the run keeps (it mentions
Celery), and at most ``MAX_TEMPLATES`` templates each.
"""

from __future__ import annotations

import posixpath
import re
from typing import Callable

from . import kubernetes
from .helm_render import Rendered, Values, render
from .process import Process
from .yamlfile import documents

MAX_TEMPLATES = 200
_PART = re.compile(r"^(?:(.*)/)?(?:values\.ya?ml|templates/(?:[^/]+/)*[^/]+\.ya?ml)$")
_VALUES = re.compile(r"^values[\w.-]*\.ya?ml$")
# a template at any depth of ``templates/`` (Helm renders them all), not a
# partial (``_x.yaml``) nor a ``helm test`` hook (``tests/``)
_TEMPLATE = re.compile(r"^(?!tests/)(?:[^/]+/)*[^_/][^/]*\.ya?ml$")
_SCALERS = frozenset({"HorizontalPodAutoscaler", "ScaledObject"})


def charts(paths, load: Callable[[str], str | None]) -> list[str]:
    """The chart directories (``""`` for the root) that ``paths`` belong to."""
    out = set()
    for path in paths:
        found = _PART.match(path)
        if found is not None:
            chart = found.group(1) or ""
            if load(posixpath.join(chart, "Chart.yaml")) is not None:
                out.add(chart)
    return sorted(out)


def _mapping(text: str | None) -> dict | None:
    docs = documents(text) if text is not None else None
    return docs[0] if docs and isinstance(docs[0], dict) else None


def read(chart: str, names: list[str], load: Callable[[str], str | None], follow) -> tuple[list[Process], list[str]]:
    """``(processes, templates read)`` of the chart in ``chart`` whose
    files are ``names`` (relative to it)."""
    main = _mapping(load(posixpath.join(chart, "values.yaml")) or load(posixpath.join(chart, "values.yml")))
    if main is None:
        return [], []
    others = [m for m in (_mapping(load(posixpath.join(chart, n))) for n in names
                          if "/" not in n and _VALUES.match(n) and n not in ("values.yaml", "values.yml"))
              if m is not None]
    values = Values(main, others)
    templates = sorted(n for n in names if n.startswith("templates/") and _TEMPLATE.match(n[10:]))[:MAX_TEMPLATES]
    rendered: list[tuple[str, Rendered, list]] = []
    scaled = False
    for name in templates:
        path = posixpath.join(chart, name)
        text = load(path)
        if text is None:
            continue
        out = render(text, values)
        loaded = documents(out.text)
        if loaded is None:  # not YAML once rendered: left to the unread templates
            continue
        docs = [d for d in loaded if isinstance(d, dict)]
        scaled = scaled or any(d.get("kind") in _SCALERS for d in docs)
        rendered.append((path, out, docs))
    processes: list[Process] = []
    for path, out, docs in rendered:
        for doc in docs:
            processes.extend(_workload(path, out, doc, scaled, follow))
    return processes, [path for path, _, _ in rendered]


def _workload(path: str, out: Rendered, doc: dict, scaled: bool, follow) -> list[Process]:
    if "celery" not in str(doc):
        return []
    spec = doc.get("spec")
    lines = getattr(spec, "lines", {})
    if isinstance(spec, dict) and doc.get("kind") != "Pod" and (
            scaled or "replicas" not in spec or lines.get("replicas") in out.uncertain):
        spec["replicas"] = "?"  # not an int: kubernetes reads it as unknown
    guarded = getattr(doc, "lines", {}).get("kind") in out.uncertain
    found = kubernetes.read_docs(path, [doc], follow)
    stem = posixpath.splitext(posixpath.basename(path))[0]
    for p in found:
        p.conditional = p.conditional or guarded or p.line in out.uncertain
        p.line = out.lines[p.line - 1] if 0 < p.line <= len(out.lines) else p.line
        p.kind = "helm"
        if "$" in p.name:
            p.name = f"{stem}/{p.name.rpartition('/')[2]}"
    return found
