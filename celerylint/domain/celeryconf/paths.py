"""Which files look like settings, and which are tests, by their path, and the
launch-file pattern that names a settings module (no imports: collectors use it)."""

import re

# The collectors read every such file that has a Celery setting at module
# level or a star import, so one they did not read has neither; any other
# file may hide a star import nobody read.
# (the name's word found by a lookahead, which is not backtracked into: a
# name of many "settings" is not scanned again from each)
SETTINGS_PATH = re.compile(r"(?:^|/)(?:(?=[^/]*(?:settings|config|conf))[^/]*\.py|(?:settings|config|conf)/[^/]+\.py)$")

# Tests and their fixtures (Django's ``tests.py`` too): the configuration
# model leaves their facts out, and the task-code rules (CL2xx) and the
# collectors of tasks, calls, clients and chords do not run there: a test
# sends wrong arguments, waits on eager results and takes locks as fixtures
# on purpose.
TEST_PATH = re.compile(r"(?:^|/)(?:tests?|testing|t)/|(?:^|/)(?:test_[^/]*|[^/]*_tests?|tests|conftest)\.py$")
# The paths that are not tests, as a ``PATHS`` pattern.
TEST_PATHS_EXCLUDED = r"^(?!(?:.*/)?(?:tests?|testing|t)/)(?!(?:.*/)?(?:test_[^/]*|[^/]*_tests?|tests|conftest)\.py$)"

# ``DJANGO_SETTINGS_MODULE`` named in a launch file (Procfile, Dockerfile, .env,
# compose, shell), and how much of such a file is read.
DSM = re.compile(rb"DJANGO_SETTINGS_MODULE[\"']?\s*(?:[:=]\s*)?[\"']?([A-Za-z_][\w.]*)")
# django-configurations' class, named the same way (``ENV DJANGO_CONFIGURATION=Prod``)
CONFIGURATION = re.compile(rb"DJANGO_CONFIGURATION[\"']?[ \t]*[:=][ \t]*[\"']?([A-Za-z_]\w*)")
LAUNCH_FILE_MAX_BYTES = 1 << 20
