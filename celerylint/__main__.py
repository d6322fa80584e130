import os
import sys

# ``python -m celerylint`` puts the working directory first on sys.path: in a
# checkout of Celery itself, importing Celery's setting table would then
# import the code being linted.  celerylint is imported already.
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from .cli import entry  # noqa: E402

entry()
