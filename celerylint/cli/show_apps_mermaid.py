"""``--show-apps --output-format mermaid``: the apps, the worker and beat
processes that start them (with their replicas), the queues each worker
consumes, the queues tasks are routed to, and the brokers and result
backends, as a Mermaid flowchart (GitHub and GitLab draw it in Markdown)."""

from __future__ import annotations

import re
from typing import Any

_UNSAFE = re.compile(r'["<>{}\[\]|`]')


def _label(text: str) -> str:
    return _UNSAFE.sub("'", text)


class _Ids:
    def __init__(self) -> None:
        self.ids: dict[tuple[str, str], str] = {}

    def __call__(self, kind: str, key: str) -> tuple[str, bool]:
        """The node's id, and whether it is new."""
        if (kind, key) in self.ids:
            return self.ids[(kind, key)], False
        self.ids[(kind, key)] = f"{kind}{len(self.ids)}"
        return self.ids[(kind, key)], True


def as_mermaid(described: dict[str, Any]) -> str:
    lines = ["flowchart LR"]
    ids = _Ids()
    for app in described["apps"]:
        app_id, new = ids("app", f"{app['path']}:{app['line']}:{app.get('profile') and app['profile']['name']}")
        if not new:
            continue
        profile = f" ({app['profile']['name']})" if app.get("profile") else ""
        lines.append(f'    {app_id}["app {_label(app["variable"])}{profile}<br/>{_label(app["path"])}"]')
        for setting, shape in (("broker_url", "broker"), ("result_backend", "backend")):
            s = app["settings"][setting]
            if s["state"] == "unknown" or not s["value"]:
                continue
            node, new = ids(shape, str(s["value"]))
            if new:
                lines.append(f'    {node}[("{shape} {_label(str(s["value"]))}")]')
            lines.append(f"    {app_id} -->|{'sends to' if shape == 'broker' else 'stores results in'}| {node}")
        for queue in app["routed_queues"]:
            node, new = ids("queue", queue)
            if new:
                lines.append(f'    {node}{{{{"queue {_label(queue)}"}}}}')
            lines.append(f"    {app_id} -.->|routes to| {node}")
        for p in app["processes"]:
            replicas = "?" if p["replicas"] is None else str(p["replicas"])
            node, new = ids("proc", f"{p['path']}:{p['line']}:{p['name']}")
            if new:
                lines.append(f'    {node}(["{p["role"]} {_label(p["name"])} x{replicas}<br/>{_label(p["path"])}:{p["line"]}"])')
            lines.append(f"    {node} -->|runs| {app_id}")
            queues = p["options"].get("queues")
            if p["role"] != "beat" and queues and queues != "?":
                for queue in (q.strip() for q in queues.split(",") if q.strip()):
                    qnode, qnew = ids("queue", queue)
                    if qnew:
                        lines.append(f'    {qnode}{{{{"queue {_label(queue)}"}}}}')
                    lines.append(f"    {qnode} -->|consumed by| {node}")
    if len(lines) == 1:
        lines.append('    none["No Celery app found"]')
    return "\n".join(lines) + "\n"
