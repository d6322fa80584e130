"""``celerylint doctor`` against a real RabbitMQ (Debian's
``rabbitmq-server`` with the management plugin, started once per test
process: it takes seconds to boot) and a real Celery worker.

Without ``rabbitmq-server`` (``.ci/run`` installs it) every test here is
skipped, saying so."""

from __future__ import annotations

import json
import textwrap
import urllib.error
import uuid
from pathlib import Path

import pytest

from rabbit_support import EPMD, MISSING, NODE_CONSUMER_TIMEOUT_MS, SERVER, MethodLog, Rabbit, free_port
from test_doctor import doctor
from worker_support import Worker, inspector, wait_until

pytestmark = pytest.mark.skipif(SERVER is None or EPMD is None, reason=MISSING)


@pytest.fixture(scope="session")
def rabbit(tmp_path_factory):
    server = Rabbit(tmp_path_factory.mktemp("rabbitmq"))
    yield server
    server.stop()


@pytest.fixture
def proxy(rabbit):
    log = MethodLog(rabbit.management)
    yield log
    log.close()


def project(tmp_path: Path, url: str) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "proj.py").write_text(textwrap.dedent(f"""\
        from celery import Celery

        app = Celery("proj", broker={url!r})
        app.conf.task_acks_late = True
        app.conf.task_time_limit = 7200
        app.conf.worker_hijack_root_logger = False

        @app.task
        def later():
            return 1
        """))
    return root


def publish(url: str, queue: str, n: int) -> None:
    """``n`` messages on a classic queue nobody consumes (kombu, as Celery would)."""
    from kombu import Connection, Queue

    with Connection(url) as conn:
        producer = conn.Producer()
        q = Queue(queue, routing_key=queue)
        for i in range(n):
            producer.publish({"n": i}, routing_key=queue, declare=[q], serializer="json")


def test_rabbitmq_queues_alarms_and_consumer_timeout_read_with_get_only(rabbit, proxy, tmp_path):
    orphans, quorum, short = (f"{name}-{uuid.uuid4().hex[:6]}" for name in ("orphans", "qq", "short"))
    publish(rabbit.url(), orphans, 2)
    rabbit.api("PUT", f"/api/queues/%2F/{quorum}", {"durable": True, "arguments": {"x-queue-type": "quorum"}})
    rabbit.api("PUT", f"/api/queues/%2F/{short}", {"durable": True, "arguments": {"x-consumer-timeout": 60000}})
    rabbit.wait_for(lambda q: q.get(orphans, {}).get("messages_ready") == 2)
    root = project(tmp_path, rabbit.url())

    done = doctor(root, "--format", "json", "--management-url", proxy.url)
    assert done.returncode == 1, done.stderr
    found = json.loads(done.stdout)
    messages = {f["message"].split(" (broker ")[0]: f for f in found}
    [unconsumed] = [f for f in found if f["code"] == "CL158"]
    assert unconsumed["message"].startswith(f"queue `{orphans}` holds 2 ready messages and has no consumer")
    assert (unconsumed["path"], unconsumed["line"]) == ("proj.py", 3)  # where the broker URL is set
    assert f"queue `{orphans}` (classic): 2 messages ready, 0 unacknowledged (delivered, not yet acked), " \
           "0 consumers" in messages
    assert any(m.startswith(f"queue `{quorum}` (quorum): 0 messages ready") for m in messages)
    [quorum_note] = [m for m in messages if m.startswith("quorum queue")]
    assert f"`{quorum}`" in quorum_note and "(installed here)" in quorum_note
    # the node's consumer_timeout (rabbitmq.conf, planted at 60 s) is not exposed by the management API:
    # said as a note against the project's task_time_limit; the per-queue argument 3.10 ignores, said too
    [timeout] = [f for f in found if f["code"] == "CL159"]
    assert timeout["severity"] == "note"
    assert ("the project's `task_time_limit` (proj.py:5, with `task_acks_late`) is 2 h, longer than RabbitMQ's "
            "default `consumer_timeout` of 30 min; the node's own value (rabbitmq.conf) is not exposed") \
        in timeout["message"]
    assert NODE_CONSUMER_TIMEOUT_MS == 60_000
    version = rabbit.api("GET", "/api/overview")["rabbitmq_version"]
    if tuple(int(p) for p in version.split(".")[:3]) < (3, 11, 15):
        assert f"set a per-queue consumer timeout ({short}), which RabbitMQ {version} ignores" in done.stderr
        # and the policy key, which 3.10 refuses (so no queue can carry it there)
        with pytest.raises(urllib.error.HTTPError) as refused:
            rabbit.api("PUT", "/api/policies/%2F/timeouts",
                       {"pattern": "^short", "definition": {"consumer-timeout": 60000}, "apply-to": "queues"})
        assert refused.value.code == 400 and b"are not recognised policy settings" in refused.value.read()
    assert "guest:guest" not in done.stdout + done.stderr

    # the doctor's own requests: GET only, and the ones it documents
    assert proxy.seen, "the proxy saw nothing"
    assert {method for method, _ in proxy.seen} == {"GET"}, proxy.seen
    assert {path.split("?")[0] for _, path in proxy.seen} == {"/api/overview", "/api/nodes", "/api/queues/%2F"}

    # a memory alarm (a watermark far below what the node uses): publishers are blocked
    rabbit.ctl("set_vm_memory_high_watermark", "absolute", "10MB")
    try:
        wait_until(lambda: rabbit.api("GET", "/api/nodes")[0]["mem_alarm"], "the memory alarm")
        alarmed = [f for f in json.loads(doctor(root, "--format", "json", "--management-url", proxy.url).stdout)
                   if f["code"] == "CL151"]
    finally:
        rabbit.ctl("set_vm_memory_high_watermark", "0.4")
    [alarm] = alarmed
    assert "has raised its memory alarm" in alarm["message"] and "`apply_async` hangs" in alarm["message"]


def test_rabbitmq_errors_are_one_line_and_no_summary(rabbit, tmp_path):
    root = project(tmp_path, rabbit.url())
    off = doctor(root, "--management-url", f"http://127.0.0.1:{free_port()}", "--timeout", "5")
    assert off.returncode == 2
    assert "connection refused: the management API is off (`rabbitmq-plugins enable rabbitmq_management`)" \
        in off.stderr
    assert "nothing was checked" in off.stderr and off.stdout == ""

    wrong = doctor(root, "--broker-url", rabbit.url(password="wr0ng"), "--management-url", rabbit.management)
    assert wrong.returncode == 2
    assert "authentication failed at the management API (HTTP 401)" in wrong.stderr
    assert "wr0ng" not in wrong.stdout + wrong.stderr and wrong.stdout == ""

    tls = doctor(root, "--management-url", "https://" + rabbit.management[len("http://"):], "--timeout", "5")
    assert tls.returncode == 2 and "use http://" in tls.stderr, tls.stderr

    hangs = socket_that_never_answers()
    try:
        slow = doctor(root, "--management-url", f"http://127.0.0.1:{hangs.getsockname()[1]}", "--timeout", "1")
    finally:
        hangs.close()
    assert slow.returncode == 2 and "stopped after --timeout 1 s" in slow.stderr and slow.stdout == ""


def socket_that_never_answers():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(5)
    return s


def test_rabbitmq_worker_holding_an_eta(rabbit, tmp_path):
    root = project(tmp_path, rabbit.url())
    worker = Worker(root, "rmq@doctor", "--pool=solo")
    try:
        look = inspector(rabbit.url())
        wait_until(lambda: (look.ping() or {}).get("rmq@doctor"), "the worker", workers=[worker])
        sent = __import__("subprocess").run(
            [__import__("sys").executable, "-c", "from proj import later\nimport datetime\n"
             "later.apply_async(countdown=2 * 86400)"], cwd=root, capture_output=True, text=True, timeout=60)
        assert sent.returncode == 0, sent.stderr
        wait_until(lambda: (look.scheduled() or {}).get("rmq@doctor"), "the ETA task held", workers=[worker])
        done = doctor(root, "--workers", "--format", "json", "--management-url", rabbit.management,
                      "--timeout", "20")
        assert done.returncode == 1, done.stderr
        found = json.loads(done.stdout)
        [eta] = [f for f in found if f["code"] == "CL156"]
        assert "worker `rmq@doctor` holds 1 ETA/countdown task in memory (`proj.later`, the furthest due in 48 h" \
            in eta["message"]
        assert any(f["code"] == "CL159" and f["message"].startswith("`worker_pool` is 'solo'") for f in found)
        assert any(f["code"] == "CL159" and f["message"].startswith("`task_time_limit` is None") for f in found) \
            is False  # the worker runs the project's module: its time limit is the project's
    finally:
        worker.stop()


SHORT_MS = 30_000  # the node's consumer_timeout in the next test: longer than a doctor run, short for a test


def test_rabbitmq_worker_holding_an_eta_past_the_consumer_timeout(tmp_path):
    """A RabbitMQ whose rabbitmq.conf says `consumer_timeout = 30000` (the
    project deploys that same file), a queue declared with a 2-hour
    `x-consumer-timeout` (which 3.10 stores and ignores), and a worker
    holding a one-hour countdown from it, without `task_acks_late`: the doctor says the ETA is due
    after the timeout in force, and the server then really closes the
    worker's channel and the task goes back to the queue."""
    rabbit = Rabbit(tmp_path / "rmq", consumer_timeout_ms=SHORT_MS, tick_ms=1000)
    proxy = MethodLog(rabbit.management)
    worker = None
    try:
        version = rabbit.api("GET", "/api/overview")["rabbitmq_version"]
        root = tmp_path / "proj"
        (root / "rabbitmq").mkdir(parents=True)
        (root / "rabbitmq" / "rabbitmq.conf").write_text(f"consumer_timeout = {SHORT_MS}\n")
        (root / "proj.py").write_text(textwrap.dedent(f"""\
            from celery import Celery
            from kombu import Queue

            app = Celery("proj", broker={rabbit.url()!r})
            app.conf.task_time_limit = 600  # no task_acks_late: a worker holds an ETA task unacked all the same
            app.conf.worker_hijack_root_logger = False
            app.conf.task_queues = [Queue("slow", routing_key="slow",
                                          queue_arguments={{"x-consumer-timeout": 7_200_000}})]
            app.conf.task_routes = {{"proj.later": {{"queue": "slow"}}}}

            @app.task
            def later():
                return 1

            def remind():
                later.apply_async(countdown=3600)
            """))
        worker = Worker(root, "short@doctor", "--pool=solo", "-Q", "slow")
        look = inspector(rabbit.url())
        wait_until(lambda: (look.ping() or {}).get("short@doctor"), "the worker", workers=[worker])
        sent = __import__("subprocess").run(
            [__import__("sys").executable, "-c", "from proj import later\nlater.apply_async(countdown=3600)"],
            cwd=root, capture_output=True, text=True, timeout=60)
        assert sent.returncode == 0, sent.stderr
        wait_until(lambda: (look.scheduled() or {}).get("short@doctor"), "the ETA task held", workers=[worker])

        done = doctor(root, "--workers", "--format", "json", "--management-url", proxy.url, "--timeout", "20")
        assert done.returncode == 1, done.stderr
        found = json.loads(done.stdout)
        [eta] = [f for f in found if f["code"] == "CL156"]
        stored = rabbit.api("GET", "/api/queues/%2F/slow")["arguments"]
        assert stored == {"x-consumer-timeout": 7_200_000}  # what the server keeps, and the doctor reads
        assert tuple(int(p) for p in version.split(".")[:3]) < (3, 11, 15), \
            f"RabbitMQ {version} honours the queue's 2 h timeout: this test plants what 3.10 enforces"
        assert "set a per-queue consumer timeout (slow), which RabbitMQ " in done.stderr
        assert eta["severity"] == "warning"
        assert "; it is due after the consumer timeout of queue `slow`, 30 s (rabbitmq/rabbitmq.conf:1): " \
            in eta["message"]
        assert "RabbitMQ closes the worker's channel (`PRECONDITION_FAILED`)" in eta["message"]
        [limit] = [f for f in found if f["code"] == "CL159" and "consumer_timeout" in f["message"]]
        # the node's value as the project deploys it, against the longest countdown the code writes
        assert limit["message"].startswith("RabbitMQ's `consumer_timeout` is 30 s (rabbitmq/rabbitmq.conf:1, the "
                                           "node's value as the project deploys it) but the longest the project "
                                           "holds a message unacknowledged (a `countdown` of 1 h at proj.py:16) is "
                                           "60 min")
        assert {method for method, _ in proxy.seen} == {"GET"}, proxy.seen

        # what the doctor warned of, on the real server: the channel is closed, the worker stops, the task is back
        wait_until(lambda: worker.proc.poll() is not None, "the server to close the worker's channel",
                   seconds=SHORT_MS / 1000 + 30)
        log = (root / "short.log").read_text(errors="replace")
        assert f"PRECONDITION_FAILED - delivery acknowledgement on channel 1 timed out. Timeout value used: " \
               f"{SHORT_MS} ms" in log
        rabbit.wait_for(lambda q: q.get("slow", {}).get("messages_ready") == 1)
    finally:
        if worker is not None:
            worker.stop()
        proxy.close()
        rabbit.stop()
