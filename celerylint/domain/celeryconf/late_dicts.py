"""A configuration dict of a module no collector read, taken from its text
when an app unpacks it: ``from proj.settings import CONF`` then
``Celery("proj", **CONF)`` or ``app.conf.update(**CONF)``, where
``proj/settings.py`` holds nothing the prefilter looks for (no ``CELERY_``
name, no Celery import).

Read with CPython's ``ast``, as exactly as the collectors read a dict: the
module binds the name once, at module level, unconditionally, to a dict
display whose keys are string literals, and never changes it (no other
binding, item set or mutating call of that name anywhere in the text).
Each value is a literal (``ast.literal_eval``) or unknown.
"""

from __future__ import annotations

import ast
from typing import Any

from ...api.context import mutation_counts
from ...api.syntax import SyntaxFile
from .values import encode
from .values_origin import assignment_pattern, other_binding_pattern

def module_dict(text: str, path: str, name: str) -> tuple[dict[str, Any], tuple[int, int, int, int]] | None:
    """``({key: encoded value}, position of the name)``, or None when the
    module does not bind ``name`` to such a dict."""
    if len(assignment_pattern(name).findall(text)) != 1 or other_binding_pattern(name).search(text):
        return None
    if mutation_counts(text)[name]:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    bound = [s for s in tree.body if isinstance(s, ast.Assign) and len(s.targets) == 1
             and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name]
    if len(bound) != 1 or not isinstance(bound[0].value, ast.Dict):
        return None
    items: dict[str, Any] = {}
    for key, value in zip(bound[0].value.keys, bound[0].value.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return None  # ``**OTHER`` or a computed key: any key may be set
        try:
            literal = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            items[key.value] = None
            continue
        items[key.value] = {"const": None} if literal is None else encode(list(literal) if isinstance(literal, tuple) else literal)
    p = SyntaxFile(path, text, None, None).position(bound[0].targets[0])
    return items, (p["line"], p["col"], p["end_line"], p["end_col"])
