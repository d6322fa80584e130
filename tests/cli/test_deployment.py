"""The deployment model from the command line: ``--show-apps`` lists the
worker and beat processes each launch-file format starts (trees in the
shapes public projects use), the mermaid drawing, and the deployment rules
on the same trees."""

from __future__ import annotations

import json

from conftest import lint_json, show_apps as show, write_project as write

APP = '''
    # file: proj/__init__.py
    # file: proj/celery.py
    from celery import Celery
    app = Celery("proj")
    app.config_from_object("proj.celeryconfig")
    # file: proj/celeryconfig.py
    broker_url = "amqp://guest:secret@rabbit//"
    task_acks_late = True
    task_time_limit = 600
    task_routes = {"proj.tasks.report": {"queue": "reports"}}
'''


def processes(cli, root):
    (app,) = show(cli, root)
    return {(p["kind"], p["name"]): p for p in app["processes"]}


def test_compose_services_with_replicas(cli, tmp_path):
    write(tmp_path, APP, '''
        # file: docker-compose.yml
        x-common: &common
          image: proj
          environment:
            - CELERY_BROKER_URL=amqp://rabbit//
        services:
          web:
            <<: *common
            command: gunicorn proj.wsgi -b 0.0.0.0:8000
          worker:
            <<: *common
            command: celery -A proj worker -l info --concurrency=${CONCURRENCY:-4} -Q celery,reports -Ofair
            deploy:
              replicas: 3
          beat:
            <<: *common
            command: ["celery", "-A", "proj", "beat", "-l", "info"]
          flower:
            command: celery -A proj flower
    ''')
    found = processes(cli, tmp_path)
    assert set(found) == {("compose", "worker"), ("compose", "beat")}
    worker = found[("compose", "worker")]
    assert worker["role"] == "worker" and worker["replicas"] == 3 and worker["line"] == 11
    assert worker["options"] == {"concurrency": "4", "queues": "celery,reports", "optimization": "fair"}
    assert found[("compose", "beat")]["role"] == "beat" and found[("compose", "beat")]["replicas"] == 1
    _, findings, _ = lint_json(tmp_path, "--select", "CL121,CL123")
    assert findings == []


def test_worker_with_embedded_beat_scaled_is_reported(cli, tmp_path):
    write(tmp_path, APP, '''
        # file: docker-compose.yml
        services:
          worker:
            command: celery -A proj worker -B -l info
            scale: 2
    ''')
    assert processes(cli, tmp_path)[("compose", "worker")]["role"] == "worker+beat"
    _, findings, _ = lint_json(tmp_path, "--select", "CL121")
    assert [(f["path"].rsplit("/", 1)[-1], f["line"]) for f in findings] == [("docker-compose.yml", 3)]


def test_procfile(cli, tmp_path):
    write(tmp_path, APP, '''
        # file: Procfile
        release: python manage.py migrate
        web: gunicorn proj.wsgi
        worker: celery --app=proj worker --pool=gevent --autoscale=20,4 -Q celery
        clock: python -m celery -A proj beat
    ''')
    found = processes(cli, tmp_path)
    assert found[("procfile", "worker")]["options"] == {"pool": "gevent", "autoscale": "20,4", "queues": "celery"}
    assert found[("procfile", "worker")]["replicas"] is None
    assert found[("procfile", "clock")]["role"] == "beat"
    _, findings, _ = lint_json(tmp_path, "--select", "CL123")
    assert [f["code"] for f in findings] == ["CL123"]  # `reports` is routed, every worker names its queues


def test_dockerfile_cmd_exec_and_shell_form(cli, tmp_path):
    write(tmp_path, APP, '''
        # file: docker/worker/Dockerfile
        FROM python:3.12 AS build
        CMD ["python"]
        FROM python:3.12-slim
        ENTRYPOINT ["tini", "--"]
        CMD ["celery", "-A", "proj", "worker", "--max-tasks-per-child=50", "--max-memory-per-child=200000"]
        # file: docker/beat/Dockerfile
        FROM python:3.12-slim
        CMD celery -A proj beat --loglevel=info
    ''')
    found = processes(cli, tmp_path)
    assert found[("dockerfile", "Dockerfile")]["options"] == {"max_tasks_per_child": "50", "max_memory_per_child": "200000"}
    assert {p["role"] for p in found.values()} == {"worker"} or len(found) == 1
    (app,) = show(cli, tmp_path)
    assert sorted((p["path"], p["role"]) for p in app["processes"]) == [
        ("docker/beat/Dockerfile", "beat"), ("docker/worker/Dockerfile", "worker")]


def test_kubernetes_deployment(cli, tmp_path):
    write(tmp_path, APP, '''
        # file: k8s/celery.yaml
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: celery-worker
        spec:
          replicas: 4
          template:
            spec:
              containers:
                - name: worker
                  image: proj:latest
                  command: ["celery"]
                  args: ["-A", "proj", "worker", "-P", "threads", "-c", "16"]
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: celery-beat
        spec:
          template:
            spec:
              containers:
                - name: beat
                  image: proj:latest
                  command: ["celery", "-A", "proj", "beat"]
    ''')
    found = processes(cli, tmp_path)
    assert found[("kubernetes", "celery-worker/worker")]["replicas"] == 4
    assert found[("kubernetes", "celery-worker/worker")]["options"] == {"pool": "threads", "concurrency": "16"}
    assert found[("kubernetes", "celery-beat/beat")]["replicas"] == 1
    _, findings, _ = lint_json(tmp_path, "--select", "CL121,CL122")
    assert [(f["code"], f["path"], f["line"]) for f in findings] == [("CL122", "k8s/celery.yaml", 12)]


def test_helm_template_is_unknown(cli, tmp_path):
    write(tmp_path, APP, '''
        # file: chart/templates/worker.yaml
        kind: Deployment
        spec:
          replicas: {{ .Values.worker.replicas }}
          template:
            spec:
              containers:
                - command: ["celery", "-A", "proj", "worker", "-B"]
    ''')
    assert processes(cli, tmp_path) == {}


def test_supervisord_numprocs(cli, tmp_path):
    write(tmp_path, APP, '''
        # file: deploy/supervisord.conf
        [supervisord]
        nodaemon=true

        [program:celeryworker]
        command=/venv/bin/celery -A proj worker -l info -c 2 -n worker%(process_num)s@%%h
        numprocs=3
        process_name=%(program_name)s_%(process_num)02d

        [program:celerybeat]
        command=/venv/bin/celery -A proj beat -l info
    ''')
    found = processes(cli, tmp_path)
    assert found[("supervisor", "celeryworker")]["replicas"] == 3
    assert found[("supervisor", "celeryworker")]["options"] == {"concurrency": "2"}
    assert found[("supervisor", "celerybeat")]["replicas"] == 1


def test_shell_entrypoint_run_by_compose(cli, tmp_path):
    """cookiecutter-django's shape: compose runs ``/start-celeryworker``,
    which the Dockerfile copies from the tree."""
    write(tmp_path, APP, '''
        # file: docker-compose.yml
        services:
          celeryworker:
            build:
              context: .
              dockerfile: ./compose/django/Dockerfile
            command: /start-celeryworker
            deploy:
              replicas: 2
        # file: compose/django/Dockerfile
        FROM python:3.12
        COPY ./compose/django/celery/worker/start /start-celeryworker
        # file: compose/django/celery/worker/start
        #!/bin/bash
        set -o errexit
        exec celery -A proj worker -l INFO --time-limit=${TIME_LIMIT:-900} -B
    ''')
    found = processes(cli, tmp_path)
    worker = found[("compose", "celeryworker")]
    assert worker["via"] == "compose/django/celery/worker/start:3"
    assert worker["role"] == "worker+beat" and worker["replicas"] == 2 and worker["options"] == {"time_limit": "900"}
    _, findings, _ = lint_json(tmp_path, "--select", "CL121")
    assert [f["message"].split(":")[0] for f in findings] == ["beat of `app` runs in 2 processes of this deployment"]


def test_mermaid_draws_apps_processes_and_queues(cli, tmp_path):
    write(tmp_path, APP, '''
        # file: Procfile
        worker: celery -A proj worker -Q celery
    ''')
    proc = cli("--show-apps", "--output-format", "mermaid", ".", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "flowchart LR"
    assert any("routes to" in line for line in lines) and any("consumed by" in line for line in lines)
    assert "secret" not in proc.stdout and "***" in proc.stdout
    refused = cli("--output-format", "mermaid", ".", cwd=tmp_path)
    assert refused.returncode == 2 and "--show-apps" in refused.stderr


def test_rabbitmq_consumer_timeout_shown_and_used(cli, tmp_path):
    write(tmp_path, APP, '''
        # file: rabbitmq/rabbitmq.conf
        consumer_timeout = 300000
    ''')
    proc = cli("--show-apps", "--format", "json", ".", cwd=tmp_path)
    assert json.loads(proc.stdout)["rabbitmq"]["consumer_timeout_ms"] == 300000
    _, findings, _ = lint_json(tmp_path, "--select", "CL124")
    assert [f["code"] for f in findings] == ["CL124"]  # 600 s time limit with acks_late > 5 min


def test_without_pyyaml_yaml_is_unknown_and_said_once(cli, tmp_path):
    """PyYAML is the optional ``yaml`` extra: without it compose files are
    not read by the deployment model (a notice says so once), and CL103
    still finds ``--prefetch-multiplier`` in them with its line scan."""
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "yaml.py").write_text("raise ImportError('PyYAML is not installed')\n")
    root = tmp_path / "tree"
    write(root, APP, '''
        # file: docker-compose.yml
        services:
          worker:
            command: celery -A proj worker -B --prefetch-multiplier=1
            scale: 2
    ''')
    env = {"PYTHONPATH": str(blocked)}
    proc = cli("--show-apps", "--format", "json", ".", cwd=root, env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["apps"][0]["processes"] == []
    assert proc.stderr.count("`yaml` extra") == 1
    lint = cli("--no-cache", "--select", "CL103,CL121", "--format", "json", ".", cwd=root, env=env)
    assert json.loads(lint.stdout) == [] and lint.stderr.count("`yaml` extra") == 1
    with_yaml = cli("--no-cache", "--select", "CL103,CL121", "--format", "json", ".", cwd=root)
    assert [f["code"] for f in json.loads(with_yaml.stdout)] == ["CL121"] and "`yaml` extra" not in with_yaml.stderr


def test_templated_values_are_unknown(cli, tmp_path):
    """A manifest written for ``str.format`` or ERB, a supervisord
    expansion: the app and options are unknown, so no app claims them when
    the project has two apps, and no rule reads them."""
    write(tmp_path, APP, '''
        # file: proj/other.py
        from celery import Celery
        other = Celery("other")
        # file: deploy/k8s/worker.yaml
        kind: Deployment
        spec:
          replicas: 3
          template:
            spec:
              containers:
                - command: ["celery"]
                  args: ["--app={celery_app}", "worker", "--queues={queues}", "-B"]
        # file: deploy/supervisor/celery.conf
        [program:celery]
        command=celery --app=%(ENV_CELERY_APP)s worker -B --pool=<%= @pool %>
        numprocs=2
    ''')
    apps = show(cli, tmp_path)
    assert [a["processes"] for a in apps] == [[], []]
    _, findings, _ = lint_json(tmp_path, "--select", "CL121,CL122,CL123")
    assert findings == []


def test_consumer_timeout_written_by_a_dockerfile(cli, tmp_path):
    write(tmp_path, APP, '''
        # file: docker/rabbitmq/Dockerfile
        FROM rabbitmq:3.12-management-alpine
        RUN echo "consumer_timeout = 31622400000" >> /etc/rabbitmq/rabbitmq.conf
    ''')
    proc = cli("--show-apps", "--format", "json", ".", cwd=tmp_path)
    assert json.loads(proc.stdout)["rabbitmq"]["consumer_timeout_ms"] == 31622400000
    _, findings, _ = lint_json(tmp_path, "--select", "CL124")
    assert findings == []


def test_a_process_without_app_belongs_to_the_app_that_runs_workers(cli, tmp_path):
    """h's shape: ``hypothesis celery worker`` (a project CLI) names no app;
    the project's other app only sends tasks."""
    write(tmp_path, '''
        # file: h/__init__.py
        # file: h/tasks.py
        from celery import Celery
        celery = Celery("h")
        # file: h/queue.py
        from celery import Celery
        def send(annotation):
            authority = Celery(annotation.authority)
            authority.send_task("x")
        # file: conf/supervisord.conf
        [program:worker]
        command=newrelic-admin run-program hypothesis celery worker --loglevel=INFO
    ''')
    apps = {a["variable"]: a["processes"] for a in show(cli, tmp_path)}
    assert [p["name"] for p in apps["celery"]] == ["worker"]
    assert apps.get("authority", []) == []


def test_queue_of_an_apply_async_call_judged_alike_from_the_project_and_from_the_file(tmp_path):
    """CL123 on ``.apply_async(queue=...)``: the call in a view names the task
    imported from the tasks module; a run on the view alone reports it as
    the whole project's run does."""
    write(tmp_path, '''
        # file: proj/__init__.py
        # file: proj/celery.py
        from celery import Celery
        app = Celery("proj")
        # file: proj/tasks.py
        from proj.celery import app
        @app.task
        def crunch(n): ...
        # file: proj/views.py
        from proj.tasks import crunch
        def view(q):
            crunch.apply_async(args=(1,), queue="reports")
            crunch.apply_async(args=(2,), queue="fast")
            crunch.apply_async(args=(3,), queue=q)
        # file: Procfile
        worker: celery -A proj worker -Q default,fast
    ''')
    whole = lint_json(tmp_path, "--select", "CL123")[1]
    alone = lint_json(tmp_path, "--select", "CL123", "proj/views.py")[1]
    assert [(f["path"], f["line"], f["column"]) for f in whole] == [("proj/views.py", 3, 5)]
    assert "queue `reports`" in whole[0]["message"]
    assert alone == whole


def test_compose_extends_in_the_same_file(cli, tmp_path):
    """A service that ``extends:`` another takes its command and merges its
    ``deploy``; a service extending one of another file is unknown."""
    write(tmp_path, APP, '''
        # file: docker-compose.yml
        services:
          worker: &worker
            image: proj
            command: celery -A proj worker -B -Q celery,reports
            deploy:
              replicas: 1
          worker-big:
            extends:
              service: worker
            deploy:
              replicas: 2
          worker-short:
            extends: worker
            command: celery -A proj worker -Q celery,reports
          elsewhere:
            extends:
              file: common.yml
              service: worker
          loop:
            extends: loop
    ''')
    found = processes(cli, tmp_path)
    assert set(found) == {("compose", "worker"), ("compose", "worker-big"), ("compose", "worker-short")}
    assert found[("compose", "worker-big")]["role"] == "worker+beat"
    assert found[("compose", "worker-big")]["replicas"] == 2
    assert found[("compose", "worker-short")]["role"] == "worker"
    _, findings, _ = lint_json(tmp_path, "--select", "CL121")
    assert [f["code"] for f in findings] == ["CL121"]  # beat in `worker` and in two replicas of `worker-big`


def test_bash_script_is_a_shell_entrypoint(cli, tmp_path):
    write(tmp_path, APP, '''
        # file: docker/entrypoint_worker.bash
        #!/bin/bash
        exec celery -A proj worker -Q celery,reports -X reports --pool=threads
    ''')
    found = processes(cli, tmp_path)
    assert found[("shell", "entrypoint_worker.bash")]["options"]["pool"] == "threads"
    _, findings, _ = lint_json(tmp_path, "--select", "CL122,CL123")
    # threads enforce no time limit; `-X reports` takes the routed queue out of `-Q`
    assert sorted(f["code"] for f in findings) == ["CL122", "CL123"]


def test_app_named_from_inside_a_top_level_package(cli, tmp_path):
    """``backend/`` is a package, and the worker runs from inside it:
    ``-A app.task.celery`` names the app of ``backend.app.task.celery``."""
    write(tmp_path, '''
        # file: backend/__init__.py
        # file: backend/app/__init__.py
        # file: backend/app/task/__init__.py
        # file: backend/app/task/celery.py
        from celery import Celery
        app = Celery("fba", broker="redis://r//", task_time_limit=60)
        # file: deploy/supervisor/worker.conf
        [program:worker]
        directory=/srv/backend
        command=celery -A app.task.celery worker -P gevent -c 100
    ''')
    (app,) = show(cli, tmp_path)
    assert [(p["kind"], p["options"]["pool"]) for p in app["processes"]] == [("supervisor", "gevent")]


def test_app_imported_by_the_module_a_worker_names(cli, tmp_path):
    """``-A app.worker`` names a module that imports the app: Celery finds it
    among the module's attributes.  A module importing two apps names none."""
    write(tmp_path, '''
        # file: app/__init__.py
        # file: app/celery_app.py
        from celery import Celery
        celery_app = Celery("w", broker="redis://r//", task_time_limit=300)
        other = Celery("o", broker="redis://r//")
        # file: app/worker.py
        from .celery_app import celery_app
        @celery_app.task
        def crunch(): ...
        # file: app/both.py
        from app.celery_app import celery_app, other
        # file: start.sh
        exec celery -A app.worker worker --pool=solo
        exec celery -A app.both worker --pool=solo
    ''')
    apps = {a["variable"]: a for a in show(cli, tmp_path)}
    assert [p["line"] for p in apps["celery_app"]["processes"]] == [1]
    assert apps["other"]["processes"] == []
    _, findings, _ = lint_json(tmp_path, "--select", "CL122")
    assert [(f["code"], f["path"], f["line"]) for f in findings] == [("CL122", "start.sh", 1)]


def test_compose_extends_a_service_of_another_file(cli, tmp_path):
    """``extends: {file:, service:}`` reads the other file of the tree,
    relative to the extending one, and follows its own ``extends``; a file
    outside the tree or missing leaves the service unknown."""
    write(tmp_path, APP, '''
        # file: deploy/common/services.yml
        services:
          base:
            image: proj
            command: celery -A proj worker -B -Q celery,reports
            environment:
              LEVEL: info
          scaled:
            extends: base
            deploy:
              replicas: 3
        # file: deploy/docker-compose.yml
        services:
          worker:
            extends:
              file: common/services.yml
              service: scaled
            environment:
              EXTRA: "1"
          outside:
            extends:
              file: ../../elsewhere.yml
              service: base
          missing:
            extends:
              file: common/none.yml
              service: base
    ''')
    found = processes(cli, tmp_path)
    assert set(found) == {("compose", "worker")}
    assert found[("compose", "worker")]["replicas"] == 3 and found[("compose", "worker")]["role"] == "worker+beat"
    assert found[("compose", "worker")]["path"] == "deploy/docker-compose.yml"
    _, findings, _ = lint_json(tmp_path, "--select", "CL121")
    assert [(f["code"], f["path"]) for f in findings] == [("CL121", "deploy/docker-compose.yml")]


CHART = '''
    # file: chart/Chart.yaml
    apiVersion: v2
    name: proj
    version: 0.1.0
    # file: chart/values.yaml
    worker:
      replicaCount: 3
      autoscaling:
        enabled: false
      command: ["celery", "-A", "proj", "worker", "-B", "-Q", "celery,{{ .Values.extraQueue }}"]
      args:
        - --pool=threads
    beat:
      enabled: true
      mode: embedded
    # file: chart/templates/_helpers.tpl
    {{- define "proj.labels" -}}
    app: proj
    {{- end }}
    # file: chart/templates/worker.yaml
    {{/* the worker; a comment and an assignment print nothing */}}
    {{- $fullName := include "proj.fullname" . -}}
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: {{ include "proj.fullname" . }}-worker
      labels:
        {{- include "proj.labels" . | nindent 4 }}
        tier: worker
    spec:
      {{- if not .Values.worker.autoscaling.enabled }}
      replicas: {{ .Values.worker.replicaCount }}
      {{- end }}
      template:
        spec:
          containers:
            - name: worker
              image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
              command:
                {{- toYaml .Values.worker.command | nindent 16 }}
              args: {{ toJson .Values.worker.args }}
    # file: chart/templates/beat.yaml
    {{- if and .Values.beat.enabled (eq .Values.beat.mode "separate") }}
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: beat
    spec:
      template:
        spec:
          containers:
            - name: beat
              command: ["celery", "-A", "proj", "beat"]
    {{- end }}
'''


def test_helm_chart_rendered_with_its_values(cli, tmp_path):
    """A chart of the tree: its templates are rendered with ``values.yaml``
    (conditions on values, ``toYaml``/``toJson`` of a value, ``replicas``
    from a value); a template string left in a value is unknown."""
    write(tmp_path, APP, CHART)
    found = processes(cli, tmp_path)
    assert set(found) == {("helm", "worker/worker")}  # beat.mode is not "separate"
    worker = found[("helm", "worker/worker")]
    assert (worker["role"], worker["replicas"], worker["path"], worker["line"]) == (
        "worker+beat", 3, "chart/templates/worker.yaml", 19)
    assert worker["options"] == {"queues": "?", "pool": "threads"}
    _, findings, _ = lint_json(tmp_path, "--select", "CL121,CL122")
    assert sorted((f["code"], f["path"]) for f in findings) == [
        ("CL121", "chart/templates/worker.yaml"), ("CL122", "chart/templates/worker.yaml")]


def test_helm_templates_in_folders_of_templates_are_rendered(cli, tmp_path):
    """Helm renders every template under ``templates/``, at any depth
    (``templates/rollout/worker.yaml``), but partials and ``tests/`` hooks."""
    write(tmp_path, APP, CHART.replace("# file: chart/templates/worker.yaml", "# file: chart/templates/rollout/worker.yaml"),
          CHART[CHART.index("# file: chart/templates/beat.yaml"):].replace("templates/beat.yaml", "templates/tests/beat.yaml")
          .replace('{{- if and .Values.beat.enabled (eq .Values.beat.mode "separate") }}', "").replace("{{- end }}", ""))
    found = processes(cli, tmp_path)
    assert set(found) == {("helm", "worker/worker")}
    assert found[("helm", "worker/worker")]["path"] == "chart/templates/rollout/worker.yaml"


def test_helm_values_a_release_may_change_are_unknown(cli, tmp_path):
    """Another values file of the chart setting the replicas differently, or
    an autoscaler the chart renders, makes the replicas unknown; a condition
    that is not read makes the workload one branch."""
    prod, scaled, branch = tmp_path / "prod", tmp_path / "scaled", tmp_path / "branch"
    write(prod, APP, CHART, '''
        # file: chart/values-prod.yaml
        worker:
          replicaCount: 6
    ''')
    assert processes(cli, prod)[("helm", "worker/worker")]["replicas"] is None
    write(scaled, APP, CHART.replace("replicaCount: 3", "replicaCount: 3\n      hpa: true"), '''
        # file: chart/templates/hpa.yaml
        {{- if .Values.worker.hpa }}
        apiVersion: autoscaling/v2
        kind: HorizontalPodAutoscaler
        spec:
          scaleTargetRef:
            name: {{ include "proj.fullname" . }}-worker
        {{- end }}
    ''')
    assert processes(cli, scaled)[("helm", "worker/worker")]["replicas"] is None
    write(branch, APP, CHART.replace('{{- if and .Values.beat.enabled (eq .Values.beat.mode "separate") }}',
                                     '{{- if semverCompare ">=1.2" .Capabilities.KubeVersion.Version }}'))
    beat = processes(cli, branch)[("helm", "beat/beat")]
    assert beat["conditional"] is True and beat["replicas"] is None
    _, findings, _ = lint_json(branch, "--select", "CL121")
    assert [f["code"] for f in findings] == ["CL121"]  # the scaled worker+beat alone, not the beat branch


def test_app_named_as_a_dotted_attribute(cli, tmp_path):
    """``-A celery_app.celery``: the attribute ``celery`` of the module
    ``celery_app``, as Celery's ``find_app`` reads it."""
    write(tmp_path, '''
        # file: celery_app.py
        from celery import Celery
        celery = Celery("mes", broker="redis://r//")
        # file: Procfile
        worker: celery -A celery_app.celery worker --concurrency=2
        beat: celery -A celery_app.celery beat
    ''')
    (app,) = show(cli, tmp_path)
    assert [(p["name"], p["role"]) for p in app["processes"]] == [("worker", "worker"), ("beat", "beat")]


def test_a_procfile_running_a_script_that_chooses_by_its_first_argument(cli, tmp_path):
    """``worker: bin/start-stunnel bin/run worker`` (telemetry-analysis-service):
    the Procfile never names Celery; the wrapper runs no Celery itself, and
    ``bin/run``'s ``case "$1"`` runs the branch the Procfile's word selects."""
    write(tmp_path, APP, '''
        # file: Procfile
        web: bin/start-stunnel bin/run web
        worker: bin/start-stunnel bin/run worker
        scheduler: bin/start-stunnel bin/run scheduler
        # file: bin/start-stunnel
        #!/bin/bash
        stunnel /app/stunnel.conf &
        exec "$@"
        # file: bin/run
        #!/bin/bash
        set -eo pipefail
        case $1 in
          web)
            exec gunicorn proj.wsgi
            ;;
          worker)
            exec celery -A proj worker -l info -Q celery,reports
            ;;
          scheduler)
            exec celery -A proj \\
              beat -l info
            ;;
          test)
            if [ -n "$CI" ]; then celery -A proj beat; fi
            ;;
          *)
            exec "$@"
            ;;
        esac
    ''')
    found = processes(cli, tmp_path)
    assert set(found) == {("procfile", "worker"), ("procfile", "scheduler")}
    assert (found[("procfile", "worker")]["role"], found[("procfile", "worker")]["via"]) == ("worker", "bin/run:8")
    assert (found[("procfile", "scheduler")]["role"], found[("procfile", "scheduler")]["via"]) == ("beat", "bin/run:11")
    (tmp_path / "Procfile").write_text("scheduler: bin/run scheduler\nclock: bin/run scheduler\n")
    _, findings, _ = lint_json(tmp_path, "--select", "CL121")
    assert [(f["path"], f["line"]) for f in findings] == [("Procfile", 1)]  # two beats, each unconditional


def test_a_compose_command_runs_under_the_entrypoint_of_the_image_it_builds(cli, tmp_path):
    """``command: worker`` with ``build:`` and no ``entrypoint:`` runs the
    Dockerfile's ``ENTRYPOINT ["/bin/bash", "/app/bin/run"]``, a script the
    image copied with ``COPY . /app``; neither file names Celery."""
    write(tmp_path, APP, '''
        # file: docker-compose.yml
        x-app: &app
          build:
            context: .
            dockerfile: docker/Dockerfile
          command: web
        services:
          web:
            <<: *app
          worker:
            <<: *app
            command: worker
          scheduler:
            <<: *app
            command: ["scheduler"]
        # file: docker/Dockerfile
        FROM python:3.12-slim
        WORKDIR /app
        COPY . /app
        ENTRYPOINT ["/bin/bash", "/app/bin/run"]
        CMD ["web"]
        # file: bin/run
        #!/bin/bash
        case "$1" in
          web) exec gunicorn proj.wsgi ;;
          worker) exec celery -A proj worker -Q celery,reports ;;
          scheduler) exec celery -A proj beat ;;
        esac
    ''')
    found = processes(cli, tmp_path)
    assert (found[("compose", "worker")]["role"], found[("compose", "worker")]["via"]) == ("worker", "bin/run:4")
    assert found[("compose", "worker")]["replicas"] == 1
    assert (found[("compose", "scheduler")]["role"], found[("compose", "scheduler")]["via"]) == ("beat", "bin/run:5")
    assert ("compose", "web") not in found
    _, findings, _ = lint_json(tmp_path, "--select", "CL121,CL123")
    assert findings == []  # one beat, and `reports` is consumed


BEAT_APART = '''
    # file: backend/onyx/__init__.py
    # file: backend/onyx/celery/apps/primary.py
    from celery import Celery
    celery_app = Celery(__name__)
    celery_app.config_from_object("onyx.celery.configs.primary")
    # file: backend/onyx/celery/configs/primary.py
    broker_url = "redis://redis:6379/0"
    task_acks_late = True
    task_reject_on_worker_lost = True
    worker_prefetch_multiplier = 1
    # file: backend/onyx/celery/apps/beat.py
    from celery import Celery
    celery_app = Celery(__name__)
    celery_app.config_from_object("onyx.celery.configs.beat")
    # file: backend/onyx/celery/configs/beat.py
    broker_url = "redis://redis:6379/0"
    # file: backend/onyx/celery/versioned_apps/primary.py
    from onyx.utils import fetch_versioned_implementation
    app = fetch_versioned_implementation("onyx.celery.apps.primary", "celery_app")
    # file: backend/onyx/celery/versioned_apps/beat.py
    from onyx.celery.apps.beat import celery_app
    app = celery_app
    # file: backend/supervisord.conf
    [program:celery_worker_primary]
    command=celery -A onyx.celery.versioned_apps.primary worker
    [program:celery_beat]
    command=celery -A onyx.celery.versioned_apps.beat beat
    # file: backend/scripts/up.sh
    cat <<EOF
    next: run every celery worker and beat
    EOF
'''


def test_an_app_only_beat_runs_is_not_checked_for_worker_settings(cli, tmp_path):
    """The beat app has a configuration of its own, and every worker names
    another app: acks_late and prefetch mean nothing for it.  The ``-A``
    module imports it from folders without ``__init__.py`` (its key names
    it by its file); the here-document a script prints starts nothing."""
    write(tmp_path, BEAT_APART)
    apps = {a["path"]: a for a in show(cli, tmp_path)}
    beat = apps["backend/onyx/celery/apps/beat.py"]
    assert beat["kind"] == "beat"
    assert [(p["path"], p["line"]) for p in beat["processes"]] == [("backend/supervisord.conf", 4)]
    assert apps["backend/onyx/celery/apps/primary.py"]["kind"] == "worker"
    _, findings, _ = lint_json(tmp_path, "--select", "CL101,CL102,CL103")
    assert findings == []
    # a worker whose app is not named may run the beat app's tasks: checked as before
    write(tmp_path, BEAT_APART, '''
        # file: backend/Procfile
        worker: celery worker
    ''')
    assert {a["path"]: a["kind"] for a in show(cli, tmp_path)}["backend/onyx/celery/apps/beat.py"] == "worker"
    _, findings, _ = lint_json(tmp_path, "--select", "CL101,CL103")
    assert sorted((f["code"], f["path"]) for f in findings) == [
        ("CL101", "backend/onyx/celery/apps/beat.py"), ("CL103", "backend/onyx/celery/apps/beat.py")]


def test_the_launch_files_beside_a_python_folder_without_init_are_read(tmp_path):
    """Every Python file in ``backend/`` (no ``__init__.py``), the Procfile
    at the project's root: it is the deployment of that code, and its
    ``--prefetch-multiplier 1`` answers CL103."""
    write(tmp_path, '''
        # file: backend/worker.py
        from celery import Celery
        app = Celery("worker", broker="redis://localhost")
        app.conf.task_acks_late = True
        app.conf.task_reject_on_worker_lost = True
        # file: Procfile
        worker: cd backend && celery -A worker worker --prefetch-multiplier 1
    ''')
    (tmp_path / ".git").mkdir()
    rc, findings, _ = lint_json(tmp_path, "--no-cache", "--select", "CL103")
    assert (rc, findings) == (0, [])


def test_worker_command_lines_a_script_builds_in_a_variable(cli, tmp_path):
    """yogeshojha/rengine: a function builds ``celery ... -Q $1`` in a
    variable that the script ``eval``s, and ``commands+="celery ..."``
    collects others: each is a worker (its queues unknown where they come
    from an argument), so CL123 does not take the one written out plainly
    for the only one."""
    write(tmp_path, APP, '''
        # file: proj/tasks.py
        from proj.celery import app
        @app.task
        def report():
            pass
        # file: celery-entrypoint.sh
        #!/bin/bash
        worker_cmd() {
            local cmd="celery -A proj worker -Q $1 -n $1@%h"
            echo "$cmd &"
        }
        commands=""
        commands+="celery -A proj worker -Q default &"$'\\n'
        celery -A proj worker -Q main_queue &
        eval "$(worker_cmd reports)"
        eval "$commands"
        wait
        # file: docker-compose.yml
        services:
          worker:
            entrypoint: ./celery-entrypoint.sh
    ''')
    found = sorted(p["options"].get("queues", "") for p in show(cli, tmp_path)[0]["processes"])
    assert found == ["?", "default", "main_queue"]
    _, findings, _ = lint_json(tmp_path, "--no-cache", "--select", "CL123")
    assert findings == []


def test_supervisor_command_over_indented_lines(cli, tmp_path):
    """orchest/orchest: ``command=celery`` goes on over indented lines (the
    INI format's continuation); keys indented alike are keys of their own."""
    write(tmp_path, APP, '''
        # file: supervisord.conf
        [program:worker_builds]
        numprocs=1
        command=celery
        \t-A proj
        \tworker
        \t-Q builds
        \t--concurrency=2
        [program:worker_reports]
          command=celery -A proj worker -Q reports
          numprocs=2
    ''')
    found = processes(cli, tmp_path)
    assert {name: (p["replicas"], p["options"]) for (_, name), p in found.items()} == {
        "worker_builds": (1, {"concurrency": "2", "queues": "builds"}),
        "worker_reports": (2, {"queues": "reports"})}


def test_compose_entrypoint_running_a_script_behind_wait_for_it(cli, tmp_path):
    """OpenDroneMap/WebODM: the compose file names no Celery; its worker's
    entrypoint is ``bash -c "wait-for-it.sh ... -- /app/worker.sh start"``,
    and the script starts the worker: the service is that worker."""
    write(tmp_path, APP, '''
        # file: worker.sh
        #!/bin/bash
        if [ "$1" = "start" ]; then
            celery -A proj worker --concurrency 2
        fi
        # file: docker-compose.yml
        services:
          worker:
            image: example/app
            entrypoint: /bin/bash -c "/app/wait-for-it.sh -t 0 broker:6379 -- /app/worker.sh start"
    ''')
    found = processes(cli, tmp_path)
    worker = found[("compose", "worker")]
    assert (worker["via"], worker["options"]) == ("worker.sh:3", {"concurrency": "2"})


def test_an_image_path_two_dockerfiles_fill_differently_is_read_through_the_one_built(cli, tmp_path):
    """cookiecutter-django's layout: a local and a production Dockerfile
    copy different scripts to ``/start-celeryworker``.  A compose service
    building one of them runs that one's; a command that names no image
    build (a bare Procfile line) runs neither, as celerylint cannot know."""
    dockerfile = '''
        # file: compose/{env}/Dockerfile
        FROM python:3.12-slim
        COPY ./compose/{env}/worker-start /start-celeryworker
        # file: compose/{env}/worker-start
        #!/bin/bash
        exec celery -A proj worker {options}
    '''
    write(tmp_path, APP, dockerfile.format(env="local", options="-B") + dockerfile.format(env="production", options="-Q celery")
          + '''
        # file: docker-compose.prod.yml
        services:
          celeryworker:
            build:
              context: .
              dockerfile: ./compose/production/Dockerfile
            command: /start-celeryworker
        # file: Procfile
        worker: /start-celeryworker
    ''')
    found = processes(cli, tmp_path)
    assert found[("compose", "celeryworker")]["via"] == "compose/production/worker-start:2"
    assert ("procfile", "worker") not in found
