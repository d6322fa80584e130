"""``celerylint doctor`` against a real Redis server on loopback, with real
Celery messages and a real worker.

Each test starts its own ``redis-server`` (a free port, a temporary
directory, ``--save '' --appendonly no``) and kills it afterwards.  Without
``redis-server`` (``.ci/run`` installs the distribution's) or redis-py
(the ``test`` extra) the tests are skipped, saying which is missing."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from celerylint.doctor.connect import READ_COMMANDS, Target, client, mask, target

REDIS_SERVER = shutil.which("redis-server")
try:
    import redis
except ImportError:  # pragma: no cover - the test extra installs it
    redis = None

pytestmark = pytest.mark.skipif(redis is None, reason="redis-py is not installed (pip install -e '.[test]')")
NO_SERVER = ("redis-server is not installed (.ci/run installs it with apt-get install redis-server); "
             "this doctor test needs a real Redis")
needs_server = pytest.mark.skipif(REDIS_SERVER is None, reason=NO_SERVER)

WRITE_COMMANDS = {"SET", "DEL", "UNLINK", "HSET", "HDEL", "ZADD", "ZREM", "LPUSH", "RPUSH", "LPOP", "RPOP",
                  "BRPOP", "EXPIRE", "PEXPIRE", "FLUSHDB", "FLUSHALL", "EVAL", "EVALSHA", "MULTI", "EXEC",
                  "SADD", "SREM", "RENAME", "PUBLISH", "CLIENT", "SETEX", "INCR", "APPEND"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, tmp: Path, *extra: str) -> None:
        self.port = free_port()
        self.dir = tmp / f"redis-{self.port}"
        self.dir.mkdir()
        self.proc = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.dir), *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.password = extra[extra.index("--requirepass") + 1] if "--requirepass" in extra else None
        self.admin = redis.Redis(port=self.port, password=self.password, socket_timeout=5)
        deadline = time.monotonic() + 10
        while True:
            try:
                self.admin.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise RuntimeError("redis-server did not start")
                time.sleep(0.05)

    def url(self, db: int = 0) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/{db}"

    def db(self, n: int):
        return redis.Redis(port=self.port, password=self.password, db=n, socket_timeout=5)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


@pytest.fixture
def server(tmp_path):
    if REDIS_SERVER is None:
        pytest.skip(NO_SERVER)
    s = Server(tmp_path)
    yield s
    s.stop()


@pytest.fixture
def start_server(tmp_path):
    if REDIS_SERVER is None:
        pytest.skip(NO_SERVER)
    started = []

    def start(*extra: str) -> Server:
        started.append(Server(tmp_path, *extra))
        return started[-1]

    yield start
    for s in started:
        s.stop()


def project(tmp_path: Path, url: str, visibility_timeout: float = 30, name: str = "proj", options: str = "") -> Path:
    """A Celery project whose broker is ``url``; its tasks sleep.  ``options``:
    more ``broker_transport_options`` items, as source text."""
    root = tmp_path / name
    root.mkdir(exist_ok=True)
    (root / "proj.py").write_text(textwrap.dedent(f"""\
        import time
        from celery import Celery

        app = Celery("proj")
        app.conf.broker_url = {url!r}
        app.conf.broker_transport_options = {{"visibility_timeout": {visibility_timeout}{options}}}
        app.conf.task_acks_late = True
        app.conf.worker_hijack_root_logger = False

        @app.task
        def slow(seconds):
            time.sleep(seconds)

        @app.task
        def later():
            return 1
        """))
    return root


def publish(root: Path, code: str) -> None:
    """Run ``code`` (after ``from proj import *``) in a child process: real
    ``apply_async`` calls with the project's configuration."""
    done = subprocess.run([sys.executable, "-c", "from proj import *\nimport datetime\n" + textwrap.dedent(code)],
                          cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def doctor(root: Path, *args: str, env: dict | None = None, timeout: float = 120):
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "celerylint", "doctor", *args], cwd=root, capture_output=True,
                          text=True, timeout=timeout,
                          env={**{k: v for k, v in os.environ.items() if k != "CELERY_BROKER_URL"}, "NO_COLOR": "1",
                               **(env or {})})
    done.seconds = time.monotonic() - started
    return done


def codes(done) -> list[str]:
    assert done.returncode in (0, 1), done.stderr
    return sorted(f["code"] for f in json.loads(done.stdout))


def json_findings(root: Path, *args: str, **kw) -> list[dict]:
    done = doctor(root, "--format", "json", *args, **kw)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def warnings(findings: list[dict]) -> list[str]:
    return sorted(f["code"] for f in findings if f["severity"] != "note")


# -- a healthy broker -------------------------------------------------------

def test_healthy_broker_reports_only_queue_lengths(server, tmp_path):
    server.admin.config_set("maxmemory-policy", "noeviction")
    root = project(tmp_path, server.url())
    publish(root, """
        later.apply_async(eta=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=2))
        slow.apply_async((1,), countdown=30)
        slow.delay(1)
    """)
    findings = json_findings(root)
    assert warnings(findings) == [], findings
    [queue] = [f for f in findings if f["code"] == "CL155"]
    assert "queue `celery`: 3 messages waiting" in queue["message"]
    assert queue["severity"] == "note"
    # located at the line that sets the broker URL
    assert (queue["path"], queue["line"]) == ("proj.py", 5)
    text = doctor(root)
    assert text.returncode == 0, text.stderr  # information only: exit 0
    assert "0 findings on 1 broker checked (1 for information)." in text.stdout


def test_key_prefix_and_priority_queues_are_celerys(server, tmp_path):
    server.admin.config_set("maxmemory-policy", "noeviction")
    root = project(tmp_path, server.url(), options=', "global_keyprefix": "shop:"')
    publish(root, """
        slow.delay(1)
        slow.apply_async((1,), priority=5)
    """)
    keys = sorted(k.decode() for k in server.db(0).keys())
    assert "shop:celery" in keys and "shop:celery\x06\x163" in keys, keys
    found = json_findings(root)
    assert warnings(found) == [], found
    [queue] = [f for f in found if f["code"] == "CL155"]
    assert "queue `celery`: 2 messages waiting (1 at priority 0, 1 at priority 3)" in queue["message"]
    server.db(0).set("celery", "x")  # unprefixed: not this broker's
    found = json_findings(root)
    assert warnings(found) == ["CL152"] and "'celery'" in found[0]["message"]


# -- eviction policy, memory, keyspaces ----------------------------------------

def test_each_server_condition_is_reported_when_it_holds(server, tmp_path):
    admin = server.admin
    admin.config_set("maxmemory-policy", "noeviction")
    root = project(tmp_path, server.url())
    publish(root, "slow.delay(1)")
    assert warnings(json_findings(root)) == []

    admin.config_set("maxmemory-policy", "allkeys-lru")
    found = json_findings(root)
    assert warnings(found) == ["CL150"]
    assert "`allkeys-lru` (read with CONFIG GET)" in found[0]["message"]

    server.db(1).set("cache:page", "x")  # a second keyspace
    found = json_findings(root)
    assert warnings(found) == ["CL150", "CL152"]
    assert "also holds db1 (1 key)" in next(f for f in found if f["code"] == "CL152")["message"]

    server.db(0).set("session:42", "x", ex=600)  # not Celery's, in the broker's database
    found = [f for f in json_findings(root) if f["code"] == "CL152"]
    assert len(found) == 2
    assert any("1 of the" in f["message"] and "'session:42'" in f["message"] for f in found)
    assert not any("'celery'" in f["message"] or "_kombu" in f["message"] for f in found)  # Celery's own keys

    used = int(admin.info("memory")["used_memory"])
    admin.config_set("maxmemory", str(int(used * 1.05)))  # a small maxmemory, nearly reached
    found = json_findings(root)
    assert warnings(found).count("CL151") == 1
    assert "of its" in next(f for f in found if f["code"] == "CL151")["message"]

    filler = server.db(1)  # fill the other keyspace until Redis evicts
    for i in range(2000):
        filler.set(f"fill:{i}", "x" * 1000)
        if int(admin.info("stats")["evicted_keys"]):
            break
    assert int(admin.info("stats")["evicted_keys"]) > 0
    found = json_findings(root)
    assert any(f["code"] == "CL151" and "has evicted" in f["message"] for f in found)

    admin.config_set("maxmemory", "0")
    found = json_findings(root)
    assert not any(f["code"] == "CL151" and "of its" in f["message"] for f in found)  # not near any more


def test_config_renamed_falls_back_to_info_then_says_unknown(start_server, tmp_path):
    s = start_server("--rename-command", "CONFIG", "", "--maxmemory-policy", "allkeys-lru")
    root = project(tmp_path, s.url())
    found = [f for f in json_findings(root) if f["code"] == "CL150"]
    assert len(found) == 1 and "INFO memory (CONFIG is unavailable" in found[0]["message"]
    assert found[0]["severity"] == "warning"

    # a user who may read keys but neither CONFIG nor INFO (as on some managed services)
    s2 = start_server("--maxmemory-policy", "allkeys-lru")
    s2.admin.execute_command("ACL", "SETUSER", "reader", "on", ">readerpw", "~*", "&*", "+@read", "+select",
                             "+ping", "-info", "-config")
    root2 = project(tmp_path, f"redis://reader:readerpw@127.0.0.1:{s2.port}/0", name="managed")
    done = doctor(root2, "--format", "json")
    assert done.returncode == 0, done.stderr  # unknown is information, not a failure
    [unknown] = [f for f in json.loads(done.stdout) if f["code"] == "CL150"]
    assert unknown["severity"] == "note"
    assert "is unknown" in unknown["message"] and "provider's console" in unknown["message"]
    assert "ElastiCache" in unknown["message"]
    assert "INFO memory is not available" in done.stderr
    assert "readerpw" not in done.stdout + done.stderr


# -- a real worker: unacked messages and the visibility timeout ------------------

def start_worker(root: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "proj", "worker", "--pool=solo", "--concurrency=1",
         "--without-heartbeat", "--without-gossip", "--without-mingle", "-Q", "celery", "--loglevel=WARNING"],
        cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def test_worker_holding_messages_past_the_visibility_timeout(server, tmp_path):
    server.admin.config_set("maxmemory-policy", "noeviction")
    root = project(tmp_path, server.url(), visibility_timeout=2)
    # a read-only user for the doctor: any write it tried would fail with NOPERM
    server.admin.execute_command("ACL", "SETUSER", "doctor", "on", ">doctorpw", "~*", "&*", "+@read", "+info",
                                 "+config|get", "+select", "+ping")
    doctor_url = f"redis://doctor:doctorpw@127.0.0.1:{server.port}/0"
    publish(root, """
        later.apply_async(countdown=600)                 # due long after the 2 s visibility timeout
        slow.apply_async((25,))                          # runs 25 s under acks_late
    """)
    worker = start_worker(root)
    try:
        index = server.db(0)
        deadline = time.monotonic() + 60
        while index.zcard("unacked_index") < 2:  # both delivered and held unacked
            assert worker.poll() is None, "the worker exited"
            assert time.monotonic() < deadline, "the worker did not take the messages"
            time.sleep(0.2)
        oldest = min(score for _, score in index.zrange("unacked_index", 0, -1, withscores=True))
        time.sleep(max(0.0, oldest + 3 - time.time()))  # older than the visibility timeout now
        done = doctor(root, "--format", "json", "--broker-url", doctor_url)
        assert done.returncode == 1, done.stderr
        found = json.loads(done.stdout)
        by_code = {f["code"]: f for f in found}
        assert warnings(found) == ["CL153", "CL154"], found
        assert "1 message in kombu's `unacked` was delivered longer ago than the visibility timeout of 2 s" \
            in by_code["CL153"]["message"]
        assert "`proj.slow`" in by_code["CL153"]["message"]
        assert "`proj.later`" in by_code["CL154"]["message"] and "beyond the visibility timeout of 2 s" \
            in by_code["CL154"]["message"]
        assert (by_code["CL153"]["path"], by_code["CL153"]["line"]) == ("proj.py", 5)
        assert "doctorpw" not in done.stdout + done.stderr

        # the same broker seen by a project whose visibility timeout is longer: nothing to say
        long_root = project(tmp_path, server.url(), visibility_timeout=3600, name="patient")
        found = json_findings(long_root, "--broker-url", doctor_url)
        assert warnings(found) == [], found
        assert worker.poll() is None  # still running the first delivery
    finally:
        os.killpg(worker.pid, 9)
        worker.wait(timeout=10)


# -- no writes ---------------------------------------------------------------------

def plant_unacked(root: Path) -> None:
    """A real kombu consumer takes a message and dies without acking: it
    stays in ``unacked``/``unacked_index``, as under a dead worker."""
    publish(root, """
        slow.delay(1)
        later.apply_async(countdown=3600)
        import os
        with app.connection_for_read() as conn:
            queue = conn.SimpleQueue("celery")
            queue.get(timeout=5)
            queue.get(timeout=5)
            os._exit(0)  # no ack, no restore at shutdown
    """)


def test_no_write_command_reaches_the_server(server, tmp_path):
    admin = server.admin
    admin.config_set("maxmemory-policy", "allkeys-lru")
    server.db(1).set("other", "x")
    server.db(0).set("session:1", "x", ex=60)
    root = project(tmp_path, server.url(), visibility_timeout=1)
    plant_unacked(root)
    publish(root, "slow.delay(1)")
    assert server.db(0).zcard("unacked_index") == 2
    time.sleep(1.5)

    seen: list[str] = []  # every command the server received, as MONITOR shows it
    stop = threading.Event()
    monitor = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    monitor.sendall(b"MONITOR\r\n")
    assert monitor.recv(5) == b"+OK\r\n"
    monitor.settimeout(0.2)

    def watch():
        buffer = b""
        while True:
            try:
                chunk = monitor.recv(65536)
            except socket.timeout:
                if stop.is_set():
                    break
                continue
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\r\n")
            for line in lines:
                # +1700000000.123456 [0 127.0.0.1:5555] "INFO" "memory"
                words = line.split(b"] ", 1)[1].decode("utf-8", "replace")
                seen.append(" ".join(w.strip('"') for w in words.split('" "')))

    # MONITOR does not show administrative commands (CONFIG): INFO commandstats
    # counts them, by subcommand; and a read-only ACL user could not run a
    # write (the denial would be in ACL LOG)
    admin.execute_command("ACL", "SETUSER", "doctor", "on", ">doctorpw", "~*", "&*", "+@read", "+info",
                          "+config|get", "+select", "+ping")
    admin.execute_command("ACL", "LOG", "RESET")
    before = admin.info("commandstats")
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    done = doctor(root, "--format", "json", "--broker-url", f"redis://doctor:doctorpw@127.0.0.1:{server.port}/0")
    time.sleep(0.5)
    stop.set()
    watcher.join(10)
    monitor.close()
    found = json.loads(done.stdout)
    assert {"CL150", "CL152", "CL153", "CL154", "CL155"} <= {f["code"] for f in found}, found  # every check ran
    names = [c.split()[0].upper() for c in seen if c]
    assert names, "MONITOR saw nothing"
    assert not set(names) & WRITE_COMMANDS, names
    for c in seen:
        words = c.split()
        name = words[0].upper()
        if name == "CONFIG":
            name += " " + words[1].upper()
        assert name in READ_COMMANDS, c
    assert {"INFO", "SCAN", "ZRANGEBYSCORE", "HMGET", "LLEN", "SSCAN", "TTL"} <= set(names)
    after = admin.info("commandstats")
    ran = {name[len("cmdstat_"):].upper().replace("|", " ")
           for name, stats in after.items() if stats["calls"] != before.get(name, {}).get("calls", 0)}
    ran -= {"ACL LOG", "MONITOR"}  # this test's own
    assert "CONFIG GET" in ran
    assert ran <= READ_COMMANDS, ran - READ_COMMANDS
    assert admin.execute_command("ACL", "LOG") == []  # nothing was refused to the read-only user


def test_the_client_refuses_write_commands_before_sending_them(server):
    r = client(target(server.url()), time.monotonic() + 5)
    with pytest.raises(Exception, match="not a read-only command"):
        r.set("x", "1")
    with pytest.raises(Exception, match="not a read-only command"):
        r.execute_command("CONFIG", "SET", "maxmemory-policy", "noeviction")
    assert server.db(0).get("x") is None


# -- passwords, URLs, timeouts, a missing redis-py -------------------------------

def test_password_is_never_printed(start_server, tmp_path):
    s = start_server("--requirepass", "s3cr3t-pw")
    root = project(tmp_path, s.url())
    for fmt in ("text", "json", "sarif", "github"):
        done = doctor(root, "--format", fmt)
        assert done.returncode in (0, 1), done.stderr
        assert "s3cr3t-pw" not in done.stdout + done.stderr
        assert ":****@127.0.0.1" in done.stdout
    wrong = doctor(root, "--broker-url", f"redis://:wr0ng-pw@127.0.0.1:{s.port}/0")
    assert wrong.returncode == 2
    assert "wr0ng-pw" not in wrong.stdout + wrong.stderr
    assert "redis://:****@127.0.0.1" in wrong.stderr


def test_sarif_without_a_source_location_is_valid(server, tmp_path):
    from test_sarif import validate

    server.admin.config_set("maxmemory-policy", "allkeys-lru")
    empty = tmp_path / "empty"
    empty.mkdir()
    done = doctor(empty, "--format", "sarif", "--broker-url", server.url())
    assert done.returncode in (0, 1), done.stderr
    document = json.loads(done.stdout)
    validate(document)
    results = document["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["CL150", "CL155"]
    result = results[0]
    location = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location["uri"].startswith("redis://127.0.0.1:")


def test_environment_variable_names_the_broker(server, tmp_path):
    server.admin.config_set("maxmemory-policy", "volatile-lru")
    empty = tmp_path / "empty"
    empty.mkdir()
    found = json_findings(empty, env={"CELERY_BROKER_URL": server.url()})
    assert [f["code"] for f in found] == ["CL150", "CL155"]
    assert found[0]["path"] == server.url()
    # the environment overrides an app's own broker_url, in Celery and here: said on stderr
    root = project(tmp_path, "redis://:apppw@elsewhere.invalid:6379/0")
    done = doctor(root, "--format", "json", env={"CELERY_BROKER_URL": server.url()})
    assert [f["code"] for f in json.loads(done.stdout)] == ["CL150", "CL155"]
    assert "CELERY_BROKER_URL" in done.stderr and "overrides the broker_url of `proj:app` (proj.py:5)" in done.stderr
    assert "apppw" not in done.stderr


def test_stops_within_the_timeout(tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)  # accepts connections (the kernel does) and never answers
    try:
        done = doctor(tmp_path, "--broker-url", f"redis://127.0.0.1:{listener.getsockname()[1]}/0", "--timeout", "1")
    finally:
        listener.close()
    assert done.returncode == 2
    assert "stopped after --timeout 1 s" in done.stderr
    assert done.seconds < 8  # Python's and celerylint's start-up plus one second


def test_unreachable_broker_is_an_error(tmp_path):
    done = doctor(tmp_path, "--broker-url", f"redis://:pw123@127.0.0.1:{free_port()}/0", "--timeout", "3")
    assert done.returncode == 2
    assert "connection refused: nothing listens there" in done.stderr and "pw123" not in done.stderr
    assert "nothing was checked" in done.stderr
    assert done.stdout == "", done.stdout  # no "0 findings on 1 broker checked" for a broker that was not
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_sentinel_broker_is_checked_through_its_master(server, tmp_path):
    server.admin.config_set("maxmemory-policy", "allkeys-lru")
    port = free_port()
    conf = tmp_path / "sentinel.conf"  # sentinel rewrites its configuration file
    conf.write_text(f"port {port}\nbind 127.0.0.1\ndir {tmp_path}\n"
                    f"sentinel monitor mymaster 127.0.0.1 {server.port} 1\n")
    sentinel = subprocess.Popen([REDIS_SERVER, str(conf), "--sentinel"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    try:
        probe = redis.Redis(port=port, socket_timeout=2)
        deadline = time.monotonic() + 10
        while True:
            try:
                if probe.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster"):
                    break
            except redis.ConnectionError:
                pass
            assert time.monotonic() < deadline, "redis-server --sentinel did not start"
            time.sleep(0.1)
        root = tmp_path / "sentinel_proj"
        root.mkdir()
        dead = free_port()  # a sentinel that is down: the next one is asked
        (root / "proj.py").write_text(textwrap.dedent(f"""\
            from celery import Celery
            app = Celery("proj")
            app.conf.broker_url = "sentinel://127.0.0.1:{dead}/0;sentinel://127.0.0.1:{port}/0"
            app.conf.broker_transport_options = {{"master_name": "mymaster", "visibility_timeout": 60}}
            """))
        done = doctor(root, "--format", "json", "--timeout", "5")
        assert done.returncode == 1, done.stderr
        found = json.loads(done.stdout)
        assert [f["code"] for f in found] == ["CL150", "CL155"]
        assert (found[0]["path"], found[0]["line"]) == ("proj.py", 3)
        assert f"the master is redis://127.0.0.1:{server.port}/0" in done.stderr

        (root / "proj.py").write_text(textwrap.dedent(f"""\
            from celery import Celery
            app = Celery("proj", broker="sentinel://:pw@127.0.0.1:{port}")
            """))
        done = doctor(root)
        assert done.returncode == 2
        assert "needs broker_transport_options['master_name']" in done.stderr and ":pw@" not in done.stderr
    finally:
        sentinel.kill()
        sentinel.wait(timeout=10)


def test_other_transports_are_refused_clearly(tmp_path):
    done = doctor(tmp_path, "--broker-url", "sqs://key:s3cret@")
    assert done.returncode == 2 and "not a Redis broker URL" in done.stderr
    assert "s3cret" not in done.stderr


def test_no_broker_found_is_a_usage_error(tmp_path):
    done = doctor(tmp_path)
    assert done.returncode == 2
    assert "--broker-url" in done.stderr


def test_missing_redis_py_says_how_to_install_it(tmp_path):
    code = ("import sys; sys.modules['redis'] = None; sys.argv = ['celerylint', 'doctor', '--broker-url', "
            "'redis://localhost:1/0']; from celerylint.cli.commands import entry; entry()")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "pip install 'celerylint[doctor]'" in done.stderr


def test_rediss_urls_use_tls():
    t = target("rediss://:pw@cache.example:6380/3?ssl_cert_reqs=required")
    assert (t.kind, t.db) == ("tls", 3)
    import redis as redis_py

    kwargs = {}

    class Spy(redis_py.Redis):
        def __init__(self, **kw):
            kwargs.update(kw)

    import celerylint.doctor.connect as connect

    real = redis_py.Redis
    redis_py.Redis = Spy
    try:
        connect.client(t, time.monotonic() + 1)
    finally:
        redis_py.Redis = real
    assert kwargs["ssl"] is True and kwargs["ssl_cert_reqs"] == "required"
    assert (kwargs["host"], kwargs["port"], kwargs["db"], kwargs["password"]) == ("cache.example", 6380, 3, "pw")


@needs_server
@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed: no certificate for the TLS test")
def test_rediss_broker_over_tls(tmp_path):
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem", "-out",
                    "cert.pem", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   cwd=tmp_path, check=True, capture_output=True, timeout=60)
    port = free_port()
    proc = subprocess.Popen([REDIS_SERVER, "--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1",
                             "--tls-cert-file", "cert.pem", "--tls-key-file", "key.pem", "--tls-ca-cert-file",
                             "cert.pem", "--tls-auth-clients", "no", "--save", "", "--appendonly", "no",
                             "--maxmemory-policy", "allkeys-lfu", "--dir", str(tmp_path)],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.skip("this redis-server was built without TLS")
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)
        ca = tmp_path / "cert.pem"
        found = json_findings(tmp_path, "--broker-url", f"rediss://127.0.0.1:{port}/0?ssl_cert_reqs=required&ssl_ca_certs={ca}")
        assert [f["code"] for f in found] == ["CL150", "CL155"]
        assert "`allkeys-lfu`" in found[0]["message"]
        unverified = doctor(tmp_path, "--broker-url", f"rediss://127.0.0.1:{port}/0")  # the system CAs do not know it
        assert unverified.returncode == 2 and "CERTIFICATE_VERIFY_FAILED" in unverified.stderr
    finally:
        proc.kill()
        proc.wait(timeout=10)


@pytest.mark.parametrize("url, shown", [
    ("redis://:pw@h:6379/0", "redis://:****@h:6379/0"),
    ("redis://user:p%40ss@h/1", "redis://user:****@h/1"),
    ("rediss://h:6380/0", "rediss://h:6380/0"),
    ("redis://user@h/0", "redis://user@h/0"),
    ("sentinel://:a@h1:26379;sentinel://:b@h2:26379", "sentinel://:****@h1:26379;sentinel://:****@h2:26379"),
    ("amqp://guest:guest@localhost//", "amqp://guest:****@localhost//"),
])
def test_mask(url, shown):
    assert mask(url) == shown
    assert Target(url, "tcp", 0).shown == shown


def test_cli_entry_keeps_linting_and_explains_doctor_codes(cli, tmp_path):
    (tmp_path / "doctor").mkdir()
    (tmp_path / "doctor" / "eta.py").write_text("from t import job\njob.apply_async(countdown=86400)\n")
    linted = cli("./doctor")
    assert linted.returncode == 1 and "CL206" in linted.stdout
    explained = cli("--explain", "CL153")
    assert explained.returncode == 0 and "unacked-past-visibility-timeout" in explained.stdout
    helped = cli("doctor", "--help")
    assert helped.returncode == 0 and "--broker-url" in helped.stdout and "--timeout" in helped.stdout


def test_kombu_key_layout():
    from celerylint.doctor.kombu_keys import Layout

    plain = Layout()
    plain.queues.add("emails")
    assert plain.queue_keys("emails") == ["emails", "emails\x06\x163", "emails\x06\x166", "emails\x06\x169"]
    assert plain.queue_of_binding_member("emails\x06\x16\x06\x16emails") == "emails"
    for key in ("emails", "emails\x06\x166", "unacked", "unacked_index", "unacked_mutex", "_kombu.binding.emails",
                "_kombu.binding_permanent.emails", "celery-task-meta-1", "celery-taskset-meta-2.j", "chord-unlock-3"):
        assert plain.is_celery_key(key), key
    for key in ("session:1", "emailsx", ":1:views.decorators.cache", "unacked2"):
        assert not plain.is_celery_key(key), key
    prefixed = Layout.from_options({"global_keyprefix": "p:", "unacked_key": "u", "priority_steps": [0, 5]})
    prefixed.queues.add("celery")
    assert prefixed.queue_keys("celery") == ["p:celery", "p:celery\x06\x165"]
    assert prefixed.is_celery_key("p:u") and prefixed.is_celery_key("p:celery")
    assert not prefixed.is_celery_key("celery") and not prefixed.is_celery_key("p:unacked")
    assert prefixed.binding_pattern == "p:_kombu.binding.*"


def test_read_commands_hold_no_write():
    assert not {c.split()[0] for c in READ_COMMANDS} & WRITE_COMMANDS
