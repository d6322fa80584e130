"""CL104 cases: transport options held in a dict that the code changes after
binding it (tracked exactly in straight-line code, otherwise unknown)."""

from ..rule import Invalid, Valid

VALID = (
    Valid("""
        # file: proj.py
        from celery import Celery
        app = Celery("proj", broker="redis://localhost")
        opts = {}
        opts["visibility_timeout"] = 9 * 3600  # folded into the binding
        app.conf.broker_transport_options = opts
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """),
    Valid("""
        # file: proj.py
        from celery import Celery
        app = Celery("proj", broker="redis://localhost")
        opts = {"visibility_timeout": 3600}
        opts.update({"visibility_timeout": 9 * 3600, "max_connections": 20})
        app.conf.broker_transport_options = opts
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """),
    Valid("""
        # file: proj.py
        from celery import Celery
        from proj.env import PAIRS
        app = Celery("proj", broker="redis://localhost")
        opts = {}
        for key, value in PAIRS:  # filled in a loop: unknown
            opts[key] = value
        app.conf.broker_transport_options = opts
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """),
    Valid("""
        # file: proj.py
        import os
        from celery import Celery
        app = Celery("proj", broker="redis://localhost")
        opts = {}
        if os.environ.get("SLOW"):  # set in a branch: unknown
            opts["visibility_timeout"] = 9 * 3600
        opts.setdefault("max_connections", 20)
        app.conf.broker_transport_options = opts
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """),
    Valid("""
        # file: proj.py
        from celery import Celery
        from proj.env import EXTRA
        app = Celery("proj", broker="redis://localhost")
        opts = {"visibility_timeout": 3600}
        opts |= EXTRA
        app.conf.broker_transport_options = opts
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """),
    Valid("""
        # file: proj.py
        from celery import Celery
        app = Celery("proj", broker="redis://localhost")
        opts = {}
        app.conf.broker_transport_options = opts
        opts["visibility_timeout"] = 9 * 3600  # the same dict, changed after it was handed over
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """),
    Valid("""
        # file: celeryconfig.py
        broker_url = "redis://localhost"
        broker_transport_options = {"visibility_timeout": 3600}
        broker_transport_options.update({"visibility_timeout": 9 * 3600})
        # file: proj.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("celeryconfig")
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """),
    Valid("""
        # file: celeryconfig.py
        broker_url = "redis://localhost"
        broker_transport_options = {}
        def tune(timeout):
            broker_transport_options["visibility_timeout"] = timeout
        tune(9 * 3600)
        # file: proj.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("celeryconfig")
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """),
    # a conditional item whose branches differ is unknown; the dict's other keys stay known
    Valid("""
        # file: celeryconfig.py
        import os
        SLOW = os.environ.get("SLOW") == "1"
        broker_url = "redis://localhost"
        broker_transport_options = {"max_connections": 20, "visibility_timeout": 1800 if SLOW else 9 * 3600}
        # file: proj.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("celeryconfig")
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """),
    # a dict unpacked first is overridden by the key written after it
    Valid("""
        # file: celeryconfig.py
        BASE = {"visibility_timeout": 1800, "max_connections": 20}
        broker_url = "redis://localhost"
        broker_transport_options = {**BASE, "visibility_timeout": 9 * 3600}
        # file: proj.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("celeryconfig")
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """),
    # an unpacked dict celerylint cannot read makes the whole dict unknown
    Valid("""
        # file: celeryconfig.py
        from proj.env import BASE
        broker_url = "redis://localhost"
        broker_transport_options = {**BASE, "max_connections": 20}
        # file: proj.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("celeryconfig")
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """),
    # a star import after the binding may bind the name again: unknown
    Valid("""
        # file: celeryconfig.py
        OPTIONS = {"visibility_timeout": 1800}
        from local_celeryconfig import *  # noqa
        broker_url = "redis://localhost"
        broker_transport_options = OPTIONS
        # file: local_celeryconfig.py
        OPTIONS = {"visibility_timeout": 9 * 3600}
        # file: proj.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("celeryconfig")
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """),
)

INVALID = (
    Invalid("""
        # file: proj.py
        from celery import Celery
        app = Celery("proj", broker="redis://localhost")
        opts = {}
        opts["visibility_timeout"] = 1800
        app.conf.broker_transport_options = opts
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """, message="visibility timeout is 30 min but"),
    Invalid("""
        # file: proj.py
        from celery import Celery
        app = Celery("proj", broker="redis://localhost")
        def make_options():
            opts = {"max_connections": 20}
            opts.update({"visibility_timeout": 1800})
            return opts
        opts = {"max_connections": 20}
        opts.update({"visibility_timeout": 1800})
        app.conf.broker_transport_options = opts
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """, message="visibility timeout is 30 min but"),
    Invalid("""
        # file: celeryconfig.py
        broker_url = "redis://localhost"
        broker_transport_options = {"max_connections": 20}
        broker_transport_options["visibility_timeout"] = 1800
        # file: proj.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("celeryconfig")
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """, message="visibility timeout is 30 min but"),
    # both branches agree: the item is known
    Invalid("""
        # file: celeryconfig.py
        import os
        DEBUG = os.environ.get("DEBUG") == "1"
        broker_url = "redis://localhost"
        broker_transport_options = {"max_connections": 20 if DEBUG else 50, "visibility_timeout": 1800 if DEBUG else 1800}
        # file: proj.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("celeryconfig")
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """, message="visibility timeout is 30 min but"),
    # the other keys of a dict with a conditional item and an unpacked known dict stay known;
    # no fix: a key written before ``**BASE`` would be overridden by it
    Invalid("""
        # file: celeryconfig.py
        import os
        DEBUG = os.environ.get("DEBUG") == "1"
        BASE = {"visibility_timeout": 1800}
        broker_url = "redis://localhost"
        broker_transport_options = {**BASE, "max_connections": 20 if DEBUG else 50}
        # file: proj.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("celeryconfig")
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """, message="visibility timeout is 30 min but", fixed=None),
    # bound again after the star import: the local binding is read
    Invalid("""
        # file: celeryconfig.py
        OPTIONS = {"visibility_timeout": 9 * 3600}
        from local_celeryconfig import *  # noqa
        OPTIONS = {"visibility_timeout": 1800}
        broker_url = "redis://localhost"
        broker_transport_options = OPTIONS
        # file: local_celeryconfig.py
        OPTIONS = {"visibility_timeout": 9 * 3600}
        # file: proj.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("celeryconfig")
        def later(task):
            task.apply_async(countdown=4 * 3600)
    """, message="visibility timeout is 30 min but"),
)
