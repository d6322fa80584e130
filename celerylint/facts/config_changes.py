"""Settings whose container the file changes in ways the value model does
not fold in, found in the file's text: their value is unknown, never the
first literal (``precision.md``, values changed after they are bound).

- An app's setting changed in place: ``app.conf.broker_transport_options =
  {}`` then ``app.conf.broker_transport_options.update(...)`` (also
  ``.setdefault()``, ``|=``, ``app.conf["name"]...``), or handed to another
  name (``opts = app.conf.broker_transport_options``) that may change it.
- A module-level setting handed to another name that the file changes
  (``opts = broker_transport_options`` then ``opts["k"] = v``), or iterated
  with a loop variable the file changes (``for entry in
  CELERY_BEAT_SCHEDULE.values(): entry.setdefault(...)``).

Counted by name in the whole text, as ``FileContext.mutated`` counts: a
change of another object of the same name makes the value unknown too (a
missed finding, never a false one).
"""

from __future__ import annotations

import re

_CHANGE = (r"[ \t]*(?:\.[ \t]*(?:update|setdefault|pop|popitem|clear|append|extend|insert|remove|discard|add)[ \t]*\("
           r"|(?:\*\*|//|>>|<<|[-+*/%&|^@])=)")


def conf_changed(text: str, name: str, container: bool) -> bool:
    """Whether the file changes the app setting ``name`` in place, or, for a
    container, hands it to another name."""
    if f".{name}" not in text and f"{name}'" not in text and f'{name}"' not in text:
        return False  # the name is written only where it is set
    ref = rf"\.conf(?:\.{re.escape(name)}\b|\[[ \t]*['\"]{re.escape(name)}['\"][ \t]*\])"
    if re.search(ref + _CHANGE, text):
        return True
    return container and re.search(rf"=[ \t]*[\w.]*{ref}[ \t]*(?:#.*)?$", text, re.M) is not None


def derived_names(text: str, name: str) -> set[str]:
    """Names the module binds to ``name``'s object or to its items: ``A =
    NAME``, ``for A in NAME``, ``for A in NAME.values()``, ``for K, A in
    NAME.items()``.  Only the lines that mention the name are looked at."""
    found: set[str] = set()
    if text.count(name) < 2:
        return found  # only where it is bound
    iterated = (name, f"{name}.values()", f"{name}.items()")
    at = text.find(name)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        line = text[start:end].partition("#")[0].strip()
        left, sep, right = line.partition("=")
        if sep and right.strip() == name and left.strip().isidentifier() and not right.startswith("="):
            found.add(left.strip())
        elif line.startswith("for ") and ":" in line and " in " in line:
            targets, _, iterable = line[4:].partition(":")[0].rpartition(" in ")
            if iterable.replace(" ", "") in iterated:
                found.update(re.findall(r"\w+", targets))
        at = text.find(name, end)
    return found
