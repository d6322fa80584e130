"""Which calls make a fresh random or time value, and what CPython's ``ast``
can tell about them before libcst parses a file: the gate of CL201.  No
libcst here (``fresh.py`` follows values to these calls)."""

from __future__ import annotations

import ast

NOW_CALLS = frozenset({
    "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today",
    "django.utils.timezone.now", "django.utils.timezone.localtime", "arrow.utcnow", "arrow.now",
    "pendulum.now",
})
RANDOM_CALLS = frozenset(
    {"uuid.uuid1", "uuid.uuid4", "os.urandom"}
    | {f"secrets.{n}" for n in ("token_hex", "token_urlsafe", "token_bytes", "randbelow", "randbits", "choice")}
    | {f"random.{n}" for n in ("random", "randint", "randrange", "getrandbits", "choice", "choices", "sample",
                               "uniform", "randbytes")}
)
TIME_CALLS = frozenset({"time.time", "time.time_ns"} | (NOW_CALLS - {"django.utils.timezone.localtime"}))
_LAST = frozenset(name.rpartition(".")[2] for name in RANDOM_CALLS | TIME_CALLS)


def may_make_fresh_value(tree: ast.Module, text: str) -> bool:
    """A superset of the files in which CL201 can report: a call of a
    function named like one of ``RANDOM_CALLS``/``TIME_CALLS`` (its last
    name, directly, as an attribute, or through an import alias), which is
    what every key CL201 reports derives from (``fresh.fresh_origin``)."""
    aliases = {a.asname: a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               for a in node.names if a.asname}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _LAST:
                return True
            if isinstance(func, ast.Name) and (func.id in _LAST or aliases.get(func.id) in _LAST):
                return True
    return False
