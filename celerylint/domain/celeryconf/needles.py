"""Needles shared by the configuration collectors and the runs on some files
(no imports: the warm path must not load libcst to test them)."""

from ...api.needles import All, Regex

# an app is made by a call of ``Celery`` (or of an alias of it)
APP_MADE = All((b"elery", Regex(rb"Celery(?:\s*[(\\]|\s+as\b)")))
