"""A run on some files reads, from every other file of the project, the
facts project rules take from wherever they are (run/closure.py's
``INDEX_MODULES``), not only from the modules the files named import:
CL216's ``ATOMIC_REQUESTS`` in the settings, and a signal receiver connected
in an ``apps.py`` the receiver's module never imports.  Each named file
(and its directory) gets the whole-project answer."""

from __future__ import annotations

from test_client_index import write

FILES = {
    "manage.py": 'import os\nos.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")\n',
    "proj/__init__.py": "",
    "proj/settings.py": """
        DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "x", "ATOMIC_REQUESTS": True}}
        CELERY_BROKER_URL = "redis://localhost:6379/0"
        CELERY_TASK_ACKS_LATE = True
        CELERY_TASK_REJECT_ON_WORKER_LOST = True
        CELERY_WORKER_PREFETCH_MULTIPLIER = 1
    """,
    "proj/celery.py": """
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("django.conf:settings", namespace="CELERY")
    """,
    "proj/tasks.py": """
        from celery import shared_task
        @shared_task
        def work(x):
            return x
    """,
    "proj/web/__init__.py": "",
    "proj/web/views.py": """
        from django.http import JsonResponse
        from proj.models import Thing
        from proj.tasks import work
        def create(request):
            Thing.objects.create(name="x")
            work.delay(1)
            return JsonResponse({})
    """,
    "proj/web/signals.py": """
        from proj.tasks import work
        def on_delete(sender, instance, **kwargs):
            work.delay(instance.pk)
    """,
    "proj/apps.py": """
        from django.apps import AppConfig
        from django.db.models.signals import post_delete
        class ProjConfig(AppConfig):
            name = "proj"
            def ready(self):
                from proj.web import signals
                post_delete.connect(signals.on_delete, sender="proj.Thing")
    """,
}


def cl216(out: str) -> list[str]:
    return sorted(line.split(": CL216")[0].rsplit("/", 1)[-1] for line in out.splitlines() if ": CL216" in line)


def test_project_facts_of_files_the_named_ones_do_not_import(tmp_path, cli):
    write(tmp_path, FILES)
    (tmp_path / ".git").mkdir()
    whole = cl216(cli("--no-cache", "--output-format", "concise", ".").stdout)
    assert whole == ["signals.py:4:5", "views.py:7:5"]
    for args, cwd in ((["proj/web/views.py", "proj/web/signals.py"], tmp_path), (["proj/web"], tmp_path),
                      (["."], tmp_path / "proj" / "web")):
        assert cl216(cli("--no-cache", "--output-format", "concise", *args, cwd=cwd).stdout) == whole, (args, cwd)
    assert cl216(cli("--no-cache", "--output-format", "concise", "proj/web/views.py").stdout) == ["views.py:7:5"]
    assert cl216(cli("--no-cache", "--output-format", "concise", "proj/web/signals.py").stdout) == ["signals.py:4:5"]
