"""The checkers of one file as libcst batched visitors: their visitor methods
looked up once per class, and a checker that raises disabled for the file
(recorded as an internal error) while the others go on."""

from __future__ import annotations

from functools import cache

from ..core.model import FileResult


@cache
def _visitor_names(cls: type) -> tuple[str, ...]:
    """The non-stub ``visit_*``/``leave_*`` methods of a visitor class.

    libcst's ``get_visitors`` finds them with ``inspect.getmembers`` on every
    instance, which cost more than parsing when done for every checker of
    every file; the answer depends only on the class."""
    names = []
    for name in dir(cls):
        if name.startswith(("visit_", "leave_")):
            value = getattr(cls, name)
            if callable(value) and not getattr(value, "_is_no_op", False):
                names.append(name)
    return tuple(names)


class Batched:
    """A batchable visitor whose visitor methods are looked up once per class."""

    def __init__(self, visitor) -> None:
        self.visitor = visitor

    def __getattr__(self, name):
        return getattr(self.visitor, name)

    def get_visitors(self):
        visitor = self.visitor
        return {name: getattr(visitor, name) for name in _visitor_names(type(visitor))}


class Guard(Batched):
    """Wraps a checker so that an exception in it disables that checker for
    the file and is recorded as an internal error; other rules go on."""

    def __init__(self, checker, result: FileResult) -> None:
        super().__init__(checker)
        self.checker = checker
        self.result = result
        self.failed = False

    def get_visitors(self):
        return {name: self._wrap(name, fn) for name, fn in super().get_visitors().items()}

    def _wrap(self, name, fn):
        def call(*args):
            if self.failed:
                return None
            try:
                return fn(*args)
            except RecursionError:
                raise
            except Exception:
                import traceback

                self.failed = True
                label = getattr(self.checker, "CODE", "") or type(self.checker).__name__
                self.result.errors.append(
                    f"{self.result.path}: internal error in {label} ({name}):\n{traceback.format_exc()}"
                )
                return None

        return call
