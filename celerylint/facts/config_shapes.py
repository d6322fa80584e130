"""Apps and configuration sources not written as a module-level
``app = Celery(...)`` with ``config_from_object("module")``: a mixin of
``ConfigCollector`` (facts/config.py).

- a ``Celery`` subclass: ``app_class`` fact; ``self.conf[...]``,
  ``self.conf.X``, ``self.conf.update(...)`` and ``self.config_from_object``
  in its methods configure every app made from it (``app:class:<cls>``);
  ``app = MyCelery("proj")`` is a ``celery_app`` fact with ``cls`` that the
  model keeps only when ``cls`` is a recorded ``app_class``;
- an app stored into a subscript (``config.registry["celery.app"] =
  Celery(...)``, Pyramid's ``includeme``): key ``module:["celery.app"]``,
  and later ``<anything>["celery.app"].conf...`` in that file is that app;
- ``<app>.Task = TaskClass``: the app's task class, as ``task_cls=``;
- ``config_from_object({...})``, ``config_from_object(d)`` and
  ``app.conf.update(d)`` with ``d`` a dict literal bound in the module
  (and not changed later in it): its keys are settings;
- ``config_from_object(Config)`` / ``"proj.conf:Config"``: a class whose
  attributes are settings (``config_class`` fact with its bases, settings
  under ``cfgclass:<module>.<Class>``);
- ``app.conf.update(config.CELERY_CONFIG)``, the deployment's extra settings
  read through a configuration object of the project: ``app_open`` with
  ``default_of``; ``config_default`` records ``"CELERY_...": {}`` entries of
  module-level dicts (the object's defaults).  An empty default adds
  nothing, as an environment variable is judged by its default.
"""

from __future__ import annotations

import re

import libcst as cst

from ..domain.tasks import APP_FACTORIES
from ..domain.celeryconf.values import encode, setting_value
from ..domain.tasks import class_options
from .tasks import TASK_OPTIONS
from ..api.rule import All, Regex

# Class attributes of a configuration class (the file must also pass the
# collector's prefilter: see ``CONFIG_CLASS`` in facts/config.py).
_CLASS_SETTING = re.compile(r"^(?:broker|result|task|worker|beat|imports$|include$|accept_content$|timezone$|enable_utc$"
                            r"|CELERY|BROKER)")
_EMPTY = cst.Module([])
# ``DEFAULTS = {..., "CELERY_CONFIG": {}, ...}``: see ``empty_defaults``.
DEPLOYMENT_DEFAULT = All((b"CELERY_", Regex(rb"""['"]CELERY_\w*['"][ \t]*:[ \t]*\{[ \t]*\}""")))
# A configuration class (``config_from_object(Config)``) in a file with no
# other configuration: a class with an indented assignment of a common setting.
# One expression per name: each is tried only where its name occurs; the
# names that share a word are searched only where the word is ("ask" is
# searched for every file anyway).
def _indented(*names: bytes) -> tuple:
    return tuple(Regex(rb"\n[ \t]+" + name + rb"[ \t]*[:=]") for name in names)


CONFIG_CLASS = All((b"class", (
    *_indented(b"broker_url", b"worker_prefetch_multiplier", b"accept_content"),
    All((b"ask", _indented(b"task_acks_late", b"task_serializer"))),
    All((b"result_", _indented(b"result_backend", b"result_serializer"))),
)))


def _index(node: cst.Subscript, ctx) -> str | None:
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        value = setting_value(node.slice[0].slice.value, ctx)
        return value if isinstance(value, str) and ":" not in value else None
    return None


class AppShapes:
    """Mixed into ConfigCollector: uses its ``ctx``, ``module``, ``_app``,
    ``_setting`` and ``_update``."""

    def _shapes_init(self) -> None:
        self.app_classes: list[str | None] = []  # per enclosing class: its name when it subclasses Celery
        self.subscript_apps: set[str] = set()  # and the names bound to subclass instances
        self.candidates: set[str] = set()  # those not yet known to be apps

    # -- Celery subclasses and configuration classes ---------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        cls = f"{self.module}.{node.name.value}"
        is_app = any(self.ctx.imported_name(b.value) in APP_FACTORIES for b in node.bases)
        # a subclass of a project class named like Celery: an app class if that one is (the model decides)
        derived = [name for b in node.bases if not is_app and (name := self._class_name(b.value)) and name.endswith("Celery")]
        if self.app_classes and self.app_classes[-1] and self.ctx.function is not None and any(
                isinstance(b.value, cst.Attribute) and b.value.attr.value == "Task"
                and isinstance(b.value.value, cst.Name) and b.value.value.value == "self" for b in node.bases):
            # ``class ProjTask(self.Task)`` in a method of a Celery subclass (then ``self.Task = ProjTask``)
            options = class_options(node)
            self.ctx.fact("task_class", node.name, cls=cls, options={
                k: encode(setting_value(options[k], self.ctx)) for k in TASK_OPTIONS if k in options})
        self.app_classes.append(cls if is_app or derived else None)
        if is_app or derived:
            self.ctx.fact("app_class", node.name, cls=cls, **({"bases": derived} if derived else {}))
        elif len(self.ctx.scopes) == 2 and any(_setting_attr(s) for s in node.body.body):
            bases = [self._class_name(b.value) or "?" for b in node.bases if b.keyword is None]
            self.ctx.fact("config_class", node.name, cls=cls, bases=bases)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.app_classes.pop()

    def _class_name(self, node: cst.BaseExpression) -> str | None:
        """The dotted name of a class: imported, or defined in this module."""
        if isinstance(node, cst.Name) and node.value not in self.ctx.imports:
            return f"{self.module}.{node.value}"
        return self.ctx.qualify(node)

    def class_setting(self, target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
        """A class attribute of a configuration class at module level."""
        scope = self.ctx.scopes[-1].node if len(self.ctx.scopes) == 2 else None
        if not isinstance(scope, cst.ClassDef) or not isinstance(target, cst.Name) or self.app_classes[-1]:
            return False
        if not _CLASS_SETTING.match(target.value):
            return False
        self._setting(f"cfgclass:{self.module}.{scope.name.value}", target.value, target, value, "class")
        return True

    def self_app(self, node: cst.BaseExpression) -> str | None:
        """``self`` in a method of a Celery subclass: every app made from it."""
        if isinstance(node, cst.Name) and node.value == "self" and self.app_classes and self.app_classes[-1]:
            if self.ctx.function is not None and self.ctx.scopes[-2].node is self.ctx.classes[-1]:
                return f"class:{self.app_classes[-1]}"
        return None

    def subclass_instance(self, stmt, node: cst.Assign) -> bool:
        """``app = MyCelery("proj")``: a candidate, kept by the model when
        ``MyCelery`` is a Celery subclass of the project."""
        call = node.value
        if not isinstance(call, cst.Call) or len(node.targets) != 1 or not self.ctx.at_module_level:
            return False
        target = node.targets[0].target
        name = self._class_name(call.func) if isinstance(call.func, (cst.Name, cst.Attribute)) else None
        if not isinstance(target, cst.Name) or not name or not name.endswith("Celery") or name in APP_FACTORIES:
            return False
        if name.startswith("celery.") and self.ctx.imported_name(call.func) is not None:
            return False  # the library's (a class of this file is the project's, in a module named ``celery``)
        key = f"{self.module}:{target.value}"
        self.subscript_apps.add(key)
        self.candidates.add(key)
        self.ctx.fact("app_stmt", stmt, app=key)
        self._app(key, call, cls=name)
        return True

    def confirm(self, key: str | None) -> None:
        """``x.config_from_object(...)`` on a candidate: only an app has that
        method, so it is one even when its class is not the project's."""
        if key in self.candidates:
            self.candidates.discard(key)
            self.ctx.fact("app_confirmed", None, app=key)

    def _shaped_cond(self, key: str) -> bool:
        """A setting of an app made in a function or a Celery subclass, set
        inside an ``if``/loop/``try`` there: it may not be set."""
        return self.depth > 0 and (key.startswith("class:") or ":[" in key)

    # -- apps stored into a subscript -------------------------------------------
    def subscript_app(self, stmt, node: cst.Assign) -> bool:
        call = node.value
        if not (isinstance(call, cst.Call) and self.ctx.imported_name(call.func) in APP_FACTORIES):
            return False
        target = node.targets[0].target
        if len(node.targets) != 1 or not isinstance(target, cst.Subscript):
            return False
        index = _index(target, self.ctx)
        if index is None:
            return False
        key = f"{self.module}:[{index}]"
        self.subscript_apps.add(key)
        self.ctx.fact("app_stmt", stmt, app=key)
        self._app(key, call, var=_EMPTY.code_for_node(target))
        return True

    def subscript_key(self, node: cst.BaseExpression) -> str | None:
        """An app stored into a subscript, or made from a Celery subclass, earlier in this file."""
        if isinstance(node, cst.Name) and node.value not in self.ctx.imports:
            key = f"{self.module}:{node.value}"
            return key if key in self.subscript_apps else None
        if isinstance(node, cst.Subscript):
            index = _index(node, self.ctx)
            key = f"{self.module}:[{index}]" if index else None
            return key if key in self.subscript_apps else None
        return None

    def task_class_assign(self, key: str, value: cst.BaseExpression) -> None:
        """``app.Task = WarehouseTask``."""
        self.ctx.fact("task_cls", value, app=key, value=self._class_name(value) if isinstance(value, (cst.Name, cst.Attribute)) else None)

    # -- the deployment's settings, through a configuration object --------------
    def deployment_default(self, arg: cst.Arg) -> dict:
        """``config.CELERY_CONFIG`` given to ``conf.update``: which default to look for."""
        value = arg.value
        if arg.keyword is None and not arg.star and isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name):
            target = self.ctx.imports.get(value.value.value, "")
            name = value.attr.value
            if target and not target.startswith(("celery.", "django.")) and name.isupper() and name.startswith("CELERY"):
                return {"default_of": {"module": target.rpartition(".")[0], "name": name}}
        return {}

    def empty_defaults(self, value: cst.BaseExpression) -> None:
        """``"CELERY_CONFIG": {}`` in a module-level dict."""
        if not isinstance(value, cst.Dict):
            return
        for element in value.elements:
            if isinstance(element, cst.DictElement) and isinstance(element.value, cst.Dict) and not element.value.elements:
                key = setting_value(element.key, self.ctx)
                if isinstance(key, str) and key.startswith("CELERY"):
                    self.ctx.fact("config_default", element.key, module=self.module, name=key)

    # -- dicts and classes as configuration sources ------------------------------
    def readable_dict(self, node: cst.BaseExpression) -> cst.Dict | None:
        """A dict literal, or a name bound to one in this module (with the
        changes ``FileContext.lookup`` folds in; any other change makes it
        unknown)."""
        if isinstance(node, cst.Dict):
            return node
        if not isinstance(node, cst.Name) or node.value in self.ctx.imports:
            return None
        bound = self.ctx.lookup(node.value)
        return bound if isinstance(bound, cst.Dict) else None

    def dict_source(self, key: str, call: cst.Call, d: cst.Dict, namespace) -> None:
        """``config_from_object({...})``: the dict's keys, under source ``dict:<path>:<line>``."""
        source = f"dict:{self.ctx.path}:{self.counter + 1}"
        self.counter += 1
        self.ctx.fact("config_source", call, app=key, target=None, inline=source,
                      namespace=(namespace and (setting_value(namespace.value, self.ctx) or "?")) or None)
        for element in d.elements:
            name = setting_value(element.key, self.ctx) if isinstance(element, cst.DictElement) else None
            if not isinstance(name, str):
                self.ctx.fact("inline_open", call, source=source, why="keys celerylint cannot read")
                continue
            self._setting(source, name, element.key, element.value, "update_dict")

    def class_target(self, node: cst.BaseExpression) -> str | None:
        """``config_from_object(Config)``: ``module:Class`` for a class of
        this module, the dotted name for an imported one."""
        if isinstance(node, cst.Name) and node.value not in self.ctx.imports and self.ctx.lookup(node.value) is None:
            return f"{self.module}:{node.value}"
        return None


def _setting_attr(statement) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        target = small.targets[0].target if isinstance(small, cst.Assign) else getattr(small, "target", None)
        if isinstance(target, cst.Name) and _CLASS_SETTING.match(target.value):
            return True
    return False
