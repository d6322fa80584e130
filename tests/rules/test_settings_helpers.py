"""Settings computed by a helper function of another settings file, as
paperless-ngx writes its Redis URLs (``settings/custom.py``'s
``parse_redis_url``, tuple-unpacked in ``settings/__init__.py``), through
the real CLI: the value is read when the helper's path for the arguments is
one celerylint can follow, and stays unknown otherwise."""

from __future__ import annotations

from conftest import lint_json, show_apps as apps, write_project as write

SETTINGS = '''
    # file: proj/__init__.py
    # file: proj/celery.py
    import os
    from celery import Celery
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
    app = Celery("proj")
    app.config_from_object("django.conf:settings", namespace="CELERY")
    # file: proj/settings/__init__.py
    import os
    from proj.settings.custom import parse_redis_url
    _CELERY_REDIS_URL, _CHANNELS_REDIS_URL = parse_redis_url(
        os.getenv("PAPERLESS_REDIS", None),
    )
    CELERY_BROKER_URL = _CELERY_REDIS_URL
    CELERY_RESULT_BACKEND = _CELERY_REDIS_URL
    CELERY_TASK_ACKS_LATE = True
'''

# paperless-ngx's helper, shortened: the socket branches cannot be followed,
# the default is returned before them
PAPERLESS_HELPER = '''
    # file: proj/settings/custom.py
    def parse_redis_url(env_redis: str | None) -> tuple[str, str]:
        """Returns a tuple of (celery_url, channels_url)"""
        # Not set, return a compatible default
        if env_redis is None:
            return ("redis://localhost:6379", "redis://localhost:6379")
        if "unix" in env_redis.lower():
            _, path = env_redis.split(":", maxsplit=1)
            return (f"redis+socket:{path}", env_redis)
        return (env_redis, env_redis)
'''


def findings(root, *select: str) -> list[tuple[str, int, str, str]]:
    _, found, _ = lint_json(root, "--no-cache", "--select", ",".join(select))
    return [(f["code"], f["line"], f["severity"], f["message"]) for f in found]


def test_a_tuple_unpacked_from_a_helper_of_another_file_is_read(cli, tmp_path):
    write(tmp_path, SETTINGS, PAPERLESS_HELPER)
    (app,) = apps(cli, tmp_path)
    assert app["settings"]["broker_url"] == {"state": "set", "value": "redis://localhost:6379",
                                             "env": "PAPERLESS_REDIS", "path": "proj/settings/__init__.py", "line": 6}
    assert app["settings"]["result_backend"]["value"] == "redis://localhost:6379"
    # broker and results in one Redis database: CL105's note
    ((code, line, severity, message),) = findings(tmp_path, "CL105")
    assert (code, line, severity) == ("CL105", 7, "note")
    assert "the result backend and the broker (from PAPERLESS_REDIS)" in message


def test_a_helper_whose_path_cannot_be_followed_leaves_the_value_unknown(cli, tmp_path):
    # the socket test comes before the default: undecidable for an unset variable
    write(tmp_path, SETTINGS, '''
        # file: proj/settings/custom.py
        def parse_redis_url(env_redis):
            if "unix" in (env_redis or ""):
                return ("redis+socket:///tmp/r.sock", "unix:///tmp/r.sock")
            if env_redis is None:
                return ("redis://localhost:6379", "redis://localhost:6379")
            return (env_redis, env_redis)
    ''')
    (app,) = apps(cli, tmp_path)
    assert app["settings"]["broker_url"]["state"] == "unknown"
    assert findings(tmp_path, "CL105") == []


def test_a_statement_before_the_return_leaves_the_value_unknown(cli, tmp_path):
    write(tmp_path, SETTINGS, '''
        # file: proj/settings/custom.py
        def parse_redis_url(env_redis):
            env_redis = env_redis or "redis://localhost:6379/0"
            return (env_redis, "redis://localhost:6379/1")
    ''')
    (app,) = apps(cli, tmp_path)
    assert app["settings"]["broker_url"]["state"] == "unknown"


def test_a_helper_outside_the_settings_files_is_not_read(cli, tmp_path):
    source = SETTINGS.replace("from proj.settings.custom import", "from proj.urls import")
    write(tmp_path, source, PAPERLESS_HELPER.replace("proj/settings/custom.py", "proj/urls.py"))
    (app,) = apps(cli, tmp_path)
    assert app["settings"]["broker_url"]["state"] == "unknown"


def test_an_f_string_helper_with_literal_arguments(cli, tmp_path):
    write(tmp_path, '''
        # file: proj/__init__.py
        # file: proj/celery.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("django.conf:settings", namespace="CELERY")
        # file: proj/settings.py
        from proj.conf.redis import redis_url
        CELERY_BROKER_URL = redis_url(db=0)
        CELERY_RESULT_BACKEND = redis_url(1)
        CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": redis_url(2)}}
        # file: proj/conf/__init__.py
        # file: proj/conf/redis.py
        def redis_url(db, host="redis"):
            return f"redis://{host}:6379/{db}"
    ''')
    (app,) = apps(cli, tmp_path)
    assert app["settings"]["broker_url"]["value"] == "redis://redis:6379/0"
    assert app["settings"]["result_backend"]["value"] == "redis://redis:6379/1"
    # the cache shares the broker's instance; the result backend, in its own database, is not reported
    ((code, line, severity, message),) = findings(tmp_path, "CL105")
    assert (code, line, severity) == ("CL105", 4, "warning")
    assert "the Django cache `default` and the broker use the same Redis instance redis:6379 (databases 0 and 2)" in message


def test_a_changed_helper_is_read_again_by_a_warm_run(tmp_path):
    write(tmp_path, SETTINGS, PAPERLESS_HELPER)
    cache = tmp_path / ".cache"
    _, found, _ = lint_json(tmp_path, "--select", "CL105", cache_dir=cache)
    assert [f["code"] for f in found] == ["CL105"]
    helper = tmp_path / "proj/settings/custom.py"
    # a test celerylint does not decide: the value becomes unknown
    helper.write_text(helper.read_text().replace("if env_redis is None:", 'if env_redis in (None, ""):'))
    _, found, _ = lint_json(tmp_path, "--select", "CL105", cache_dir=cache)
    assert found == []


def test_a_helper_of_the_same_file_reading_module_level_names(cli, tmp_path):
    # a public shape: the host from the environment, the database per use
    write(tmp_path, '''
        # file: proj/__init__.py
        # file: proj/celery.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("django.conf:settings", namespace="CELERY")
        # file: proj/settings.py
        import os
        REDIS_HOST = os.getenv("REDIS_HOST", "redis")
        def get_redis_url(db_index=0):
            return f"redis://{REDIS_HOST}:6379/{db_index}"
        CELERY_BROKER_URL = get_redis_url()
        CELERY_RESULT_BACKEND = get_redis_url(db_index=0)
        CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": get_redis_url(1)}}
    ''')
    (app,) = apps(cli, tmp_path)
    assert (app["settings"]["broker_url"]["value"], app["settings"]["broker_url"]["env"]) == (
        "redis://redis:6379/0", "REDIS_HOST")
    assert [(code, line, severity) for code, line, severity, _ in findings(tmp_path, "CL105")] == [
        ("CL105", 6, "note"), ("CL105", 7, "warning")]


def test_a_module_level_name_bound_twice_is_unknown(cli, tmp_path):
    write(tmp_path, '''
        # file: proj/__init__.py
        # file: proj/celery.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("django.conf:settings", namespace="CELERY")
        # file: proj/settings.py
        REDIS_HOST = "localhost"
        def get_redis_url(db_index=0):
            return f"redis://{REDIS_HOST}:6379/{db_index}"
        CELERY_BROKER_URL = get_redis_url()
        if DEBUG:
            REDIS_HOST = "redis-dev"
    ''')
    (app,) = apps(cli, tmp_path)
    assert app["settings"]["broker_url"]["state"] == "unknown"
