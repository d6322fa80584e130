"""Settings profiles: the settings modules a Django project chooses from at
deploy time (``config/settings/production.py`` doing ``from .base import *``,
readthedocs' ``DockerBaseSettings.load_settings(__name__)``, a
django-configurations ``class Prod(Configuration)``).

The profiles of an app are the *leaves* of its settings chain: the modules
beside the one ``DJANGO_SETTINGS_MODULE`` names (in Python, compose files,
Dockerfiles, Procfiles, ``.env`` files) that build on another module of that
directory (a star import, a django-split-settings ``include``, a settings
class exported by a loader) and that no other one builds on, plus every
module ``DJANGO_SETTINGS_MODULE`` names there.  The configuration rules check
the profiles that are *checked*: the ``settings-profiles`` option when it is
set, else every profile whose name is not a test, CI, development, local
or documentation one (``test``, ``ci``, ``dev``, ``local``, ``sample``,
``docs``...) and that is not made
for the tests otherwise (``test_profiles``); when none is left, the one
``os.environ.setdefault`` chooses, as without profiles."""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .copied_settings import copied_profiles
from .paths import CONFIGURATION as _CONFIGURATION, DSM as _DSM
from .paths import LAUNCH_FILE_MAX_BYTES as _MAX_BYTES
from .paths import SETTINGS_PATH
from .tree_files import PROFILE_FILES as _LAUNCH, TreeFiles, shared_tree_files

_NOT_DEPLOYED = re.compile(
    r"^(?:.*[_-])?(?:tests?|testing|unittests?|pytest|tox|ci|dev|devel|develop|development|devstack|local|locals|debug"
    r"|sample|example|examples|e2e|selenium|travis|github|jenkins|circle|circleci|gitlab|docs?|documentation|sphinx"
    r"|continuous[_-]integration)(?:[_-].*)?$",
    re.IGNORECASE,
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")  # ``ContinuousIntegration``: words as ``_`` would part them


@dataclass
class Profile:
    name: str  # dotted module, or module:Class for a django-configurations class
    module: str
    path: str
    cls: str | None = None
    why: str = ""  # why it is a profile
    named_by: list[str] = field(default_factory=list)  # files that set DJANGO_SETTINGS_MODULE to it
    extends: tuple[str, ...] = ()  # a django-configurations class: the names of the classes it derives from

    def as_dict(self, checked: bool) -> dict:
        out = {"name": self.name, "module": self.module, "path": self.path, "checked": checked, "why": self.why}
        if self.cls:
            out["class"] = self.cls
        if self.named_by:
            out["named_by"] = list(self.named_by)
        return out


def deployed_name(name: str) -> bool:
    """A profile name that is not a test, CI, development or local one."""
    last = name.replace(":", ".").rsplit(".", 2)
    return not any(_NOT_DEPLOYED.match(_CAMEL.sub("_", part)) for part in last[-2:]
                   if part not in ("settings", "config", "conf"))


def wanted(profile: Profile, configured: tuple[str, ...], tests: frozenset[str] = frozenset()) -> bool:
    """Whether the rules check ``profile``: those ``settings-profiles``
    names, else one whose name is not a test, CI or development one, nor
    (unless a file names it) a class derived from such a class (the
    ``ContinuousIntegration(Test)`` of django-configurations)."""
    if configured:
        last = profile.name.replace(":", ".").rsplit(".", 1)[-1]
        return profile.name in configured or last in configured or profile.module in configured
    if not profile.named_by and not all(deployed_name(b) for b in profile.extends):
        return False
    return deployed_name(profile.name) and profile.path not in tests


# Files that name a settings module only for the tests: pytest-django's
# ``DJANGO_SETTINGS_MODULE`` (pytest.ini, tox.ini, setup.cfg, pyproject.toml)
# and CI workflows.
_TEST_CONFIG = re.compile(
    r"(?:^|/)(?:pytest\.ini|tox\.ini|setup\.cfg|pyproject\.toml|\.travis\.ya?ml|\.gitlab-ci\.ya?ml|"
    r"azure-pipelines\.ya?ml|bitbucket-pipelines\.ya?ml|noxfile\.py|\.github/workflows/[^/]+|\.github/actions/.+|"
    r"\.circleci/[^/]+)$"
)
_EAGER = frozenset({"task_always_eager", "CELERY_TASK_ALWAYS_EAGER", "CELERY_ALWAYS_EAGER"})
_TEST_DATABASE = re.compile(r"sqlite|:memory:|\btest", re.IGNORECASE)


def test_profiles(m) -> frozenset[str]:
    """The paths of settings modules made for the tests whatever their name:
    named as ``DJANGO_SETTINGS_MODULE`` only by pytest's or CI's
    configuration, or setting ``task_always_eager = True`` beside a test
    database (SQLite, ``:memory:``, a name with ``test``).  Not checked
    profiles unless ``settings-profiles`` names them; CL113 never reports
    them."""
    cached = getattr(m, "_test_profiles", None)
    if cached is not None:
        return cached
    out: set[str] = set()
    for module, where in named_settings_modules(m).items():
        if where and all(_TEST_CONFIG.search(w) for w in where):
            path = m.path_of(module)
            if path is not None:
                out.add(path)
    for path, assigned in m.by_path_assignments.items():
        eager = any(a.name in _EAGER and a.value == {"const": True} and not a.cond for a in assigned)
        if eager and any(a.name == "DATABASES" and _TEST_DATABASE.search(repr(a.value)) for a in assigned):
            out.add(path)
    m._test_profiles = frozenset(out)
    return m._test_profiles


_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "manage.py", ".git")


def named_outside_python(root: Path, python_files: Iterable[str] = ()) -> dict[str, list[str]]:
    """DJANGO_SETTINGS_MODULE values in compose files, Dockerfiles, Procfiles,
    ``.env`` files, shell scripts, tox/ini files of the linted tree: under
    the root (compose files and .env sit beside the package, also when only
    ``src/`` is linted), but not in a directory that holds no linted file
    and is a project of its own (a ``pyproject.toml``, ``manage.py``, ...:
    the other projects of a monorepo, or of a directory of checkouts)."""
    from ...core.walk import DEFAULT_EXCLUDE
    from ...core.walk import walk
    from ...core.source import read_capped

    holding = {""}  # directories (relative) that hold a linted file
    for path in python_files:
        while path:
            path = posixpath.dirname(path)
            if path in holding:
                break
            holding.add(path)

    def foreign(directory: str, name: str) -> bool:
        rel = posixpath.relpath(posixpath.join(Path(directory).as_posix(), name), root.as_posix())
        return rel not in holding and any(os.path.lexists(os.path.join(directory, name, m)) for m in _PROJECT_MARKERS)

    out: dict[str, list[str]] = {}
    top = root
    for directory, dirnames, filenames in walk(str(top)):
        dirnames[:] = [d for d in dirnames if d not in DEFAULT_EXCLUDE and not d.endswith(".egg-info")
                       and not foreign(directory, d)]
        in_env_dir = "/.env" in "/" + posixpath.relpath(Path(directory).as_posix(), top.as_posix())  # .envs/.production/.django
        for name in filenames:
            if not (_LAUNCH.match(name) or in_env_dir):
                continue
            path = Path(directory) / name
            try:
                data = read_capped(path, _MAX_BYTES)
            except OSError:
                continue
            _note_named(data, posixpath.relpath(path.as_posix(), root.as_posix()), out)
    return out


def _named_in(shared: TreeFiles, root: Path) -> dict[str, list[str]]:
    """``named_outside_python`` over the walk the launch-file scan shares."""
    out: dict[str, list[str]] = {}
    for f in shared.files:
        if f.foreign or not (_LAUNCH.match(f.name) or "/.env" in "/" + f.directory):
            continue
        data = shared.read(f.path)
        if data is not None:
            _note_named(data, posixpath.relpath(f.path.as_posix(), root.as_posix()), out)
    return out


def _note_named(data: bytes, rel: str, out: dict[str, list[str]]) -> None:
    """The DJANGO_SETTINGS_MODULE values a launch file outside tests names
    (``proj.settings.production``), and its DJANGO_CONFIGURATION classes
    (as ``:Prod``: a module always has a dot, a class never a colon)."""
    if rel.startswith(("tests/", "test/")) or "/tests/" in rel:
        return
    if b"DJANGO_SETTINGS_MODULE" in data:
        for match in _DSM.finditer(data):
            value = match.group(1).decode("ascii", "replace").rstrip(".")
            if "." in value:
                out.setdefault(value, []).append(rel)
    if b"DJANGO_CONFIGURATION" in data:
        for match in _CONFIGURATION.finditer(data):
            out.setdefault(":" + match.group(1).decode("ascii", "replace"), []).append(rel)


_CONFIGURATIONS = ("configurations.Configuration", "configurations.base.Configuration", "object")


def join_alternatives(assignments: dict) -> None:
    """Give each assignment made in a branch of a complete ``if``/``else``
    the last assignment of its name in every branch (``Assignment.alternatives``)."""
    groups: dict[tuple, dict[int, object]] = {}
    for source, assigned in assignments.items():
        for a in assigned:
            if a.alt:
                groups.setdefault((source, a.path, a.alt[0], a.name), {})[a.alt[1]] = a
    for (_, _, _, _), by_branch in groups.items():
        first = next(iter(by_branch.values()))
        if len(by_branch) == first.alt[2]:
            chosen = [by_branch[i] for i in range(first.alt[2])]
            for a in chosen:
                a.alternatives = chosen


def class_settings(m, qname: str, files: list[str], problems: list[str], depth: int = 0) -> list:
    """The settings of class ``qname`` (``module.Class``), its bases' first
    (the first base last: it wins), as Python's attribute lookup finds them."""
    cls = m.classes.get(qname)
    if cls is None or depth > 20:
        problems.append(f"the settings class `{qname}` is not in the linted files")
        return []
    out: list = []
    for base in reversed(cls["bases"]):
        local = f"{cls['module']}.{base}"
        if base in m.classes or local in m.classes:
            out.extend(class_settings(m, base if base in m.classes else local, files, problems, depth + 1))
        elif base in _CONFIGURATIONS:
            continue
        elif "." in base and m.path_of(base.rpartition(".")[0]) is not None:
            continue  # a class of the project without settings (readthedocs' ``Settings`` loader)
        else:
            problems.append(f"the base class `{base}` of `{cls['name']}` is not in the linted files")
    if cls["path"] not in files:
        files.append(cls["path"])
    out.extend(m.assignments.get(f"class:{qname}", ()))
    return out


def included(m, path: str, fact: dict, problems: list[str]) -> list[str]:
    """The files a django-split-settings ``include(...)`` of ``path`` runs,
    in order (globs sorted, as the library does)."""
    import fnmatch

    out: list[str] = []
    here = posixpath.dirname(path)
    files = m.python_file_set()
    for entry in fact["files"]:
        pattern = entry["pattern"]
        if pattern is None:
            if not entry["optional"]:
                problems.append(f"`include(...)` in {path} names a file celerylint cannot read")
            continue
        target = posixpath.normpath(posixpath.join(here, pattern))
        if any(c in target for c in "*?["):
            found = sorted(p for p in files if fnmatch.fnmatch(p, target))
        else:
            found = [target] if target in files else []
        if not found and not entry["optional"]:
            problems.append(f"`include({pattern!r})` in {path} is not in the linted files")
        out.extend(found)
    return out


# (the module starts right after the blanks, so no run of blanks splits two ways)
_STAR_TEXT = re.compile(r"^from[ \t]+(?=[\w.])(\.*)((?:\w[\w.]*)?)[ \t]+import[ \t]+\*", re.MULTILINE)


def _text_links(m, path: str) -> set[str]:
    """Star imports of a settings file that does not parse (a template such
    as cookiecutter-django's), read from its text: the profile is still one,
    with unknown settings."""
    from .texts import read

    text = read(m, path) or ""
    out = set()
    for dots, module in _STAR_TEXT.findall(text):
        if dots:
            base = posixpath.dirname(path)
            for _ in range(len(dots) - 1):
                base = posixpath.dirname(base)
            target = posixpath.join(base, *module.split(".")) + ".py" if module else None
        else:
            target = m.path_of(module)
        if target:
            out.add(target)
    return out


def _builders(m, family: list[str], others: list[str]) -> list[str]:
    """``family`` with the files of ``others`` that build on it, directly or
    through one another (``production.py``: ``from .base import *``)."""
    family, others = list(family), list(others)
    grown = True
    while grown and others:
        grown = False
        for path in list(others):
            if _links(m, path) & set(family):
                family.append(path)
                others.remove(path)
                grown = True
    return sorted(family)


def _links(m, path: str) -> set[str]:
    """The files the settings module ``path`` builds on (read from its text
    when no collector recorded anything of it, as for a file that does not parse)."""
    if path in m.unparsable or (path not in m.read_paths and not SETTINGS_PATH.search(path)):
        return _text_links(m, path)
    out: set[str] = set()
    for item in m.by_path_stars.get(path, ()):
        if item["kind"] == "star_import":
            target = m.path_of(item["target"])
            if target:
                out.add(target)
        elif item["kind"] == "settings_include":
            out.update(included(m, path, item, []))
        elif item["kind"] == "settings_export":
            files: list[str] = []
            class_settings(m, item["qualified"] or f"{item['module']}.{item['cls']}", files, [])
            out.update(files)
    out.discard(path)
    return out


def find_profiles(m, app) -> list[Profile]:
    """The profiles of a Django app whose settings module is ``app.source``."""
    from .settings import is_test_path

    default, dpath = app.source.module, app.source.path
    here = posixpath.dirname(dpath)
    package = default if dpath.endswith("/__init__.py") or dpath == "__init__.py" else default.rpartition(".")[0]
    # settings-like files only: ``views.py`` doing ``from .models import *`` is no profile
    siblings = [p for p in m.project.python_files if posixpath.dirname(p) == here and not is_test_path(p)]
    family = sorted(p for p in siblings if p == dpath or SETTINGS_PATH.search(p))
    if not SETTINGS_PATH.search(dpath):  # ``config/django/base.py``: its folder holds the profiles, named or not
        family = _builders(m, family, [p for p in siblings if p not in family])
    links = {path: _links(m, path) & set(family) for path in family}
    copied = [Profile(module, module, source, why=why, named_by=[dockerfile])
              for module, source, why, dockerfile in copied_profiles(m, here, package)]
    if not any(links[p] for p in family if p != dpath):  # nothing builds on another: one module
        classes = _configuration_classes(m, default)
        return ([Profile(f"{default}:{cls}", default, dpath, cls, why="django-configurations class",
                         named_by=_naming(m, cls), extends=_ancestors(m, m.class_key(default, cls))) for cls in classes]
                or [Profile(default, default, dpath, why="DJANGO_SETTINGS_MODULE")]) + copied
    modules: dict[str, str] = {}
    for path in family:
        stem = posixpath.basename(path)[:-3]
        if stem == "__init__":
            modules[path] = package
        elif "." not in stem:
            modules[path] = f"{package}.{stem}" if package else stem
    named = named_settings_modules(m)
    built_on = set().union(*links.values())
    exports = {p for p in family if any(i["kind"] == "settings_export" for i in m.by_path_stars.get(p, ()))}
    profiles: list[Profile] = []
    for path in family:
        module = modules.get(path)
        if module is None:
            continue
        why = ""
        if module in named:
            why = "DJANGO_SETTINGS_MODULE"
        elif (links[path] or path in exports) and path not in built_on:
            why = "builds on " + ", ".join(sorted(links[path])) if links[path] else "exports its settings class"
        if not why:
            continue
        classes = _configuration_classes(m, module)
        if classes:
            for cls in classes:
                profiles.append(Profile(f"{module}:{cls}", module, path, cls, why="django-configurations class",
                                        named_by=sorted(set(named.get(module, ())) | set(_naming(m, cls))),
                                        extends=_ancestors(m, m.class_key(module, cls))))
            continue
        profiles.append(Profile(module, module, path, why=why, named_by=sorted(set(named.get(module, ())))))
    return (profiles or [Profile(default, default, dpath, why="DJANGO_SETTINGS_MODULE")]) + copied


def named_settings_modules(m, variable: str = "django_settings_module") -> dict[str, list[str]]:
    """DJANGO_SETTINGS_MODULE values (or, for ``"django_configuration"``,
    DJANGO_CONFIGURATION classes) -> the files that set them (Python and
    launch files)."""
    named: dict[str, list[str]] = {}
    for f in m.by_kind[variable]:
        named.setdefault(f["value"], []).append(f["path"])
    outside = getattr(m, "_dsm_outside", None)
    if outside is None:
        shared = shared_tree_files(m)
        outside = m._dsm_outside = (named_outside_python(m.root, m.project.python_files) if shared is None
                                    else _named_in(shared, m.root))
    classes = variable == "django_configuration"
    for value, where in outside.items():
        if value.startswith(":") == classes:
            named.setdefault(value[1:] if classes else value, []).extend(where)
    return named


def _naming(m, cls: str) -> list[str]:
    """The files whose DJANGO_CONFIGURATION names the class ``cls``."""
    return sorted(set(named_settings_modules(m, "django_configuration").get(cls, ())))


def missing_profiles(m, app) -> list[dict]:
    """Settings modules of the app's package that a file names as
    DJANGO_SETTINGS_MODULE but that are not in the linted files (taiga's
    Dockerfile names ``settings.config``, which its image copies from
    elsewhere): shown by ``--show-apps``, their settings unknown; the
    rules check the profiles found."""
    if app.source is None or not app.source.django:
        return []
    path = app.source.path
    package = app.source.module if path.endswith("__init__.py") else app.source.module.rpartition(".")[0]
    from .settings import is_test_path

    out = []
    for value, where in sorted(named_settings_modules(m).items()):
        if value.rpartition(".")[0] != package or m.path_of(value) is not None:
            continue
        tail = value.replace(".", "/") + ".py"
        test = next((p for p in m.project.python_files if (p == tail or p.endswith("/" + tail)) and is_test_path(p)), None)
        why = f"a test settings module ({test}), not read" if test else "not in the linted files"
        out.append({"name": value, "named_by": sorted(set(where)), "why": why})
    return out


def _configuration_classes(m, module: str) -> list[str]:
    """django-configurations classes of ``module`` that no class of it
    extends, and those a DJANGO_CONFIGURATION names (the ``Prod`` of
    ``ENV DJANGO_CONFIGURATION=Prod`` that a ``Build`` extends)."""
    def is_configuration(qname: str, depth: int = 0) -> bool:
        cls = m.classes.get(qname)
        if cls is None or depth > 20:
            return False
        return cls["configuration"] or any(is_configuration(b if b in m.classes else f"{cls['module']}.{b}", depth + 1)
                                           for b in cls["bases"])

    path = m.path_of(module)
    mine = [f for q, f in m.classes.items() if f["path"] == path and is_configuration(q)]
    bases = {b.rpartition(".")[2] for f in mine for b in f["bases"]}
    named = named_settings_modules(m, "django_configuration")
    return [f["name"] for f in mine if f["name"] not in bases or f["name"] in named]


def _ancestors(m, qname: str) -> tuple[str, ...]:
    """The names of the classes of the project ``qname`` derives from."""
    out: list[str] = []
    todo, seen = [qname], {qname}
    while todo and len(seen) < 100:
        cls = m.classes.get(todo.pop())
        for base in cls["bases"] if cls else ():
            key = base if base in m.classes else f"{cls['module']}.{base}"
            if key in m.classes and key not in seen:
                seen.add(key)
                todo.append(key)
                out.append(m.classes[key]["name"])
    return tuple(out)


def with_profiles(m, apps: dict) -> dict:
    """Each Django app once per profile the rules check (``App.profile``)."""
    import copy

    configured = tuple(m.project.settings.option("settings-profiles"))
    out: dict = {}
    for key, app in apps.items():
        if app.source is None or not app.source.django:
            out[key] = app
            continue
        profiles = find_profiles(m, app)
        checked = [p for p in profiles if wanted(p, configured, test_profiles(m))]
        if not checked:
            checked = [p for p in profiles if p.module == app.source.module][:1]
        app.profiles = [p.as_dict(p in checked) for p in profiles]
        if not checked or (len(profiles) == 1 and checked[0].module == app.source.module and checked[0].cls is None):
            out[key] = app
            continue
        for p in checked:
            clone = copy.copy(app)
            clone.source = m.source(p.module, True, app.source.namespace, p.cls)
            clone.profile = p.name if len(profiles) > 1 or p.cls else None
            if clone.source is None:
                clone.source_problem = f"`{p.module}` is not in the linted files"
            out[key if len(checked) == 1 else f"{key}#{p.name}"] = clone
    return out
