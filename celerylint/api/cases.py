"""Rule test cases, and builders for the scaffolds many cases share.

Imported by ``celerylint.rule`` (which rule modules import); nothing here
imports libcst.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Case:
    """A test case embedded in a rule.  ``fixed`` is the expected source
    after ``--fix --unsafe-fixes`` (None: the case offers no fix; ``...``:
    not checked).  ``count`` is the expected number of findings of this rule
    (invalid cases: at least one when None); ``message`` a substring of each
    of them, ``at`` the ``"line:col"`` (1-based) of the first.  ``path``
    names the file; a source may hold several, each after a line
    ``# file: path/to/module.py``."""

    code: str
    fixed: str | None | type(Ellipsis) = ...
    count: int | None = None
    path: str = "tasks.py"
    config: dict = field(default_factory=dict)
    message: str | None = None
    at: str | None = None

    @property
    def source(self) -> str:
        return textwrap.dedent(self.code).lstrip("\n")

    @property
    def expected(self) -> str | None | type(Ellipsis):
        if isinstance(self.fixed, str):
            return textwrap.dedent(self.fixed).lstrip("\n")
        return self.fixed


def Valid(code: str, path: str = "tasks.py", config: dict | None = None) -> Case:  # noqa: N802
    return Case(code, fixed=..., count=0, path=path, config=config or {})


def Invalid(  # noqa: N802
    code: str, fixed: str | None | type(Ellipsis) = ..., count: int | None = None,
    path: str = "tasks.py", config: dict | None = None, message: str | None = None, at: str | None = None,
) -> Case:
    return Case(code, fixed=fixed, count=count, path=path, config=config or {}, message=message, at=at)



def django_project(settings: str, *, celery: str | None = None, module: str = "proj.settings",
                   extra: str = "") -> str:
    """A Django project as case source: ``proj/celery.py`` making the app from
    the Django settings (``namespace="CELERY"``), the settings module with
    ``settings`` as its body, and ``extra`` files (``# file:`` sections)."""
    celery = celery if celery is not None else (
        "import os\n"
        "from celery import Celery\n"
        f'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "{module}")\n'
        'app = Celery("proj")\n'
        'app.config_from_object("django.conf:settings", namespace="CELERY")\n'
    )
    path = module.replace(".", "/") + ".py"
    return ("# file: proj/__init__.py\n# file: proj/celery.py\n" + celery
            + f"# file: {path}\n" + textwrap.dedent(settings).lstrip("\n") + textwrap.dedent(extra).lstrip("\n"))
