"""``/livez``, ``/readyz`` and ``/healthz``: named checks, answered in kube's format.

Shaped like apiserver's ``pkg/server/healthz``: each endpoint runs its checks in order;
``?verbose`` lists them (``[+]etcd ok``), ``?exclude=NAME`` skips one, a failing check makes the
answer a 500 that lists every check (``[-]etcd failed: reason withheld``) and ends with
``readyz check failed``, and ``/readyz/etcd`` runs one check alone.

The checks are the ones gangplane has a truthful answer for: ``ping``; ``etcd``, the storage's own
health (a quorum read for etcd, a failed commit for SQLite); ``etcd-readiness`` on ``/readyz``; and
``shutdown``, which fails ``/readyz`` once the server is stopping so load balancers stop sending to
it, as kube's does during its shutdown delay.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

log = logging.getLogger("gangplane.apiserver")

#: a check: None when healthy, else why not
Check = Callable[[], Awaitable[str | None]]


@dataclass(frozen=True)
class Answer:
    """A health endpoint's HTTP status and body text."""

    status: int
    text: str


async def _ping() -> str | None:
    return None


class HealthChecks:
    """The checks of each health endpoint, over the storage's and the server's state."""

    def __init__(self, storage_check: Check, shutting_down: Callable[[], bool]) -> None:
        async def shutdown() -> str | None:
            return "process is shutting down" if shutting_down() else None

        common: list[tuple[str, Check]] = [("ping", _ping), ("etcd", storage_check)]
        self.endpoints: dict[str, list[tuple[str, Check]]] = {
            "livez": common,
            "healthz": common,
            "readyz": [*common, ("etcd-readiness", storage_check), ("shutdown", shutdown)],
        }

    @staticmethod
    def parse(path: str) -> tuple[str, str] | None:
        """``/readyz/etcd`` -> ("readyz", "etcd"); ``/livez`` -> ("livez", ""); None otherwise."""
        parts = path.strip("/").split("/", 1)
        if parts[0] not in ("livez", "readyz", "healthz"):
            return None
        return parts[0], parts[1] if len(parts) > 1 else ""

    async def answer(self, endpoint: str, check: str, verbose: bool, exclude: list[str]) -> Answer | None:
        """The answer to ``/<endpoint>[/<check>]``; None for a check that does not exist (404)."""
        checks = self.endpoints[endpoint]
        if check:
            for name, run in checks:
                if name == check:
                    reason = await run()
                    if reason is None:
                        return Answer(200, "ok")
                    return Answer(500, f"internal server error: {reason}\n")
            return None
        excluded = {e for e in exclude if e}
        lines: list[str] = []
        reasons: list[str] = []
        for name, run in checks:
            if name in excluded:
                excluded.discard(name)
                lines.append(f"[+]{name} excluded: ok\n")
                continue
            reason = await run()
            if reason is None:
                lines.append(f"[+]{name} ok\n")
            else:
                lines.append(f"[-]{name} failed: reason withheld\n")
                reasons.append(f"[-]{name} failed: {reason}")
        if excluded:
            quoted = ", ".join(f'"{e}"' for e in sorted(excluded))
            lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}\n")
        if reasons:
            log.warning("%s check failed: %s", endpoint, "; ".join(reasons))  # the reasons, withheld above
            return Answer(500, "".join(lines) + f"{endpoint} check failed\n")
        if not verbose:
            return Answer(200, "ok")
        return Answer(200, "".join(lines) + f"{endpoint} check passed\n")


__all__ = ["Answer", "HealthChecks"]
