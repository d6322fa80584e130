"""``CONFIG SET maxmemory-policy`` in code, for CL106: the ``config_set``
fact, with the host of the client it is sent through when it is made here."""

from __future__ import annotations

import libcst as cst

from ..api.context import FileContext
from ..domain.celeryconf.redis_conf import parse_redis_url
from ..domain.celeryconf.values import setting_value
from ..domain.clients import REDIS_FACTORIES


def string(node: cst.BaseExpression, ctx: FileContext) -> str | None:
    value = setting_value(node, ctx)
    return value if isinstance(value, str) else None


class RedisConfigSet:
    ctx: FileContext

    def _config_set(self, node: cst.Call, method: str) -> None:
        args = [a for a in node.args if a.keyword is None and not a.star]
        values = [string(a.value, self.ctx) for a in args]
        if method == "execute_command":
            if len(values) >= 4 and (values[0] or "").upper() == "CONFIG" and (values[1] or "").upper() == "SET":
                args, values = args[2:], values[2:]
            else:
                return
        if len(values) >= 2 and (values[0] or "").lower() == "maxmemory-policy" and values[1]:
            self.ctx.fact("config_set", args[1].value, policy=values[1], host=self._client_host(node.func.value))

    def _client_host(self, node: cst.BaseExpression) -> str | None:
        """The host of a Redis client made here: ``Redis(host=...)``,
        ``Redis()`` (localhost) or ``from_url("redis://...")``."""
        if isinstance(node, cst.Name):
            node = self.ctx.lookup(node.value)
        name = (self.ctx.imported_name(node.func) or "") if isinstance(node, cst.Call) else ""
        if name not in REDIS_FACTORIES:  # a client from a project helper: its host is unknown here
            return None
        if name.endswith("from_url"):
            url = string(node.args[0].value, self.ctx) if node.args else None
            address = parse_redis_url(url) if url else None
            return address.host if address else None
        for a in node.args:
            if a.keyword is not None and a.keyword.value == "host":
                host = string(a.value, self.ctx)
                return host.lower().replace("127.0.0.1", "localhost") if host else None
            if a.keyword is None or a.star:
                return None
        return "localhost"
