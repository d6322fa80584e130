"""Which files look like settings, by their path (no imports: collectors use it)."""

import re

# The collectors read every such file that has a Celery setting at module
# level or a star import, so one they did not read has neither; any other
# file may hide a star import nobody read.
SETTINGS_PATH = re.compile(r"(?:^|/)(?:[^/]*(?:settings|config|conf)[^/]*\.py|(?:settings|config|conf)/[^/]+\.py)$")
