"""What the doctor says when a broker cannot be checked (fully): one
error line saying what happened, exit 2, and no summary that counts the
broker as checked; a partial check says which checks ran."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time

import pytest

from doctor_support import FakeRedis
from test_doctor import REDIS_SERVER, doctor, free_port, redis, server, start_server  # noqa: F401 - fixtures

pytestmark = pytest.mark.skipif(redis is None, reason="redis-py is not installed (pip install -e '.[test]')")


def one_error(done) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == "", done.stdout  # no "0 findings on 1 broker checked"
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    return errors[0]


def test_wrong_password_is_an_authentication_error(start_server, tmp_path):
    s = start_server("--requirepass", "right-pw")
    line = one_error(doctor(tmp_path, "--broker-url", f"redis://:wr0ng-pw@127.0.0.1:{s.port}/0"))
    assert f"redis://:****@127.0.0.1:{s.port}/0: authentication failed" in line
    assert "check the user and password of the broker URL" in line and "nothing was checked" in line
    assert "wr0ng" not in line


def test_rediss_against_a_plain_server_says_so_at_once(server, tmp_path):
    done = doctor(tmp_path, "--broker-url", f"rediss://127.0.0.1:{server.port}/0", "--timeout", "10")
    line = one_error(done)
    assert "the server answers plain Redis there, not TLS: use redis://" in line
    assert done.seconds < 8, done.seconds  # not the whole --timeout


@pytest.mark.skipif(REDIS_SERVER is None or shutil.which("openssl") is None, reason="needs redis-server and openssl")
def test_plain_url_against_a_tls_server_hints_rediss(tmp_path):
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem", "-out",
                    "cert.pem", "-days", "1", "-subj", "/CN=127.0.0.1"], cwd=tmp_path, check=True,
                   capture_output=True, timeout=60)
    port = free_port()
    proc = subprocess.Popen([REDIS_SERVER, "--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1",
                             "--tls-cert-file", "cert.pem", "--tls-key-file", "key.pem", "--tls-auth-clients", "no",
                             "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
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
        line = one_error(doctor(tmp_path, "--broker-url", f"redis://127.0.0.1:{port}/0", "--timeout", "5"))
        assert "the server expects TLS there: use rediss://" in line, line
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_a_partial_check_says_which_checks_ran(tmp_path):
    fake = FakeRedis({"SCAN": b":5\r\n"})  # an integer where SCAN's cursor and keys belong
    try:
        done = doctor(tmp_path, "--broker-url", fake.url(), "--timeout", "5")
    finally:
        fake.close()
    line = one_error(done)
    assert "unexpected reply" in line
    assert line.endswith("checks that ran: eviction policy, memory; not run: keyspace, unacked, queue lengths"), line


def test_volatile_policy_says_what_is_evicted_and_what_stays(server, tmp_path):
    server.admin.config_set("maxmemory-policy", "volatile-lru")
    done = doctor(tmp_path, "--broker-url", server.url(), "--format", "json")
    [policy] = [f for f in json.loads(done.stdout) if f["code"] == "CL150"]
    message = policy["message"]
    assert "evicts only keys that have a TTL, so kombu's queues and unacked messages (no TTL) stay" in message
    assert "result keys" in message and "OOM" in message
    assert "vanish without an error" not in message  # the allkeys-* wording
