from __future__ import annotations

from ..domain.celeryconf.model import Model
from ..domain.celeryconf.rulebase import ConfigRule, where
from ..domain.celeryconf.settings_table import since
from ..domain.deploy.model import worker_apps
from ..rule import Invalid, Valid

SETTING = "worker_cancel_long_running_tasks_on_connection_loss"


class ConnectionLossCancelUnset(ConfigRule):
    """
    ## What it does
    Reports an app with `task_acks_late` on that does not set
    `worker_cancel_long_running_tasks_on_connection_loss` (Celery 5.1 and
    later; its default is False until Celery 6.0 makes it True).

    Off by default (select it with `extend-select = ["CL125"]`): turning
    the setting on changes what a connection loss does to running tasks,
    which is the team's decision until Celery 6.0 makes it the default.

    ## Why is this bad?
    When the worker loses its broker connection, the messages of the tasks
    it is running cannot be acknowledged any more: the broker delivers them
    again to another worker, while the first run goes on. With the setting
    False, Celery lets those tasks finish, so each runs twice at the same
    time; Celery warns about it at every connection loss
    (`CPendingDeprecationWarning`, `celery/worker/consumer/consumer.py`).
    With it True, the worker cancels them and only the redelivered copy
    runs.

    ## Example
    ```python
    # file: proj.py
    from celery import Celery
    app = Celery("proj", task_acks_late=True)
    ```

    Use instead:
    ```python
    # file: proj.py
    from celery import Celery
    app = Celery("proj", task_acks_late=True, worker_cancel_long_running_tasks_on_connection_loss=True)
    ```

    ## Fix safety
    The fix sets it to True where the app's configuration lives. It is
    unsafe: a task cancelled at a connection loss stops mid-way (it runs
    again from the start when redelivered), and on Celery before 5.1 the
    setting does not exist.

    ## References
    - [Celery: worker_cancel_long_running_tasks_on_connection_loss](https://docs.celeryq.dev/en/stable/userguide/configuration.html#worker-cancel-long-running-tasks-on-connection-loss)
    """

    CODE = "CL125"
    NAME = "connection-loss-cancel-unset"
    FIX = "unsafe"
    SUMMARY = ("`acks_late` without `worker_cancel_long_running_tasks_on_connection_loss`: after a connection loss "
               "a running task runs again beside itself")
    HINT = "set `worker_cancel_long_running_tasks_on_connection_loss = True`"
    TAGS = ("configuration", "acks-late")
    DEFAULT_ENABLED = False

    VALID = (
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", task_acks_late=True, worker_cancel_long_running_tasks_on_connection_loss=False)
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            """),
        Valid("""
            # file: proj.py
            import os
            from celery import Celery
            app = Celery("proj", task_acks_late=True)
            app.conf.worker_cancel_long_running_tasks_on_connection_loss = os.environ["CANCEL"] == "1"
            """),
    )
    INVALID = (
        Invalid("""
            # file: celeryconfig.py
            task_acks_late = True
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
            """, fixed="""
            # file: celeryconfig.py
            task_acks_late = True
            worker_cancel_long_running_tasks_on_connection_loss = True
            """, message=f"`{SETTING}` (Celery 5.1.0 and later) is not set"),
    )

    def check_model(self, m: Model):
        for app in worker_apps(m):
            if not app.get("task_acks_late").truthy or not app.get(SETTING).is_default:
                continue
            yield self.at_app(app, f"`task_acks_late` is on and `{SETTING}`{since(SETTING)} is not set in {where(app)}: "
                                   "after a broker "
                                   "connection loss the running tasks keep running while their messages are delivered "
                                   "again", m.fix_adding(app, SETTING, "True"))
