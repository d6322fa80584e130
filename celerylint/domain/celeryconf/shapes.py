"""Configuration sources that are objects rather than modules (facts from
``facts/config_shapes.py``): a dict given to ``config_from_object``, and a
class whose attributes are settings (``config_from_object(Config)``,
``"proj.conf:Config"``), read with its bases as Python's MRO reads them."""

from __future__ import annotations

from typing import Any

from .settings import Assignment, Source


def object_source(model, config: dict[str, Any], target: str | None, namespace: str | None,
                  app_module: str = "") -> tuple[Source | None, str | None] | None:
    """``(source, problem)`` when the app's ``config_from_object`` names a
    dict or a configuration class of the project; None when it names
    something else (a module: the caller reads it)."""
    if namespace == "?":
        return None
    inline = config.get("inline")
    if inline:
        open_ = next((f"`config_from_object({{...}})` with {f['why']}" for f in model.by_kind["inline_open"]
                      if f["source"] == inline), None)
        where = f"{config['path']}:{config['line']}"
        return _shaped(Source(f"dict at {where}", config["path"], False, namespace, list(model.assignments.get(inline, ())),
                              open_, [config["path"]]), "dict"), None
    classes = _classes(model)
    cls = _match(classes, target.replace(":", "."))
    if cls is None:
        return module_dict_source(model, target, namespace, app_module)
    assignments: list[Assignment] = []
    files: list[str] = []
    problems: list[str] = []
    _flatten(model, classes, cls, assignments, files, problems, set())
    return _shaped(Source(cls, classes[cls]["path"], False, namespace, assignments, problems[0] if problems else None, files),
                   "class"), None


def module_dict_source(model, target: str, namespace: str | None,
                       app_module: str) -> tuple[Source | None, str | None] | None:
    """``config_from_object(settings.CELERY)`` (Django's settings, from the
    settings module the app's module names) or ``config_from_object(conf.CELERY)``
    / ``"proj.conf:CELERY"`` (a module of the project): the module-level dict
    that module binds (``module_dict_items``).  None when ``target`` names
    no attribute of such a module."""
    from .settings import DJANGO_TARGETS

    module, _, name = target.replace(":", ".").rpartition(".")
    if module in DJANGO_TARGETS:
        module = model.django_settings(app_module) or ""
    path = model.path_of(module) if module and name else None
    found = module_dict_items(model, path, name) if path is not None else None
    if found is None:
        return None  # no such name there: ``proj.celeryconfig``, a module not linted
    items, at = found
    if items is None:
        return None, f"`{name}` of `{module}` is not a dict celerylint can read"
    # at the dict, with no value position: a fix would replace the whole dict
    assignments = [Assignment(key, encoded, path, at, None, False, "update_dict") for key, encoded in items.items()]
    return _shaped(Source(f"dict `{name}` of {module}", path, False, namespace, assignments, None, [path]), "dict"), None


def module_dict_items(model, path: str, name: str) -> tuple[dict[str, Any] | None, Any] | None:
    """``(items, position)`` of the dict the module at ``path`` binds to
    ``name`` once, unconditionally, as a display with literal keys (items
    None: bound otherwise); None when the module does not bind ``name``."""
    from .late_dicts import module_dict
    from .texts import read
    from .values_origin import assignment_pattern, other_binding_pattern

    found = [a for a in model.by_path_assignments.get(path, ()) if a.name == name]
    if found:
        value = found[-1].value if len(found) == 1 and not found[0].cond and not found[0].items else None
        return (value.get("dict") if isinstance(value, dict) else None), found[0].pos
    if path in model.unparsable:
        return None, None
    text = read(model, path)  # a module the collectors passed over, or a name they do not record
    if text is None or not (assignment_pattern(name).search(text) or other_binding_pattern(name).search(text)):
        return None
    return module_dict(text, path, name) or (None, None)


def splat(model, app, f: dict[str, Any]) -> None:
    """``app.conf.update(**X)`` with ``X`` a module-level dict of another
    module of the project: its literal keys are the app's settings, at the
    point of the call; a dict that module does not bind once,
    unconditionally, to a display with literal keys leaves the app open."""
    from .settings import fact_position

    path = model.path_of(f["module"])
    items, at = (module_dict_items(model, path, f["name"]) if path is not None else None) or (None, None)
    if not isinstance(items, dict):
        app.open.append(f["why"])
        return
    call = fact_position(f)
    for name, encoded in items.items():
        # at the dict, with no value position: a fix would replace the whole dict
        a = Assignment(name, encoded, path, at, None, False, "update_dict")
        assigned = app.preconf[name]
        # later settings of the app's own file, after the call, still win
        before = [x for x in assigned if not (x.path == f["path"] and call and x.pos and x.pos[:2] > call[:2])]
        assigned.insert(len(before), a)


def _shaped(source: Source, shape: str) -> Source:
    """``source.shape``: "dict" or "class" (a module source has none); no
    fix adds a line to them (``fixes.add_setting``)."""
    source.shape = shape
    return source


def empty_default(model, default_of: dict[str, str] | None) -> str | None:
    """``app.conf.update(config.CELERY_CONFIG)`` where the project's
    defaults for that object say ``"CELERY_CONFIG": {}``: the deployment may
    add settings, and, as for an environment variable, the default is
    judged.  The note saying so, or None."""
    if not default_of:
        return None
    module, name = default_of["module"], default_of["name"]
    for f in model.by_kind["config_default"]:
        if f["name"] == name and (f["module"] == module or f["module"].endswith("." + module)
                                  or module.endswith("." + f["module"])):
            return (f"`conf.update(...{name})` is judged by its default, `{{}}` at {f['path']}:{f['line']}: "
                    "settings the deployment adds there are not seen")
    return None


def app_class_names(facts: list[dict[str, Any]]) -> set[str]:
    """The project's Celery subclasses: those of ``Celery`` itself, then,
    until nothing changes, those of a project class that is one."""
    known = {f["cls"] for f in facts if not f.get("bases")}
    pending = [f for f in facts if f.get("bases")]
    while True:
        found = {f["cls"] for f in pending if any(is_app_class(b, known) for b in f["bases"])}
        if not found - known:
            return known
        known |= found


def is_app_class(cls: str, app_classes: set[str]) -> bool:
    """``cls`` names a Celery subclass of the project (module names depend
    on the directory linted: one may end with the other)."""
    return cls in app_classes or any(c.endswith("." + cls) or cls.endswith("." + c) for c in app_classes)


def _classes(model) -> dict[str, dict[str, Any]]:
    cached = getattr(model, "_config_classes", None)
    if cached is None:
        cached = model._config_classes = {f["cls"]: f for f in model.by_kind["config_class"]}
    return cached


def _match(classes: dict[str, dict[str, Any]], name: str) -> str | None:
    """The configuration class ``name`` names: exactly, else the one whose
    dotted name ends with it or is its end (module names depend on the
    directory linted)."""
    if name in classes:
        return name
    found = [c for c in classes if c.endswith("." + name) or name.endswith("." + c)]
    return found[0] if len(found) == 1 else None


def _flatten(model, classes, cls: str, out: list[Assignment], files: list[str], problems: list[str], seen: set[str]) -> None:
    """The class's settings in effect order: its bases' (last base first, as
    the MRO makes the first base win), then its own.  Walked with a stack:
    a chain of thousands of classes is no deeper for Python than one."""
    seen.add(cls)
    stack = [(cls, reversed(classes[cls]["bases"]))]
    while stack:
        here, bases = stack[-1]
        base = next(bases, None)
        if base is None:
            stack.pop()
            if classes[here]["path"] not in files:
                files.append(classes[here]["path"])
            out.extend(model.assignments.get(f"cfgclass:{here}", ()))
        elif base not in ("object", "builtins.object"):
            found = _match(classes, base)
            if found is None:
                problems.append(f"the base class `{base}` of `{here}` is not read, so settings may come from it")
            elif found not in seen:
                seen.add(found)
                stack.append((found, reversed(classes[found]["bases"])))
