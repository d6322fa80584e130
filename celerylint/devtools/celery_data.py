"""Celery's setting names per release, read from the releases themselves.

``python -m celerylint.devtools celery-data`` downloads the wheel of every
covered Celery release from the package index (its JSON simple API, else
``pip download --no-deps``),
reads each one's ``celery/app/defaults.py`` with ``ast`` (never importing
it) and writes ``celerylint/domain/celeryconf/settings_data.py``: every
new name and old upper-case name with the releases that have it, and each
setting's default with the releases where it changed.
``domain/celeryconf/settings_table.py`` reads that module at run time.

The reader follows ``defaults.py`` as CPython on Linux runs it: the
``NAMESPACES`` tree of ``Namespace(...)``/``Option(...)`` calls, the
module-level constants it names (the branches for Jython and PyPy are not
read), and ``flatten``/``_to_compat``'s naming, which has not changed
since Celery 4.0.  A default it cannot read as a literal (a literal, a
constant, ``timedelta(...)``, ``float("inf")``, ``"...".strip()``) stops
the generator with the expression: the data is exact or not written.
"""

from __future__ import annotations

import ast
import datetime
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from pprint import pformat
from typing import Any

# The oldest release covered: Celery 4.0 introduced the lower-case names and
# the table of old names; every stable release from it on is read.
FIRST = (4, 0, 0)
TARGET = Path(__file__).resolve().parent.parent / "domain" / "celeryconf" / "settings_data.py"


class Unreadable(Exception):
    pass


@dataclass
class Release:
    """One release's table, as ``celery.app.defaults`` builds it."""

    defaults: dict[str, Any]  # new name -> default (SETTING_KEYS, DEFAULTS)
    to_new: dict[str, str]  # old upper-case name -> new name (_TO_NEW_KEY)
    to_old: dict[str, str]  # new name -> old name (_TO_OLD_KEY)


def _value(node: ast.expr, consts: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_value(e, consts) for e in node.elts]
        return {ast.Tuple: tuple, ast.List: list, ast.Set: set}[type(node)](items)
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_value(k, consts): _value(v, consts) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = _value(node.operand, consts)
        if isinstance(operand, (int, float)) and not isinstance(operand, bool):
            return -operand
    if isinstance(node, ast.Call) and not any(isinstance(a, ast.Starred) for a in node.args):
        func, args = node.func, [_value(a, consts) for a in node.args]
        kwargs = {k.arg: _value(k.value, consts) for k in node.keywords if k.arg}
        if len(kwargs) == len(node.keywords):
            if isinstance(func, ast.Name) and func.id == "timedelta":
                return datetime.timedelta(*args, **kwargs)
            if isinstance(func, ast.Name) and func.id == "float" and args in (["inf"], ["-inf"]) and not kwargs:
                return float(args[0])
            if isinstance(func, ast.Name) and func.id == "set" and not args and not kwargs:
                return set()
            if isinstance(func, ast.Attribute) and func.attr == "strip" and not args and not kwargs:
                target = _value(func.value, consts)
                if isinstance(target, str):
                    return target.strip()
    raise Unreadable(ast.unparse(node))


@dataclass
class _Option:
    default: Any
    old: set[str]


def _namespace(call: ast.expr, consts: dict[str, Any]) -> dict[str, Any]:
    """``Namespace(__old__=..., **options)``: options in order, ``__old__``
    given to those without their own ``old``."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "Namespace"):
        raise Unreadable(ast.unparse(call))
    old, options = None, {}
    for keyword in call.keywords:
        if keyword.arg == "__old__":
            old = _value(keyword.value, consts)
        elif keyword.arg is None:
            raise Unreadable(ast.unparse(call))
        elif isinstance(keyword.value, ast.Call) and getattr(keyword.value.func, "id", None) == "Namespace":
            options[keyword.arg] = _namespace(keyword.value, consts)
        else:
            options[keyword.arg] = _option(keyword.value, consts)
    if old is not None:
        for key, option in options.items():
            if isinstance(option, _Option) and not option.old:
                option.old = {o.format(key) for o in old}
    return options


def _option(call: ast.expr, consts: dict[str, Any]) -> _Option:
    """``Option(default=None, *args, **kwargs)``: its default and ``old``."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "Option"):
        raise Unreadable(ast.unparse(call))
    given = {k.arg: k.value for k in call.keywords}
    default = call.args[0] if call.args else given.get("default")
    old = given.get("old")
    return _Option(None if default is None else _value(default, consts),
                   set() if old is None else set(_value(old, consts)))


def read_defaults(source: str) -> Release:
    """The table of one ``celery/app/defaults.py``, read without running it."""
    consts: dict[str, Any] = {}
    namespaces = None
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        if name == "NAMESPACES":
            namespaces = node.value
            continue
        try:
            consts[name] = _value(node.value, consts)
        except Unreadable:
            consts.pop(name, None)
    if namespaces is None:
        raise Unreadable("no NAMESPACES")
    _expand_old_ns(namespaces)
    tree = _namespace(namespaces, consts)
    release = Release({}, {}, {})
    stack = [("", tree)]  # flatten(): breadth first, in declaration order
    while stack:
        ns, options = stack.pop(0)
        for key, option in options.items():
            if isinstance(option, dict):
                stack.append((ns + key + "_", option))
                continue
            release.defaults[ns + key] = option.default
            olds = sorted(o.format(key).upper() for o in option.old) if option.old else [(ns + key).upper()]
            for old in olds:  # _to_compat()
                release.to_new[old] = ns + key
                release.to_old[ns + key] = old
    return release


def _expand_old_ns(node: ast.AST) -> None:
    """``old_ns('celery_cache')`` is ``{'celery_cache_{0}'}``: written in place."""
    for call in ast.walk(node):
        for keyword in getattr(call, "keywords", []) if isinstance(call, ast.Call) else []:
            value = keyword.value
            if (isinstance(value, ast.Call) and getattr(value.func, "id", None) == "old_ns"
                    and len(value.args) == 1 and isinstance(value.args[0], ast.Constant)):
                keyword.value = ast.Set([ast.Constant(f"{value.args[0].value}_{{0}}")])


def _version(text: str) -> tuple[int, ...] | None:
    """A stable release's version (``5.3.6``); None for pre-releases and posts."""
    return tuple(int(p) for p in text.split(".")) if re.fullmatch(r"\d+(\.\d+)+", text) else None


def available_releases() -> list[str]:
    """Celery's stable releases from ``FIRST`` on, as the package index lists them."""
    files = index_files()
    if files is not None:
        found = {v: _version(v) for v in {_file_version(f["filename"]) for f in files if not f.get("yanked")} if v}
    else:
        out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "celery",
                              "--disable-pip-version-check"], capture_output=True, text=True, check=True).stdout
        listed = re.search(r"Available versions: (.*)", out)
        if not listed:
            raise SystemExit(f"pip index versions celery: no versions in {out!r}")
        found = {v: _version(v) for v in listed.group(1).split(", ")}
    return sorted((v for v, t in found.items() if t and t >= FIRST), key=lambda v: found[v])


def index_files() -> list[dict[str, Any]] | None:
    """Celery's files on the package index (``PIP_INDEX_URL``, else PyPI),
    from its JSON simple API (PEP 691): one request, and no pip process per
    release.  None when the index does not answer so: pip is used then."""
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    request = urllib.request.Request(f"{index}/celery/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.load(answer)["files"]
    except (OSError, ValueError, KeyError):
        return None


def _file_version(filename: str) -> str | None:
    """``celery-5.5.0-py3-none-any.whl`` / ``celery-5.5.0.tar.gz`` -> ``5.5.0``."""
    if filename.endswith(".whl"):
        return filename.split("-")[1]
    if filename.endswith(".tar.gz"):
        return filename[len("celery-"):-len(".tar.gz")]
    return None


def _fetch(files: list[dict[str, Any]], release: str, target: Path) -> bool:
    """The release's wheel (its sdist if it has none) into ``target``, its
    SHA-256 checked; False when the index has neither."""
    mine = [f for f in files if _file_version(f["filename"]) == release]
    mine.sort(key=lambda f: not f["filename"].endswith(".whl"))
    if not mine:
        return False
    with urllib.request.urlopen(mine[0]["url"], timeout=120) as answer:
        data = answer.read()
    if hashlib.sha256(data).hexdigest() != mine[0]["hashes"].get("sha256"):
        raise SystemExit(f"{mine[0]['filename']}: the download does not match the index's SHA-256")
    (target / mine[0]["filename"]).write_bytes(data)
    return True


def download_sources(releases: list[str], folder: Path) -> dict[str, str]:
    """``celery/app/defaults.py`` of each release, from its wheel (its sdist
    if it has none), fetched from the index's JSON simple API, or with
    ``pip download --no-deps`` when it has none."""
    sources = {}
    files = index_files() or []
    for release in releases:
        (folder / release).mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(8) as pool:  # network-bound: several at once
        fetched = dict(zip(releases, pool.map(lambda r: _fetch(files, r, folder / r), releases)))
    for release in releases:
        target = folder / release
        if not fetched[release]:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--disable-pip-version-check",
                            "--no-build-isolation", "-d", str(target), f"celery=={release}"],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        (archive,) = [p for p in target.iterdir() if p.name.startswith("celery-")]
        if archive.suffix == ".whl":
            with zipfile.ZipFile(archive) as z:
                sources[release] = z.read("celery/app/defaults.py").decode()
        else:
            import tarfile

            with tarfile.open(archive) as t:
                member = next(m for m in t.getmembers() if m.name.endswith("/celery/app/defaults.py"))
                sources[release] = t.extractfile(member).read().decode()  # type: ignore[union-attr]
    return sources


def _ranges(present: list[bool]) -> tuple[tuple[int, int], ...]:
    """Runs of releases (indexes, first and last inclusive) that have a name."""
    out, start = [], None
    for i, here in enumerate([*present, False]):
        if here and start is None:
            start = i
        elif not here and start is not None:
            out.append((start, i - 1))
            start = None
    return tuple(out)


def module_source(releases: list[str], tables: list[Release]) -> str:
    """``settings_data.py`` for ``releases`` (oldest first) and their tables."""
    new_names = sorted({n for t in tables for n in t.defaults})
    old_names = sorted({o for t in tables for o in t.to_new})
    new = {n: _ranges([n in t.defaults for t in tables]) for n in new_names}
    old = {}
    for o in old_names:
        targets = {t.to_new[o] for t in tables if o in t.to_new}
        if len(targets) != 1:
            raise Unreadable(f"{o} names more than one setting: {sorted(targets)}")
        old[o] = (targets.pop(), _ranges([o in t.to_new for t in tables]))
    defaults = {}
    for n in new_names:
        changes: list[tuple[int, Any]] = []
        for i, t in enumerate(tables):
            if n in t.defaults and (not changes or not _same(changes[-1][1], t.defaults[n])):
                changes.append((i, t.defaults[n]))
        defaults[n] = tuple(changes)
    for changes in defaults.values():
        for _, value in changes:
            if eval(repr(value), {"datetime": datetime, "inf": float("inf")}) != value:  # noqa: S307
                raise Unreadable(f"default {value!r} does not survive repr()")
    return (
        '"""Generated by `python -m celerylint.devtools celery-data` from the wheels of the\n'
        "Celery releases in ``RELEASES`` (each one's ``celery/app/defaults.py``, read with\n"
        "``ast``, never imported); do not edit.  ``settings_table`` reads it: celerylint\n"
        'never imports Celery at run time."""\n\n'
        "import datetime  # noqa: F401 - in reprs of defaults\n\n"
        'inf = float("inf")  # in reprs of defaults\n\n'
        "# every stable release read, oldest first; the indexes below point into it\n"
        f"RELEASES = {pformat(tuple(releases), compact=True)}\n\n"
        "# new name -> the runs of releases that have it: ((first, last), ...)\n"
        f"NEW = {pformat(new)}\n\n"
        "# old upper-case name -> (the new name it stands for, the runs of releases that have it)\n"
        f"OLD = {pformat(old)}\n\n"
        "# new name -> its default from each release where it changed: ((release, default), ...)\n"
        f"DEFAULTS = {pformat(defaults)}\n"
    )


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def generate(releases: list[str], folder: Path | None = None) -> str:
    with tempfile.TemporaryDirectory() as scratch:
        sources = download_sources(releases, folder or Path(scratch))
        return module_source(releases, [read_defaults(sources[r]) for r in releases])


def main(argv: list[str]) -> int:
    """``celery-data [--check] [--releases A,B,...] [--download-dir DIR]``."""
    releases = None
    folder = None
    for i, arg in enumerate(argv):
        if arg == "--releases":
            releases = argv[i + 1].split(",")
        if arg == "--download-dir":
            folder = Path(argv[i + 1])
    if releases is None:
        releases = available_releases()
    text = generate(releases, folder)
    current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
    if "--check" in argv:
        if text != current:
            print(f"stale: {TARGET.relative_to(TARGET.parents[3])}")
            return 1
        return 0
    if text != current:
        TARGET.write_text(text, encoding="utf-8")
        print(f"wrote {TARGET.relative_to(TARGET.parents[3])} ({len(releases)} releases, {releases[0]} to {releases[-1]})")
    return 0
