"""Fact collectors for the configuration rules (CL1xx): Celery apps and
everything that configures them, read during the single traversal.

Facts (plain data, see ``celerylint.domain.celeryconf.model`` for their use):

- ``celery_app`` (at the ``Celery(...)`` call) and ``app_stmt`` (its
  statement): ``app`` key ``module:variable``; ``send_only`` for an app a
  function makes only to send, inspect or monitor (see ``domain.apps.send_only``),
  ``app_runs_no_tasks`` for a module-level app its module uses only so;
- ``setting`` (at the name) and ``setting_value`` (at the value), joined by
  ``id``: ``source`` is ``app:<key>`` (constructor, ``app.conf.update``,
  ``app.conf.X = ...``, ``app.conf["X"] = ...``) or ``module:<name>``
  (module-level assignments of settings-like files); ``setting_item`` for
  ``X["key"] = v`` and literal keys of ``*transport_options`` dicts;
- ``config_source`` (``config_from_object``/``config_source=``; target,
  namespace), ``app_open`` (configuration we cannot read), ``update_call``
  and ``conf_stmt`` (where a new keyword or ``app.conf.X`` line goes);
- ``star_import`` and ``module_info`` (``settings_chain.py``), ``django_settings_module``;
  the calls that make apps and load their configuration are read in ``config_apps.py``;
- ``config_set`` (``CONFIG SET maxmemory-policy`` in code).
"""

from __future__ import annotations

import re

import libcst as cst

from ..domain.apps import send_only
from ..domain.tasks import APP_FACTORIES
from ..domain.celeryconf.needles import APP_MADE
from ..domain.celeryconf.paths import SETTINGS_PATH, TEST_PATHS_EXCLUDED
from ..domain.celeryconf.values import encode, setting_value
from ..domain.celeryconf.values_env import remember_function
from ..domain.celeryconf.values_origin import traced_value
from ..api.context import FileContext, dotted_name, mutable_container
from ..api.rule import Checker, Regex
from .config_apps import AppCalls
from .config_changes import conf_changed, derived_names
from .config_redis import RedisConfigSet, string as _string
from .config_shapes import CONFIG_CLASS, DEPLOYMENT_DEFAULT, AppShapes
from .settings_chain import if_else_branches, module_info, record_star_import, unpacked

# Upper-case module-level names worth recording in any file; lower-case and
# other names only in files that look like settings modules.
_UPPER_SETTING = re.compile(r"^(?:CELERY|BROKER|CACHES$)")
# New-style setting names, recorded in any file: a module an app loads with
# ``config_from_object`` is a configuration module whatever its name.
_NEW_SETTING = re.compile(r"^(?:broker|result|task|worker|beat|imports$|include$|accept_content$|timezone$|enable_utc$)")

_OPENING_METHODS = frozenset({"config_from_envvar", "add_defaults"})


def _settings_like(ctx: FileContext) -> bool:
    if SETTINGS_PATH.search(ctx.path):
        return True
    return bool(ctx.module_name) and ctx.module_name in ctx.settings.settings_modules


# An upper-case Celery or cache setting, or a new-style lower-case one being
# assigned, at the start of a line.
# The lookahead of first letters lets the regex engine reject most line
# starts (indentation, comments, keywords) with one test instead of one per name.
_UPPER_SETTINGS = (b"CELERY", b"BROKER_", b"CACHES")
_LOWER_SETTINGS = (b"broker", b"result", b"task", b"worker", b"beat", b"imports", b"include", b"accept_content",
                   b"timezone", b"enable_utc")
_SETTING_AT_LINE_START = (
    rb"(?=[" + bytes(sorted({n[0] for n in _UPPER_SETTINGS + _LOWER_SETTINGS})) + rb"])"
    rb"(?:" + b"|".join(_UPPER_SETTINGS) + rb"|(?:" + b"|".join(_LOWER_SETTINGS) + rb")\w*[ \t]*[:=\[])"
)


class ConfigCollector(AppCalls, AppShapes, RedisConfigSet, Checker):
    PATHS = TEST_PATHS_EXCLUDED  # the configuration model leaves tests' facts out
    # Literal-first patterns: the prefilter runs on every file of the tree.
    # Settings are looked for at the start of a line (indented ones only
    # inside ``if``/``try`` blocks of a file that also has one at column 0, or
    # upper-case ones written ``CELERY_X = v``).
    REQUIRES = (
        APP_MADE, Regex(rb"\.conf\s*[.\[]"),
        b"config_from_", b"DJANGO_SETTINGS_MODULE", b"maxmemory",
        Regex(rb"\n" + _SETTING_AT_LINE_START), Regex(rb"\A" + _SETTING_AT_LINE_START),
        Regex(rb"\r" + _SETTING_AT_LINE_START),  # files with CR-only line endings
        # indented, in an if/else of a settings file (``CELERY_X = v``; a keyword
        # argument ``CELERY_X=v`` of override_settings does not count)
        Regex(rb"\n[ \t]+CELERY_\w+[ \t]+=[ \t]"),
        CONFIG_CLASS, DEPLOYMENT_DEFAULT, b"setup_loader",
        # a module assembled from settings modules (``from config.settings.celery import *``)
        # wherever it lives: its star imports make it a settings module
        Regex(rb"from[ \t]+(?=[\w.]*settings)[\w.]+[ \t]+import[ \t]+\*"),
    )

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.module = ctx.module_name or ctx.path
        self.settings_like = _settings_like(ctx)
        self.counter = 0
        self.depth = 0  # compound statements around the current one at module level
        self.guarded = 0  # try blocks around the current statement
        self.recorded_module = False
        self.factory_apps: set[str] = set()  # keys of apps made by project factories (see _made_by_project_factory)
        self.app_names: set[str] = set()  # names bound to a new app: those ``note_app_passed`` looks up
        # module-level settings, and their ``X["key"] = v`` items, by name (see ``_unknown_if_mutated``)
        self.module_settings: dict[str, list[dict]] = {}
        self.module_items: dict[str, int] = {}
        self.conf_settings: list[tuple[dict, str, bool]] = []  # app settings (fact, name, container), see config_changes
        self.containers: set[str] = set()  # module-level settings bound to a dict, list or set display
        self.module_apps: list[tuple[str, str]] = []  # (key, variable) of the apps made at module level
        # the functions each name is bound to a new app in (see ``leave_Module``)
        self.local_apps: dict[str, set[int]] = {}
        self.made_apps: list[str] = []  # keys of every app made in the module
        # the first ``X.conf.update(...)``/``X.config_from_object(...)`` whose ``X`` is no app celerylint
        # can name (``self.celery``, a parameter): it may be one made here, under another name
        self.unnamed_conf: str | None = None
        self.alternatives: dict[int, list[int]] = {}  # id(name node) -> [if id, branch, branches] (if_else_branches)
        self._shapes_init()

    # -- structure ----------------------------------------------------------
    def _enter(self, node) -> None:
        self.depth += 1

    def _leave(self, node) -> None:
        self.depth -= 1

    visit_For = visit_While = _enter
    leave_For = leave_While = _leave

    def visit_If(self, node: cst.If) -> None:
        if self.depth == 0 and self.ctx.at_module_level:
            self.alternatives.update(if_else_branches(node, self._id()))
        self._enter_guard(node)

    def _enter_guard(self, node) -> None:
        """``try:``, ``with suppress(ImportError):`` and ``if os.path.isfile(...):``
        make imports optional."""
        self.depth += 1
        self.guarded += 1

    def _leave_guard(self, node) -> None:
        self.depth -= 1
        self.guarded -= 1

    visit_Try = visit_With = _enter_guard
    leave_If = leave_Try = leave_With = _leave_guard

    def leave_Module(self, original_node: cst.Module) -> None:
        self._unknown_if_mutated()
        for var, functions in self.local_apps.items():
            if len(functions) > 1:  # one key for several apps (two factories' ``celery_app``): no setting is theirs
                self.ctx.fact("app_open", None, app=f"{self.module}:{var}",
                              why=f"several functions of this module make an app named `{var}`")
        for key, var in self.module_apps:  # the model also asks the project's tasks (``Model._apps``)
            if send_only(original_node, var):
                self.ctx.fact("app_runs_no_tasks", None, app=key)
        if self.unnamed_conf is not None:  # zeus: ``self.celery.__dict__.update(vars(app))``, then its conf updated
            for key in dict.fromkeys(self.made_apps):
                self.ctx.fact("app_open", None, app=key, why=f"`{self.unnamed_conf}` in its module configures an app "
                                                              "celerylint cannot name, which may be this one")
        if self.recorded_module or self.settings_like:
            module_info(self.ctx, self.module, self.settings_like, names=self.settings_like)

    def _unknown_if_mutated(self) -> None:
        """A module-level setting whose container the module changes other than
        by the ``X["key"] = v`` items recorded at module level (``X.update()``,
        ``X |= ...``, an item set in a function or nested, ``X += ...``, a
        change through another name: ``config_changes.py``), and an app
        setting changed in place, have a value celerylint does not know:
        unknown, never the first literal."""
        text = self.ctx.text
        for name, facts in self.module_settings.items():
            derived = derived_names(text, name) if name in self.containers else ()
            if self.ctx.mutation_sites(name) > self.module_items.get(name, 0) \
                    or any(self.ctx.mutation_sites(d) for d in derived):
                for fact in facts:
                    fact["value"] = None
        for fact, name, container in self.conf_settings:
            if conf_changed(text, name, container):
                fact["value"] = None

    # -- helpers ------------------------------------------------------------
    def _id(self) -> int:
        self.counter += 1
        return self.counter

    def _setting(self, source: str, name: str, name_node: cst.CSTNode, value_node: cst.BaseExpression | None,
                 via: str, cond: bool = False) -> None:
        sid = self._id()
        value = encode(traced_value(value_node, self.ctx)) if value_node is not None else None
        alt = self.alternatives.get(id(name_node)) if cond else None
        self.ctx.fact("setting", name_node, id=sid, source=source, name=name, value=value, via=via, cond=cond,
                      **({"alt": alt} if alt else {}))
        if source.startswith("app:"):
            container = value_node is not None and mutable_container(value_node)
            self.conf_settings.append((self.ctx.facts[-1][0], name, container))
        if value_node is not None:
            self.ctx.fact("setting_value", value_node, id=sid)
            # the keys of a dict setting rules look into one by one: transport
            # options (CL104), beat schedule entries (CL112)
            if isinstance(value_node, cst.Dict) and name.lower().endswith(("transport_options", "beat_schedule")):
                for element in value_node.elements:
                    if isinstance(element, cst.DictElement):
                        key = _string(element.key, self.ctx)
                        if key:
                            self.ctx.fact("setting_item", element.value, id=sid, source=source, name=name, key=key,
                                          value=encode(setting_value(element.value, self.ctx)), literal=True)

    # -- apps and their configuration ----------------------------------------
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        for small in node.body:
            if isinstance(small, cst.Assign):
                self._statement_assign(node, small)
            elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                func = small.value.func
                if isinstance(func, cst.Attribute) and func.attr.value == "update":
                    key = self._conf_receiver(func.value)
                    if key:
                        self.ctx.fact("conf_stmt", node, app=key)

    def _statement_assign(self, stmt: cst.SimpleStatementLine, node: cst.Assign) -> None:
        value = node.value
        if self.subscript_app(stmt, node) or self.subclass_instance(stmt, node):
            return
        if isinstance(value, cst.Call) and self.ctx.imported_name(value.func) in APP_FACTORIES:
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    key = f"{self.module}:{target.target.value}"
                    self.app_names.add(target.target.value)
                    self.ctx.fact("app_stmt", stmt, app=key)
                    self.made_apps.append(key)
                    function = self.ctx.function if not self.ctx.at_module_level else None
                    if self.ctx.functions:
                        self.local_apps.setdefault(target.target.value, set()).add(id(self.ctx.functions[0]))
                    self._app(key, value, function is not None and send_only(function, target.target.value))
                    if self.ctx.at_module_level and not any(a.keyword and a.keyword.value == "include" for a in value.args):
                        self.module_apps.append((key, target.target.value))
                    return
        for target in node.targets:
            t = target.target
            if isinstance(t, cst.Attribute):
                key = self._conf_receiver(t.value)
                if key:
                    self._setting(f"app:{key}", t.attr.value, t.attr, value, "conf_attr", cond=self._shaped_cond(key))
                    self.ctx.fact("conf_stmt", stmt, app=key)
                elif t.attr.value == "Task" and (key := self.app_key(t.value)):
                    self.task_class_assign(key, value)
            elif isinstance(t, cst.Subscript) and len(t.slice) == 1 and isinstance(t.slice[0].slice, cst.Index):
                index = _string(t.slice[0].slice.value, self.ctx)
                base = t.value
                key = self._conf_receiver(base)
                if key and index:
                    self._setting(f"app:{key}", index, t.slice[0].slice.value, value, "conf_item", cond=self._shaped_cond(key))
                    self.ctx.fact("conf_stmt", stmt, app=key)
                elif index and isinstance(base, cst.Attribute):
                    key = self._conf_receiver(base.value)
                    if key:
                        self.ctx.fact("setting_item", value, source=f"app:{key}", name=base.attr.value, key=index,
                                      value=encode(setting_value(value, self.ctx)), literal=False)
                        self.ctx.fact("conf_stmt", stmt, app=key)
                elif index and isinstance(base, cst.Name) and self.ctx.at_module_level and self._setting_name(base.value):
                    self.ctx.fact("setting_item", value, source=f"module:{self.module}", name=base.value, key=index,
                                  value=self._item_value(base.value, value), literal=False, cond=self.depth > 0)
                    self.module_items[base.value] = self.module_items.get(base.value, 0) + 1
                elif index and isinstance(base, cst.Subscript) and self.ctx.at_module_level:
                    self._nested_item(base, index, value)
            elif isinstance(t, cst.Name) and self.ctx.at_module_level:
                self._module_setting(t, value)
                self.empty_defaults(value)
            elif isinstance(t, (cst.Tuple, cst.List)) and self.ctx.at_module_level:
                for name, item in unpacked(t, value):  # ``A, B = "x", "y"``
                    self._module_setting(name, item)
            elif isinstance(t, cst.Name):
                self.class_setting(t, value)

    def _nested_item(self, base: cst.Subscript, index: str, value: cst.BaseExpression) -> None:
        """``CACHES["default"]["OPTIONS"]["X"] = v`` at module level: the item
        ``default`` of the setting with that one path in it changed (the
        model folds it in, ``nested``), not a setting changed beyond reading."""
        keys = [index]
        while isinstance(base, cst.Subscript):
            if len(base.slice) != 1 or not isinstance(base.slice[0].slice, cst.Index):
                return
            key = _string(base.slice[0].slice.value, self.ctx)
            if not key:
                return
            keys.insert(0, key)
            base = base.value
        if isinstance(base, cst.Name) and self._setting_name(base.value):
            self.ctx.fact("setting_item", value, source=f"module:{self.module}", name=base.value, key=keys[0],
                          nested=keys[1:], value=self._item_value(base.value, value), literal=False,
                          cond=self.depth > 0)
            self.module_items[base.value] = self.module_items.get(base.value, 0) + 1

    def _item_value(self, name: str, value: cst.BaseExpression):
        """An item's encoded value; a cache's with the origins of what it
        reads at run time (CL105 compares a cache's ``LOCATION`` with the broker)."""
        return encode(traced_value(value, self.ctx) if name == "CACHES" else setting_value(value, self.ctx))

    def _setting_name(self, name: str) -> bool:
        return bool(_UPPER_SETTING.match(name) or _NEW_SETTING.match(name)
                    or (self.settings_like and not name.startswith("_")))

    def _module_setting(self, target: cst.Name, value: cst.BaseExpression) -> None:
        name = target.value
        if not self._setting_name(name):
            return
        self.recorded_module = True
        self._setting(f"module:{self.module}", name, target, value, "assign", cond=self.depth > 0)
        if mutable_container(value):
            self.containers.add(name)
        self.module_settings.setdefault(name, []).append(next(f for f, _ in reversed(self.ctx.facts) if f["kind"] == "setting"))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if len(self.ctx.scopes) == 2:  # at module level: ``def redis_url(): return "redis://..."``
            remember_function(node, self.ctx)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and isinstance(node.target, cst.Name) and self.ctx.at_module_level:
            self._module_setting(node.target, node.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if self.ctx.at_module_level and self.ctx.module_name and self.ctx.imported_name(func) == "djcelery.setup_loader":
            self._djcelery(node)
            return
        if node.args and isinstance(func, (cst.Name, cst.Attribute)):
            self.note_app_passed(node)
        if not isinstance(func, cst.Attribute):
            self._django_settings_module(node)
            return
        method = func.attr.value
        if method == "__init__" and self._remakes_app(node):
            return
        if method == "config_from_object":
            key = self.app_key(func.value) or self._made_by_project_factory(func.value)
            self.confirm(key)
            if key is None:
                self._unnamed(func.value, method)
            if key and node.args and not node.args[0].star and node.args[0].keyword is None:
                namespace = next((a for a in node.args if a.keyword and a.keyword.value == "namespace"), None)
                inline = self.readable_dict(node.args[0].value)
                if inline is not None:
                    self.dict_source(key, node, inline, namespace)
                else:
                    self._config_source(key, node, node.args[0].value, namespace)
        elif method in _OPENING_METHODS:
            key = self.app_key(func.value) or self._conf_receiver(func.value)
            if key:
                self.ctx.fact("app_open", node, app=key, why=f"`{method}(...)`")
        elif method == "update":
            key = self._conf_receiver(func.value)
            if key:
                self._update(key, node)
            elif isinstance(func.value, cst.Attribute) and func.value.attr.value == "conf":
                self._unnamed(func.value, method)
        elif method == "setdefault":
            self._django_settings_module(node)
        elif method in ("config_set", "execute_command"):
            self._config_set(node, method)

    def _unnamed(self, receiver: cst.BaseExpression, method: str) -> None:
        if self.unnamed_conf is None:
            name = dotted_name(receiver)
            self.unnamed_conf = f"{name}.{method}(...)" if name else f"{method}(...)"

    def _remakes_app(self, call: cst.Call) -> bool:
        """``super().__init__(...)`` in a method of a Celery subclass other
        than ``__init__`` (a Flask-style ``init_app``): the app is made again
        when it runs, with those arguments; what was set on it before is lost."""
        func = call.func
        owner = func.value if isinstance(func, cst.Attribute) else None
        if not (isinstance(owner, cst.Call) and isinstance(owner.func, cst.Name) and owner.func.value == "super"):
            return False
        method = self.ctx.function
        key = self.self_app(cst.Name("self"))
        if key is None or method is None or method.name.value == "__init__":
            return False
        self.ctx.fact("app_remade", call, app=key, method=method.name.value)
        self._constructor_arguments(key, call)
        return True

    # -- module structure -----------------------------------------------------
    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        # Settings-like files: SettingsChainCollector records their star imports.
        if not self.settings_like and record_star_import(self.ctx, node, self.module, self.guarded > 0, self):
            self.recorded_module = True
