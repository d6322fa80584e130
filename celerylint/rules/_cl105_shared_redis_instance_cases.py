"""CL105 cases: a name of one settings module read in another (cookiecutter-django's
``from .base import *`` then a local binding of the same name; ``from .base
import X`` then ``X = ...``): the binding Python would use wins."""

import textwrap

from ..rule import Invalid, Valid, django_project

_BASE = """
    # file: proj/settings/__init__.py
    # file: proj/settings/base.py
    import environ
    env = environ.Env()
    REDIS_URL = env("REDIS_URL"{default})
    CELERY_BROKER_URL = REDIS_URL
"""


def _profile(body: str, default: str = "", more: str = "") -> str:
    """The profile ``body`` beside ``base``, and the ``more`` files."""
    extra = textwrap.dedent(_BASE.format(default=default)) + textwrap.dedent(more).lstrip("\n")
    return django_project(body, module="proj.settings.production", extra=extra)


_CACHE = 'CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": REDIS_URL}}'

VALID = (
    # the profile binds the name again before the cache reads it: another value
    Valid(_profile(f"""
        from .base import *  # noqa
        REDIS_URL = env("CACHE_REDIS_URL")
        {_CACHE}
    """)),
    # imported by name, then bound again
    Valid(_profile(f"""
        from .base import *  # noqa
        from .base import REDIS_URL, env
        REDIS_URL = env("CACHE_REDIS_URL")
        {_CACHE}
    """)),
    # the base module binds the name twice: which one an importer sees is not followed
    Valid(django_project(f"""
        from .base import *  # noqa
        {_CACHE}
    """, module="proj.settings.production", extra="""
        # file: proj/settings/__init__.py
        # file: proj/settings/base.py
        import environ
        env = environ.Env()
        REDIS_URL = env("BROKER_REDIS_URL")
        CELERY_BROKER_URL = REDIS_URL
        REDIS_URL = env("CACHE_REDIS_URL")
    """)),
    # two star imports, both bind the name: the later one wins, as in Python (another variable)
    Valid(_profile(f"""
        from .base import *  # noqa
        from .cache import *  # noqa
        {_CACHE}
    """, more="""
        # file: proj/settings/cache.py
        import os
        REDIS_URL = os.environ["CACHE_REDIS_URL"]
        CELERY_RESULT_EXPIRES = 600
    """)),
    # ... also when the later module gets it from a star import of its own
    Valid(_profile(f"""
        from .base import *  # noqa
        from .cache import *  # noqa
        {_CACHE}
    """, more="""
        # file: proj/settings/cache.py
        from .redis import *  # noqa
        # file: proj/settings/redis.py
        import os
        REDIS_URL = os.environ["CACHE_REDIS_URL"]
        CELERY_RESULT_EXPIRES = 600
    """)),
    # the later module binds the name twice: which value is not decided
    Valid(_profile(f"""
        from .base import *  # noqa
        from .cache import *  # noqa
        {_CACHE}
    """, more="""
        # file: proj/settings/cache.py
        import os
        REDIS_URL = os.environ["REDIS_URL"]
        REDIS_URL = os.environ["CACHE_REDIS_URL"]
        CELERY_RESULT_EXPIRES = 600
    """)),
    # the later star import is of a module that is not linted: it may bind the name
    Valid(_profile(f"""
        from .base import *  # noqa
        from proj.vendor_settings import *  # noqa
        {_CACHE}
    """)),
    # the later module binds the name inside a try: may or may not
    Valid(_profile(f"""
        from .base import *  # noqa
        from .cache import *  # noqa
        {_CACHE}
    """, more="""
        # file: proj/settings/cache.py
        import os
        try:
            REDIS_URL = os.environ["CACHE_REDIS_URL"]
        except KeyError:
            pass
        CELERY_RESULT_EXPIRES = 600
    """)),
    # a star import inside a try, of a linted module that binds the name: whether it runs
    # where the app is deployed (local settings) is not known, so the value is not either
    Valid(_profile(f"""
        from .base import *  # noqa
        try:
            from .local import *  # noqa
        except ImportError:
            pass
        {_CACHE}
    """, more="""
        # file: proj/settings/local.py
        import os
        REDIS_URL = os.environ["REDIS_URL"]
        CELERY_RESULT_EXPIRES = 600
    """)),
    # the name bound locally, then a star import that binds it again, then read
    Valid(_profile(f"""
        from .base import *  # noqa
        import os
        REDIS_URL = os.environ["REDIS_URL"]
        from .cache import *  # noqa
        {_CACHE}
    """, more="""
        # file: proj/settings/cache.py
        import os
        REDIS_URL = os.environ["CACHE_REDIS_URL"]
        CELERY_RESULT_EXPIRES = 600
    """)),
    # the later module defines __all__: which names it exports is not read
    Valid(_profile(f"""
        from .base import *  # noqa
        from .cache import *  # noqa
        {_CACHE}
    """, more="""
        # file: proj/settings/cache.py
        import os
        __all__ = ["REDIS_URL", "CELERY_RESULT_EXPIRES"]
        REDIS_URL = os.environ["CACHE_REDIS_URL"]
        CELERY_RESULT_EXPIRES = 600
    """)),
)

# URLs made by one f-string template of the same places (lutris/website): one
# host and port whatever they are; another literal port, or a field with a
# format spec, is not the same
_TEMPLATED = """
    import os
    REDIS_HOST = os.environ["REDIS_HOST"]
    REDIS_PORT = os.environ["REDIS_PORT"]
    CELERY_BROKER_URL = f"redis://{REDIS_HOST}:{REDIS_PORT}/0"
    CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache",
                          "LOCATION": f"redis://{REDIS_HOST}:%s/1"}}
"""
VALID = VALID + (
    Valid(django_project(_TEMPLATED.replace("%s", "6380"))),
    Valid(django_project(_TEMPLATED.replace("%s", "{REDIS_PORT:>5}"))),
)
INVALID = (
    Invalid(django_project(_TEMPLATED.replace("%s", "{REDIS_PORT}")),
            message="both are read at run time from REDIS_HOST and REDIS_PORT"),
    # one URL read at run time, a database number appended (learningequality/studio)
    Invalid(django_project("""
        import os
        REDIS_URL = os.environ["REDIS_URL"]
        CELERY_BROKER_URL = f"{REDIS_URL}0"
        CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": f"{REDIS_URL}1"}}
    """), message="(another database path)"),
    # from .base import *: the base module's one binding, read without a default
    Invalid(_profile(f"""
        from .base import *  # noqa
        {_CACHE}
    """), fixed=None, message="both are read at run time from REDIS_URL"),
    # ... and with a default: the same variable and the same default
    Invalid(_profile(f"""
        from .base import *  # noqa
        {_CACHE}
    """, default=', default="redis://redis:6379/0"'), fixed=None, message="the same database 0"),
    # imported by name; bound again only after the cache read it
    Invalid(_profile(f"""
        from .base import *  # noqa
        from .base import REDIS_URL, env
        {_CACHE}
        REDIS_URL = env("OTHER_URL")
    """), fixed=None, message="from REDIS_URL"),
    # two star imports, the later one does not bind the name: the earlier one gives it
    Invalid(_profile(f"""
        from .base import *  # noqa
        from .cache import *  # noqa
        {_CACHE}
    """, more="""
        # file: proj/settings/cache.py
        CACHE_TIMEOUT = 300
    """), fixed=None, message="from REDIS_URL"),
    # ... the same through a star import of a star import (celery.py reads base's)
    Invalid(_profile(f"""
        from .celery import *  # noqa
        from .cache import *  # noqa
        {_CACHE}
    """, more="""
        # file: proj/settings/celery.py
        from .base import *  # noqa
        CELERY_TASK_TIME_LIMIT = 300
        # file: proj/settings/cache.py
        CACHE_TIMEOUT = 300
    """), fixed=None, message="from REDIS_URL"),
    # the later module binds it to the same variable (the last binding wins)
    Invalid(_profile(f"""
        from .base import *  # noqa
        from .cache import *  # noqa
        {_CACHE}
    """, more="""
        # file: proj/settings/cache.py
        import os
        REDIS_URL = os.environ["REDIS_URL"]
        CELERY_RESULT_EXPIRES = 600
    """), fixed=None, message="from REDIS_URL"),
    # the optional local settings are not in the tree: the earlier star import gives the name
    Invalid(_profile(f"""
        from .base import *  # noqa
        try:
            from .local import *  # noqa
        except ImportError:
            pass
        {_CACHE}
    """), fixed=None, message="from REDIS_URL"),
    # a star import binds the name again, then the module binds it: the local binding wins
    Invalid(_profile(f"""
        from .base import *  # noqa
        from .cache import *  # noqa
        import os
        REDIS_URL = os.environ["REDIS_URL"]
        {_CACHE}
    """, more="""
        # file: proj/settings/cache.py
        import os
        REDIS_URL = os.environ["CACHE_REDIS_URL"]
    """), fixed=None, message="from REDIS_URL"),
    # bound in the profile first, then imported again: the import wins, as in Python
    Invalid(_profile(f"""
        from .base import *  # noqa
        import environ
        REDIS_URL = environ.Env()("CACHE_REDIS_URL")
        from .base import REDIS_URL
        {_CACHE}
    """), fixed=None, message="from REDIS_URL"),
)
