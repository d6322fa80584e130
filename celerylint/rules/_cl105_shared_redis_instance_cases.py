"""CL105 cases: a name of one settings module read in another (cookiecutter-django's
``from .base import *`` then a local binding of the same name; ``from .base
import X`` then ``X = ...``): the binding Python would use wins."""

from ..rule import Invalid, Valid, django_project

_BASE = """
    # file: proj/settings/__init__.py
    # file: proj/settings/base.py
    import environ
    env = environ.Env()
    REDIS_URL = env("REDIS_URL"{default})
    CELERY_BROKER_URL = REDIS_URL
"""


def _profile(body: str, default: str = "") -> str:
    return django_project(body, module="proj.settings.production", extra=_BASE.format(default=default))


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
    # two star imports: which module gives the name is not followed
    Valid(_profile(f"""
        from .base import *  # noqa
        from .cache import *  # noqa
        {_CACHE}
    """) + """
        # file: proj/settings/cache.py
        import os
        REDIS_URL = os.environ["CACHE_REDIS_URL"]
    """),
)

INVALID = (
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
    # bound in the profile first, then imported again: the import wins, as in Python
    Invalid(_profile(f"""
        from .base import *  # noqa
        import environ
        REDIS_URL = environ.Env()("CACHE_REDIS_URL")
        from .base import REDIS_URL
        {_CACHE}
    """), fixed=None, message="from REDIS_URL"),
)
