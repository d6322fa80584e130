"""The calls that make and configure Celery apps: a mixin of
``ConfigCollector`` (facts/config.py).

- ``Celery(...)``: the ``celery_app`` fact, its keyword settings (``broker=``,
  ``backend=``, ``**CONF`` with a readable dict), ``config_source=``,
  ``task_cls=``, ``namespace=`` (``app_namespace``), and ``app_open`` for
  what cannot be read (``changes=``, an unreadable ``**`` splat);
- ``config_from_object(target)``: the ``config_source`` fact (a module or
  class path, an imported module, a class of the module);
- ``app.conf.update(...)``: its settings, ``app_open`` and ``update_call``;
- ``djcelery.setup_loader()`` (django-celery), ``DJANGO_SETTINGS_MODULE`` and ``DJANGO_CONFIGURATION``
  set with ``os.environ.setdefault``;
- ``app_key``: which app a receiver (``app``, ``app.conf``, ``current_app``,
  an imported app) stands for; in a module-level function, a parameter
  stands for the apps passed to it (``def configure(app):
  app.config_from_object(...)``): the key ``?param:<module>.<function>#<i>``,
  which the model replaces with the apps of the ``app_passed`` facts
  (``domain/celeryconf/passed_apps.py``), and ``app_passed`` records
  ``configure(celery_app)``.
"""

from __future__ import annotations

import libcst as cst

from ..api.context import FileContext
from ..domain.tasks import APP_FACTORIES, APP_OBJECTS
from .config_redis import string as _string

PARAMETER = "?param:"  # an app key standing for the apps passed to a function
_CTOR_SETTINGS = {"broker": "broker_url", "backend": "result_backend", "include": "include"}
_CTOR_IGNORED = frozenset({
    "main", "loader", "amqp", "events", "log", "control", "set_as_current", "tasks", "fixups",
    "autofinalize", "strict_typing", "config_source_silent", "task_cls",
})


class AppCalls:
    ctx: FileContext
    module: str
    factory_apps: set[str]
    app_names: set[str]  # the names this file binds to a new app (facts/config.py)
    recorded_module: bool

    def app_key(self, node: cst.BaseExpression, depth: int = 0) -> str | None:
        """The app a receiver stands for: ``module:var`` or ``*`` (current_app);
        a name bound to another (``alias = app``) stands for what that one does."""
        shaped = self.self_app(node) or self.subscript_key(node)
        if shaped:
            return shaped
        if isinstance(node, cst.Name):
            if node.value in self.ctx.imports:
                target = self.ctx.imports[node.value]
                if target in APP_OBJECTS:
                    return "*"
                module, _, var = target.rpartition(".")
                return f"{module}:{var}" if module and not target.startswith(("celery.", "django.")) else None
            bound = self.ctx.lookup(node.value)
            if isinstance(bound, cst.Call) and self.ctx.imported_name(bound.func) in APP_FACTORIES:
                return f"{self.module}:{node.value}"
            if isinstance(bound, cst.Name) and bound.value != node.value and depth < 3:
                return self.app_key(bound, depth + 1)
            return self._parameter(node.value) if bound is None else None
        if self.ctx.imported_name(node) in APP_OBJECTS:
            return "*"
        return None

    def _parameter(self, name: str) -> str | None:
        """The placeholder key of ``name`` as a positional parameter of the
        module-level function it is used in (see the module's docstring)."""
        function = self.ctx.function
        module = self.ctx.module
        if function is None or module is None or not any(s is function for s in module.body):
            return None
        names = [p.name.value for p in function.params.params]
        if name not in names:
            return None
        return f"{PARAMETER}{self.module}.{function.name.value}#{names.index(name)}"

    def note_app_passed(self, call: cst.Call) -> None:
        """``configure(app)``: an app passed to a function of the project."""
        # an app's name (made in this file, or imported: maybe an app); ``app_key`` looks it up
        if not any(isinstance(a.value, cst.Name) and a.keyword is None
                   and (a.value.value in self.app_names or a.value.value in self.ctx.imports) for a in call.args):
            return
        func = call.func
        if isinstance(func, cst.Name):
            callee = self.ctx.imports.get(func.value) or (
                f"{self.module}.{func.value}" if func.value in self.ctx.module_functions else None)
        else:
            callee = self.ctx.imported_name(func)
        if not callee:
            return
        for index, arg in enumerate(call.args):
            if arg.keyword is not None or arg.star:
                break
            if isinstance(arg.value, cst.Name) and (key := self.app_key(arg.value)) and not key.startswith(PARAMETER):
                self.ctx.fact("app_passed", None, app=key, callee=callee, index=index)  # no position: none is shown

    def _made_by_project_factory(self, node: cst.BaseExpression) -> str | None:
        """``app = make_app("proj")`` at module level, then ``app.config_from_object(...)``:
        only a Celery app has that method, so the call made one (a class
        chosen at run time, a factory of the project).  Recorded as the app
        it is, once."""
        if not (isinstance(node, cst.Name) and self.ctx.at_module_level) or node.value in self.ctx.imports:
            return None
        bound = self.ctx.lookup(node.value)
        if not isinstance(bound, cst.Call):
            return None
        key = f"{self.module}:{node.value}"
        if key not in self.factory_apps:
            self.factory_apps.add(key)
            self._app(key, bound)
        return key

    def _conf_receiver(self, node: cst.BaseExpression) -> str | None:
        """``<app>.conf`` -> the app key."""
        if isinstance(node, cst.Attribute) and node.attr.value == "conf":
            return self.app_key(node.value)
        return None


    def _app(self, key: str, call: cst.Call, sends_only: bool = False, **shape: str) -> None:
        first = next((a.value for a in call.args if a.keyword is None and not a.star), None)
        first = next((a.value for a in call.args if a.keyword and a.keyword.value == "main"), first)
        main = _string(first, self.ctx) if first is not None else None
        self.ctx.fact("celery_app", call, app=key, module=self.module, **({"send_only": True} if sends_only else {}),
                      **({"main": main} if main else {}), **shape)
        self._constructor_arguments(key, call)

    def _constructor_arguments(self, key: str, call: cst.Call) -> None:
        """The settings ``Celery(...)``'s arguments give app ``key`` (also
        those of a ``super().__init__(...)`` that makes it again)."""
        source = f"app:{key}"
        for a in call.args:
            splat = self.readable_dict(a.value) if a.star == "**" else None
            if splat is not None and all(isinstance(e, cst.DictElement) and _string(e.key, self.ctx) for e in splat.elements):
                for element in splat.elements:  # ``Celery("proj", **CONF)`` with CONF a dict of this module
                    name = _string(element.key, self.ctx)
                    self._setting(source, _CTOR_SETTINGS.get(name, name), element.key, element.value, "update_dict")
                continue
            if a.star == "**" and (imported := self._imported_dict(a.value)):
                self.ctx.fact("app_splat", call, app=key, module=imported[0], name=imported[1],
                              why="keyword arguments unpacked into Celery(...)")
                continue
            if a.star:
                self.ctx.fact("app_open", call, app=key, why="keyword arguments unpacked into Celery(...)")
                continue
            if a.keyword is None:
                continue
            name = a.keyword.value
            if name == "config_source":
                self._config_source(key, call, a.value, None)
            elif name == "changes":
                self.ctx.fact("app_open", call, app=key, why="`changes=` given to Celery(...)")
            elif name == "task_cls":
                self.ctx.fact("task_cls", a.value, app=key, value=_string(a.value, self.ctx) or self.ctx.qualify(a.value))
            elif name == "namespace":
                pass
            elif name not in _CTOR_IGNORED:
                self._setting(source, _CTOR_SETTINGS.get(name, name), a.keyword, a.value, "ctor")
        namespace = next((a.value for a in call.args if a.keyword and a.keyword.value == "namespace"), None)
        if namespace is not None:
            self.ctx.fact("app_namespace", namespace, app=key, value=_string(namespace, self.ctx))

    def _config_source(self, key: str, call: cst.Call, target: cst.BaseExpression, namespace: cst.Arg | None) -> None:
        value = _string(target, self.ctx) or self.class_target(target)
        if value is None:
            qualified = self.ctx.imported_name(target)  # config_from_object(settings_module)
            plain_import = isinstance(target, cst.Name) and self.ctx.imports.get(target.value) == target.value
            value = qualified if qualified and ("." in qualified or plain_import) else None  # ``import celeryconfig``
        ns = None
        if namespace is not None:
            ns = _string(namespace.value, self.ctx)
            if ns is None:
                ns = "?"  # given but unknown
        self.ctx.fact("config_source", call, app=key, target=value, namespace=ns)
        last = call.args[-1] if call.args else None
        if last is not None:
            self.ctx.fact("config_source_last_arg", last, app=key, trailing_comma=isinstance(last.comma, cst.Comma))
        if namespace is not None:
            self.ctx.fact("config_source_namespace", namespace.value, app=key)


    def _djcelery(self, call: cst.Call) -> None:
        """``djcelery.setup_loader()`` in Django settings (django-celery, Celery
        3): Celery runs with Django's loader, and this settings module is its
        configuration, old names and all; there is no ``Celery(...)`` call."""
        key = f"{self.module}:djcelery"
        self.ctx.fact("app_stmt", None, app=key, line=1, col=0, end_line=1, end_col=0)
        self._app(key, call)
        self.ctx.fact("config_source", call, app=key, target="django.conf:settings", namespace=None)
        self.recorded_module = True

    def _update(self, key: str, call: cst.Call) -> None:
        source = f"app:{key}"
        for a in call.args:
            inline = self.readable_dict(a.value) if a.keyword is None and a.star in ("", "**") else None
            if a.star == "**" and inline is None and (imported := self._imported_dict(a.value)):
                # ``from proj.conf import CELERY_CONFIG``: the model reads that module's dict
                self.ctx.fact("app_splat", call, app=key, module=imported[0], name=imported[1],
                              why="`app.conf.update(**X)` with a dict celerylint cannot read")
                continue
            if (a.star and inline is None) or (a.keyword is None and inline is None):
                self.ctx.fact("app_open", call, app=key, why="`app.conf.update(...)` with values celerylint cannot read",
                              **self.deployment_default(a))
                continue
            if a.keyword is not None:
                self._setting(source, a.keyword.value, a.keyword, a.value, "update", cond=self._shaped_cond(key))
            else:
                for element in inline.elements:
                    name = _string(element.key, self.ctx) if isinstance(element, cst.DictElement) else None
                    if name is None:
                        self.ctx.fact("app_open", call, app=key, why="`app.conf.update({...})` with keys celerylint cannot read")
                        continue
                    self._setting(source, name, element.key, element.value, "update_dict", cond=self._shaped_cond(key))
        if call.args and all(a.keyword is not None and not a.star for a in call.args):
            last = call.args[-1]
            self.ctx.fact("update_call", last, app=key, trailing_comma=isinstance(last.comma, cst.Comma),
                          cond=self.depth > 0)

    def _django_settings_module(self, node: cst.Call) -> None:
        name = self.ctx.imported_name(node.func)
        if name not in ("os.environ.setdefault", "os.putenv") or len(node.args) < 2:
            return
        variable = _string(node.args[0].value, self.ctx)
        if variable in ("DJANGO_SETTINGS_MODULE", "DJANGO_CONFIGURATION"):
            target = _string(node.args[1].value, self.ctx)
            if target:
                self.ctx.fact(variable.lower(), None, value=target, module=self.module)

    def _imported_dict(self, node: cst.BaseExpression) -> tuple[str, str] | None:
        """``(module, name)`` of a name imported from a module of the project
        (``from proj.conf import CELERY_CONFIG``, ``conf.CELERY_CONFIG`` after
        ``from proj import conf``); the model leaves the app open when that
        module is not linted or does not bind a readable dict to it."""
        qualified = self.ctx.imported_name(node)
        if not qualified or "." not in qualified:
            return None
        module, _, name = qualified.rpartition(".")
        return module, name
