"""Which answers to a hostile request are wrong: any 5xx, except where kube itself answers one.

A client mistake must get a 4xx ``Status`` naming the problem; a 5xx means the server broke.
Kubernetes answers a few client-caused requests with a 5xx by design or by long-standing
behaviour; each is listed in :data:`KUBE_5XX` with the reason (gangplane answers kube's 500 for a
server-side apply body structured-merge-diff cannot key — "failed to create typed patch object" — with
a 400 instead, as kubernetes/kubernetes#139255 proposes, so it is not listed), matched on code, reason and the
start of kube's message, so that anything else with a 5xx is reported. A dropped connection or
no answer at all is always wrong, except for a request so large that the server stopped reading
it (kube's own server closes such connections too, after a 431 or 413 the reset may swallow).
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from bench.hostile.rawhttp import Response


@dataclass(frozen=True)
class Kube5xx:
    code: int
    reason: str
    message_prefix: str
    why: str


KUBE_5XX: tuple[Kube5xx, ...] = (
    Kube5xx(
        500,
        "InternalError",
        'Internal error occurred: failed calling webhook "',
        "a webhook configuration the fuzz changed to failurePolicy Fail calls a webhook no server answers: "
        "kube's webhook admission answers exactly this 500",
    ),
    Kube5xx(
        500,
        "InternalError",
        "Internal error occurred: conversion webhook for ",
        "a CRD the fuzz switched to conversion.strategy Webhook names a webhook no server answers: kube's "
        "conversion answers this 500 for objects read or written in another version",
    ),
    Kube5xx(
        504,
        "Timeout",
        "Too large resource version",
        "a read at a resourceVersion newer than the store's: kube's cacher waits for it, then answers "
        "TooLargeResourceVersionError (504 Timeout, retryAfterSeconds 1), so clients retry",
    ),
    Kube5xx(
        500,
        "InternalError",
        "Internal error occurred: This pod has more than one PodDisruptionBudget",
        "pods/eviction when two PodDisruptionBudgets select the pod: kube's eviction REST refuses "
        "with exactly this 500",
    ),
)


def expected_5xx(resp: Response) -> Kube5xx | None:
    """The :data:`KUBE_5XX` entry this 5xx answer is, if any."""
    try:
        status = orjson.loads(resp.body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(status, dict) or status.get("kind") != "Status":
        return None
    message = status.get("message")
    reason = status.get("reason") or ""
    for known in KUBE_5XX:
        if (
            resp.status == known.code
            and reason == known.reason
            and isinstance(message, str)
            and message.startswith(known.message_prefix)
        ):
            return known
    return None


def problem(resp: Response) -> str:
    """Why this answer is wrong ("" when it is a fine answer to a hostile request)."""
    if resp.failure == "dropped":
        return "the connection was dropped without an answer"
    if resp.failure == "stalled":
        return "no answer within the stall guard"
    if resp.failure == "refused":
        return ""  # a request too large to read whole; readiness is checked after the run
    if resp.status >= 500 and expected_5xx(resp) is None:
        return f"{resp.status}: {resp.body[:600].decode('utf-8', 'replace')}"
    if resp.status < 100:
        return f"not an HTTP status: {resp.status}"
    for event in _error_events(resp.body):
        code = (event.get("object") or {}).get("code")
        if isinstance(code, int) and code >= 500:
            return f"a watch sent an ERROR event with code {code}: {orjson.dumps(event)[:600].decode()}"
    return ""


def _error_events(body: bytes) -> list[dict]:
    """The ``ERROR`` events of a watch stream read to its end (none for other bodies)."""
    if b'"type":"ERROR"' not in body:
        return []
    out = []
    for line in body.splitlines():
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(event, dict) and event.get("type") == "ERROR":
            out.append(event)
    return out
