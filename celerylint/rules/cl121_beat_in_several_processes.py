from __future__ import annotations

from ..domain.celeryconf.model import Model
from ..domain.celeryconf.rulebase import ConfigRule
from ..domain.deploy.model import processes_for
from ..rule import Invalid, Valid


class BeatInSeveralProcesses(ConfigRule):
    """
    ## What it does
    Reads how the project starts its processes (compose files, Procfiles,
    Dockerfiles, Kubernetes manifests, systemd units, supervisord programs
    and the shell scripts they run: see the deployment page) and reports an
    app whose beat scheduler runs in more than one process of one
    deployment file: a `celery beat` or `celery worker -B` service scaled
    to several replicas (`deploy.replicas`, `scale`, Kubernetes `replicas`,
    supervisord `numprocs`, `celery multi` nodes), or a worker with `-B`
    beside a separate `beat` process.

    Processes of different files are not added up (a compose file for
    development and a Kubernetes manifest for production are alternatives),
    a script's branches (`case`, `if`) are not counted, and a process whose
    replicas are not stated counts once.

    ## Why is this bad?
    Beat has no coordination between instances: every running beat sends
    every periodic task on its schedule, so each task runs once per beat
    process, the "task runs twice" this project exists to prevent. Celery's
    documentation: "You have to ensure only a single scheduler is running
    for a schedule at a time, otherwise you'd end up with duplicate tasks."

    ## Example
    ```python
    # file: proj.py
    from celery import Celery
    app = Celery("proj")
    # file: docker-compose.yml
    services:
      worker:
        command: celery -A proj worker -B -l info
        deploy:
          replicas: 3
    ```

    Use instead:
    ```python
    # file: proj.py
    from celery import Celery
    app = Celery("proj")
    # file: docker-compose.yml
    services:
      worker:
        command: celery -A proj worker -l info
        deploy:
          replicas: 3
      beat:
        command: celery -A proj beat -l info
    ```

    ## Fix safety
    No fix: which process keeps the scheduler is a deployment decision.

    ## References
    - [Celery: starting the scheduler](https://docs.celeryq.dev/en/stable/userguide/periodic-tasks.html#starting-the-scheduler)
    - [celery#2856](https://github.com/celery/celery/issues/2856)
    - [Deployment model](https://github.com/celerylint/celerylint/blob/main/docs/deployment.md)
    """

    CODE = "CL121"
    NAME = "beat-in-several-processes"
    FIX = "none"
    SUMMARY = "Beat runs in more than one process of a deployment: every periodic task runs once per beat"
    HINT = "run beat in exactly one process: a single `celery beat` service with one replica, no `-B` on workers"
    TAGS = ("configuration", "deployment", "beat")

    VALID = (
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: Procfile
            worker: celery -A proj worker -B
            # file: k8s/beat.yaml
            kind: Deployment
            spec:
              replicas: 1
              template:
                spec:
                  containers:
                    - name: beat
                      command: ["celery", "-A", "proj", "beat"]
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: docker-compose.yml
            services:
              worker:
                command: celery -A proj worker -B
                deploy:
                  replicas: ${WORKERS}
            """),
        # the stage a service builds is the Dockerfile's last: read once, as the Dockerfile's
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: Dockerfile
            FROM python:3.12 AS base
            COPY . /app
            FROM base AS celery
            CMD ["celery", "-A", "proj", "worker", "-B"]
            # file: docker-compose.yml
            services:
              celery:
                build: {context: ., target: celery}
            """),
        # top-level ``services:`` in a Helm values file or a CI file: no compose file
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: .gitlab-ci.yml
            services:
              - redis:7
            test:
              script: celery -A proj worker -B & celery -A proj beat
            """),
        # ``celerybeat`` here is a directory: only the command runs a program
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: bin/beat.sh
            mkdir -p celerybeat
            exec celery --app proj beat -s celerybeat/beat
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: start.sh
            celery multi start 4 -A proj -B:1 -c 2
            # file: entrypoint.sh
            case "$1" in
              worker) exec celery -A proj worker -B ;;
              beat) exec celery -A proj beat ;;
            esac
            """),
        # after a branch that may end the script (the web container execs gunicorn), the
        # worker line runs only in some containers: not counted for each
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: docker/entrypoint.sh
            if [ "$ROLE" = web ]; then
              exec gunicorn proj.wsgi
            fi
            exec celery -A proj worker -B
            # file: docker-compose.yml
            services:
              web:
                build: .
                command: ./docker/entrypoint.sh
                deploy:
                  replicas: 2
              worker:
                build: .
                command: ./docker/entrypoint.sh
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            other = Celery("other")
            # file: docker-compose.yml
            services:
              a:
                command: celery -A proj.app worker -B
              b:
                command: celery -A proj.other beat
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: tests/docker-compose.yml
            services:
              worker:
                command: celery -A proj worker -B
                scale: 2
            """),
    )
    INVALID = (
        # an entrypoint that prepares in an ``if`` and then runs the worker: the worker line runs
        # whenever the script does, in each of the 3 replicas (an ``exec`` inside a branch would not)
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: docker/entrypoint.sh
            #!/bin/sh
            if [ -n "$MIGRATE" ]; then
              python manage.py migrate
            fi
            exec celery -A proj worker -B
            # file: docker-compose.yml
            services:
              worker:
                build: .
                command: ./docker/entrypoint.sh
                deploy:
                  replicas: 3
            """, message="3 processes"),
        # a compose file by what it holds: cookiecutter-django's ``production.yml`` until 2024
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: production.yml
            services:
              celeryworker:
                build: .
                command: celery -A proj worker -B
              celerybeat:
                image: proj_production
                command: celery -A proj beat
            """, message="2 processes"),
        # a service without a command runs the CMD of the stage it builds
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: Dockerfile
            FROM python:3.12 AS base
            COPY . /app
            FROM base AS celery
            CMD ["celery", "-A", "proj", "worker", "-B"]
            FROM base AS web
            CMD ["gunicorn", "proj.wsgi"]
            # file: docker-compose.yml
            services:
              celery:
                build:
                  context: .
                  target: celery
              beat:
                build: {context: ., target: celery}
                command: celery -A proj beat
            """, message="2 processes"),
        # ``-A backend.celery_app``: the app the package imports under that name
        Invalid("""
            # file: celery_app.py
            from celery import Celery
            app = Celery("backend")
            # file: backend/__init__.py
            from celery_app import app as celery_app
            # file: Procfile
            worker: celery -A backend.celery_app worker -B --concurrency=1
            beat: celery -A backend.celery_app beat
            """, message="2 processes"),
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: docker-compose.yml
            services:
              worker:
                command: celery -A proj worker -B --loglevel=info
              beat:
                command: ["celery", "-A", "proj", "beat"]
            """, message="2 processes", at="3:1"),
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: k8s/beat.yaml
            kind: Deployment
            spec:
              replicas: 2
              template:
                spec:
                  containers:
                    - name: beat
                      args: ["celery", "-A", "proj", "beat"]
            """, message="2 processes"),
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: deploy/supervisord.conf
            [program:worker]
            command=celery -A proj worker -B
            numprocs=4
            """, message="4 processes"),
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: deploy/celery.service
            [Service]
            ExecStart=/venv/bin/celery multi start w1 w2 -A proj -B
            """, message="2 processes"),
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: bin/restart.sh
            celery multi start 5 -A proj -c 1 -B:1 -Q:1 fast -Q:2 slow
            celery --app=proj beat -l warning &
            """, message="2 processes"),
    )

    def check_model(self, m: Model):
        for app in m.configured_apps():
            by_file: dict[str, list] = {}
            for p in processes_for(m, app):
                if p.runs_beat and not p.conditional:
                    by_file.setdefault(p.path, []).append(p)
            for path, beats in sorted(by_file.items()):
                counts = [p.beats or 1 for p in beats]
                if sum(counts) < 2:
                    continue
                first = beats[0]
                what = "; ".join(f"{p.kind} `{p.name}` ({p.role}, {_copies(p)}) at line {p.line}" for p in beats)
                yield self.finding(f"beat of `{app.var}` runs in {sum(counts)} processes of this deployment: {what}; "
                                   "every periodic task is sent once per beat", path, first.line, 0, first.line, 0)


def _copies(p) -> str:
    if p.beats is None:
        return "replicas not stated"
    return f"{p.beats} " + ("copy" if p.beats == 1 else "copies")
