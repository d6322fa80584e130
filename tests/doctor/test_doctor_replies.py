"""What the doctor makes of replies the real servers of the other tests
cannot send: a RabbitMQ that honours per-queue consumer timeouts (3.11.15
and later; the tests' Debian server is 3.10). These call the checks with
replies shaped as the management API documents them: NOT a real server."""

from __future__ import annotations

from celerylint.doctor.checks import Report
from celerylint.doctor.rabbit_checks import consumer_timeouts

STATIC = {"task_acks_late": (True, "proj.py:4"), "task_time_limit": (7200, "proj.py:5")}


def test_a_per_queue_consumer_timeout_shorter_than_the_time_limit():
    queues = [{"name": "reports", "arguments": {"x-consumer-timeout": 600_000}},
              {"name": "long", "effective_policy_definition": {"consumer-timeout": 4 * 3600 * 1000}},
              {"name": "plain", "arguments": {}}]
    report = Report()
    consumer_timeouts(queues, (3, 13, 7), STATIC, report)
    [(code, message, severity)] = report.findings
    assert (code, severity) == ("CL159", None)
    assert message.startswith("queue `reports` has a consumer timeout of 10 min (its arguments or policy, read "
                              "from /api/queues) but the project's `task_time_limit` (proj.py:5, with "
                              "`task_acks_late`) is 2 h")


def test_per_queue_timeouts_on_a_server_that_ignores_them_are_a_notice():
    report = Report()
    consumer_timeouts([{"name": "reports", "arguments": {"x-consumer-timeout": 600_000}}], (3, 10, 8), STATIC, report)
    assert [f[0] for f in report.findings] == ["CL159"]  # the node-wide default note, not the queue's
    assert "which RabbitMQ 3.10.8 ignores" in report.notices[0]


def test_without_acks_late_the_time_limit_is_not_compared():
    report = Report()
    consumer_timeouts([{"name": "reports", "arguments": {"x-consumer-timeout": 600_000}}], (3, 13, 7),
                      {**STATIC, "task_acks_late": (False, "Celery's default")}, report)
    assert report.findings == []


def test_help_says_workers_publishes(cli):
    helped = cli("doctor", "--help")
    assert helped.returncode == 0
    text = " ".join(helped.stdout.split())
    assert "PUBLISHES Celery remote-control messages" in text and "--management-url" in text
