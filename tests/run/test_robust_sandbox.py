"""celerylint never imports, executes or evaluates the code it lints and
opens no sockets: planted modules whose import would write a file, run under
an audit hook that ends the process on any socket, subprocess, import of a
linted module or execution of code compiled from a linted file."""

from __future__ import annotations

import subprocess
import sys
import textwrap

PLANT = "open({marker!r}, 'w').write('executed')\n"

HOOK = textwrap.dedent('''
    import os, sys

    ROOT = sys.argv[1]
    PLANTED = {"evil", "pkg", "pkg.tasks", "celeryconfig", "settings", "conftest", "setup", "manage"}
    # (ctypes is not denied: importing celery for its table of settings loads
    # it through billiard; that is our dependency, not the linted code)
    DENIED = ("socket.", "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.fork", "urllib.Request",
              "http.client.connect")

    def deny(why):
        os.write(2, ("SANDBOX VIOLATION: " + why + "\\n").encode())
        os._exit(97)

    def hook(event, args):
        if event.startswith(DENIED):
            deny(f"{event} {args!r:.200}")
        if event == "import" and args[0] in PLANTED:
            deny(f"import of the linted module {args[0]}")
        if event == "exec" and getattr(args[0], "co_filename", "").startswith(ROOT):
            deny(f"executed code from {args[0].co_filename}")
        if event == "compile" and isinstance(args[1], str) and args[1].startswith(ROOT):
            deny(f"compiled {args[1]} to run it")

    sys.addaudithook(hook)
    sys.argv = ["celerylint", *sys.argv[2:]]
    import runpy
    runpy.run_module("celerylint", run_name="__main__", alter_sys=True)
''')


def _plant(root):
    files = {
        "evil.py": "import celery\nimport redis\n",
        "pkg/__init__.py": "",
        "pkg/tasks.py": "from celery import shared_task\nimport redis\nr = redis.Redis()\n"
                        "@shared_task\ndef f(k):\n    r.set('lock:' + k, 1, nx=True)\n",
        "celeryconfig.py": "broker_url = 'redis://localhost:6379/0'\nresult_backend = 'redis://localhost:6379/0'\n",
        "settings.py": "CELERY_BROKER_URL = 'redis://evil.invalid:6379/0'\nCACHES = {}\n",
        "conftest.py": "import celery\n",
        "setup.py": "import celery\n",
        "manage.py": "import celery\n",
        # a checkout of Celery itself: its package must not stand in for the installed one
        "celery/__init__.py": "",
        "celery/app/__init__.py": "",
        "celery/app/defaults.py": "SETTING_KEYS = ()\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + PLANT.format(marker=str(root / f"EXECUTED-{rel.replace('/', '-')}")))
    (root / "pyproject.toml").write_text('[tool.celerylint]\nsettings-modules = ["settings", "celeryconfig", "evil"]\n')
    (root / "docker-compose.yml").write_text("services:\n  redis:\n    image: redis\n    command: redis-server --maxmemory-policy allkeys-lru\n")


def test_linted_code_is_never_run_and_no_socket_is_opened(tmp_path):
    _plant(tmp_path)
    (tmp_path / "hook.py").write_text(HOOK)
    for args in (["."], ["--format", "sarif", "."], ["--fix", "--unsafe-fixes", "."], ["--diff", "pkg/tasks.py"]):
        proc = subprocess.run(
            [sys.executable, str(tmp_path / "hook.py"), str(tmp_path), "--no-cache", *args],
            cwd=tmp_path, capture_output=True, text=True, timeout=120,
        )
        assert "SANDBOX VIOLATION" not in proc.stderr, proc.stderr
        assert proc.returncode in (0, 1), proc.stderr
        assert "Traceback" not in proc.stderr
    assert not list(tmp_path.glob("EXECUTED-*"))
    assert "ex=60" in (tmp_path / "pkg" / "tasks.py").read_text()  # the run did lint and fix


def test_the_hook_does_catch_violations(tmp_path):
    """The sandbox itself works: a run that imports a planted module is stopped."""
    _plant(tmp_path)
    (tmp_path / "hook.py").write_text(HOOK.replace('runpy.run_module("celerylint"', 'import evil; runpy.run_module("celerylint"'))
    proc = subprocess.run(
        [sys.executable, str(tmp_path / "hook.py"), str(tmp_path), "--no-cache", "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 97 and "SANDBOX VIOLATION: import of the linted module evil" in proc.stderr
