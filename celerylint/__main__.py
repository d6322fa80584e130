import os
import sys

# ``python -m celerylint`` puts the working directory first on sys.path: in a
# checkout of Celery itself, importing Celery's setting table would then
# import the code being linted.  celerylint is imported already.
try:
    _here = os.getcwd()
except OSError:  # the working directory was removed
    _here = ""
if sys.path and sys.path[0] in ("", _here):
    del sys.path[0]

from .cli.commands import entry  # noqa: E402

entry()
