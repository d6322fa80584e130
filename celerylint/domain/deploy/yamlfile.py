"""YAML read with PyYAML's safe loader, when it is installed (the ``yaml``
extra): mappings carry the line of each key.  Without PyYAML, YAML files
are unknown."""

from __future__ import annotations

from functools import cache
from typing import Any

MAX_BYTES = 1 << 20  # as for every launch file


@cache
def _yaml():
    """PyYAML, imported by the first file that needs it, not with this module
    (the deployment rules load with every run; most trees have no YAML to
    read); None when it cannot be imported."""
    try:
        import yaml
    except ImportError:
        return None
    return yaml


def available() -> bool:
    return _yaml() is not None


def tried() -> bool:
    """Whether a file asked for PyYAML (``available`` then costs nothing)."""
    return _yaml.cache_info().currsize > 0


class Mapping(dict):
    """A YAML mapping; ``lines[key]`` is the line its key is on (1-based)."""

    line = 0
    lines: dict[Any, int]


@cache
def _loader() -> type:
    yaml = _yaml()

    class _Loader(yaml.SafeLoader):
        pass

    def _mapping(loader, node):
        loader.flatten_mapping(node)
        out = Mapping()
        out.line = node.start_mark.line + 1
        out.lines = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            try:
                out[key] = loader.construct_object(value_node, deep=True)
            except TypeError:
                continue
            out.lines[key] = key_node.start_mark.line + 1
        return out

    _Loader.add_constructor("tag:yaml.org,2002:map", _mapping)
    return _Loader


def documents(text: str) -> list[Any] | None:
    """Every document of a YAML stream; None when it does not load (a Helm
    template, invalid YAML, PyYAML missing, too large)."""
    yaml = _yaml()
    if yaml is None or len(text) > MAX_BYTES:
        return None

    try:
        return list(yaml.load_all(text, Loader=_loader()))  # noqa: S506 - a SafeLoader subclass
    except (yaml.YAMLError, RecursionError, ValueError, TypeError):
        return None


def line_of(mapping: Any, key: str, default: int = 1) -> int:
    if isinstance(mapping, Mapping):
        return mapping.lines.get(key, mapping.line or default)
    return default
