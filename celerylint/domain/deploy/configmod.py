"""A worker's ``--config`` module: the settings Celery reads from it.

``celery --config=mod worker`` (a global option of Celery 5's ``celery``
command, ``celery/bin/celery.py``) only sets ``CELERY_CONFIG_MODULE``.  An
app reads that variable through its loader's ``read_configuration``
(``celery/loaders/base.py``), which runs only when the app was given no
configuration source: ``config_from_object`` replaces the loader's
configuration (``loaders/base.py``, ``config_from_object``), so a worker's
``--config`` is ignored by an app that calls it, a Django app included.
The app's own settings (``Celery(...)`` keywords, ``app.conf`` assignments)
win over the module's (``app/base.py``, ``_load_config``:
``detect_settings`` puts them first).

So a setting is read from the module only for an app without a
configuration source and without the setting of its own, and only when the
module is a file of the tree; a ``--config`` written after the subcommand
(Celery 4's form, which Celery 5's ``worker`` does not take) or from a
variable is unknown.
"""

from __future__ import annotations

from ..celeryconf.settings import Resolved, find
from ..celeryconf.settings import _resolved as resolved_of
from ..celeryconf.settings_table import table
from .cmdline import UNKNOWN


def setting(m, app, process, name: str) -> Resolved | None:
    """The value of ``name`` the process's ``--config`` module gives ``app``;
    None when the process has no ``--config`` or the app does not read it
    (the app's own value applies)."""
    module = process.command.options.get("config")
    if module is None or app.config is not None:
        return None
    own = app.get(name)
    if not own.is_default:  # set by the app itself (or unknown): it wins
        return None
    if module == UNKNOWN or app.open:
        return Resolved("unknown")
    source = m.source(module, False, None)
    if source is None:
        return Resolved("unknown")
    found = find(source, name, table())
    return resolved_of(found) if found is not None else None
