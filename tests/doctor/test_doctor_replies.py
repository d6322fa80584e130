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
    [(code, message, severity), (_, node, note)] = report.findings
    assert (code, severity) == ("CL159", None)
    assert message.startswith("queue `reports` has a consumer timeout of 10 min (its arguments or policy, read "
                              "from /api/queues) but the project's `task_time_limit` (proj.py:5, with "
                              "`task_acks_late`) is 2 h")
    # `plain` has none of its own: the node's value applies, which the management API does not show
    assert note == "note" and "longer than RabbitMQ's default `consumer_timeout` of 30 min" in node


def test_the_node_value_the_project_deploys_is_compared():
    report = Report()
    consumer_timeouts([{"name": "celery", "arguments": {}}], (3, 10, 8),
                      {**STATIC, "consumer_timeout": (3_600_000, "rabbitmq/rabbitmq.conf:2")}, report)
    [(code, message, severity)] = report.findings
    assert (code, severity) == ("CL159", None)
    assert message.startswith("RabbitMQ's `consumer_timeout` is 60 min (rabbitmq/rabbitmq.conf:2, the node's value "
                              "as the project deploys it) but the project's `task_time_limit`")
    off = Report()  # advanced.config's `undefined`: no timeout at all
    consumer_timeouts([{"name": "celery"}], (3, 10, 8), {**STATIC, "consumer_timeout": (None, "advanced.config:1")},
                      off)
    assert off.findings == []


def test_a_countdown_counts_where_every_queue_has_the_node_timeout():
    countdown = {**STATIC, "longest_unacked": (3 * 86400, "a `countdown` of 3 d at proj.py:9")}
    report = Report()
    consumer_timeouts([{"name": "celery"}, {"name": "emails"}], (3, 10, 8), countdown, report)
    [(_, message, severity)] = report.findings
    assert severity == "note" and message.startswith(
        "the longest the project holds a message unacknowledged (a `countdown` of 3 d at proj.py:9) is 3 d")
    # one queue with a timeout of its own (honoured by 3.13): the countdown's queue is not known, so only the
    # time limit, which a task of any queue may run to, is compared
    mixed = Report()
    consumer_timeouts([{"name": "celery"}, {"name": "emails", "arguments": {"x-consumer-timeout": 4 * 86400_000}}],
                      (3, 13, 7), countdown, mixed)
    [(_, message, _)] = mixed.findings
    assert message.startswith("the project's `task_time_limit` (proj.py:5, with `task_acks_late`) is 2 h")


def test_from_4_3_classic_queues_have_no_consumer_timeout():
    report = Report()
    consumer_timeouts([{"name": "celery", "type": "classic", "arguments": {"x-consumer-timeout": 60_000}}],
                      (4, 3, 7), STATIC, report)
    assert report.findings == []
    quorum = Report()
    consumer_timeouts([{"name": "celery", "type": "quorum", "arguments": {}}], (4, 3, 7), STATIC, quorum)
    assert [(f[0], f[2]) for f in quorum.findings] == [("CL159", "note")]


def held(worker_queues, *etas_ahead, exchange="", routing_key="celery"):
    """``inspect`` replies of one worker holding ETA tasks ``etas_ahead`` s ahead of NOW."""
    from datetime import datetime, timezone

    from celerylint.doctor.workers import Workers

    ws = Workers()
    ws.replies["w1@host"] = {
        "scheduled": [{"eta": datetime.fromtimestamp(NOW + s, timezone.utc).isoformat(),
                       "request": {"name": "proj.later", "delivery_info": {"exchange": exchange,
                                                                           "routing_key": routing_key}}}
                      for s in etas_ahead],
        "active_queues": [{"name": n, "exchange": {"name": n}, "routing_key": n} for n in worker_queues]}
    return ws


NOW = 1_800_000_000.0


def cl156(ws, rabbit, static=None):
    from celerylint.doctor.worker_checks import held_etas

    report = Report()
    held_etas(ws, report, now=NOW, rabbit=rabbit, static=static)
    [(code, message, severity)] = report.findings
    assert code == "CL156"
    return message, severity


def test_a_held_eta_past_a_per_queue_consumer_timeout():
    queues = {"reports": {"name": "reports", "arguments": {"x-consumer-timeout": 600_000}},
              "celery": {"name": "celery", "arguments": {}}}
    message, severity = cl156(held(["celery", "reports"], 1200, exchange="reports", routing_key="reports"),
                              ((3, 13, 7), queues))
    assert severity == "warning"  # 20 min ahead: a note by CL156's hour, a warning past a timeout read from the queue
    assert ("it is due after the consumer timeout of queue `reports`, 10 min (queue `reports`'s "
            "`x-consumer-timeout` argument or `consumer-timeout` policy, read from /api/queues)") in message
    # the same server before 3.11.15 ignores the argument: the node's (assumed) default of 30 min applies
    message, severity = cl156(held(["celery", "reports"], 1200, exchange="reports", routing_key="reports"),
                              ((3, 10, 8), queues))
    assert severity == "note" and "due after the consumer timeout" not in message


def test_a_held_eta_past_the_assumed_default_stays_a_note_below_an_hour():
    message, severity = cl156(held(["celery"], 2700), ((3, 12, 0), {"celery": {"name": "celery"}}))
    assert severity == "note"
    assert "30 min (RabbitMQ's default; the node's own value is not readable through the management API)" in message
    message, severity = cl156(held(["celery"], 2700), ((3, 12, 0), {"celery": {"name": "celery"}}),
                              {"consumer_timeout": (600_000, "rabbitmq.conf:1")})
    assert severity == "warning" and "10 min (rabbitmq.conf:1)" in message


def test_an_unsure_origin_takes_the_longest_timeout_and_classic_queues_on_4_3_have_none():
    queues = {"a": {"name": "a", "arguments": {"x-consumer-timeout": 600_000}},
              "b": {"name": "b", "arguments": {"x-consumer-timeout": 7_200_000}}}
    ws = held(["a", "b"], 3 * 3600, exchange="elsewhere", routing_key="x")  # matches neither: either queue
    message, _ = cl156(ws, ((3, 13, 7), queues))
    assert "the consumer timeout of queues `a`, `b`, 2 h" in message
    message, _ = cl156(held(["a", "b"], 3600, exchange="elsewhere", routing_key="x"), ((3, 13, 7), queues))
    assert "due after the consumer timeout" not in message  # within b's 2 h
    message, _ = cl156(held(["celery"], 3 * 3600), ((4, 3, 0), {"celery": {"name": "celery", "type": "classic"}}))
    assert "due after the consumer timeout" not in message
    message, _ = cl156(held(["celery"], 3 * 3600), ((4, 3, 0), {"celery": {"name": "celery", "type": "quorum"}}))
    assert "30 min (RabbitMQ's default; the node's own value is not readable through the management API): " \
           "RabbitMQ 4.3 and later cancel the worker's consumer (`basic.cancel`) or close its channel" in message


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
