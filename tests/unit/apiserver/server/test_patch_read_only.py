"""``patch(..., read_only=True)`` on the in-process client answers with the stored object's shared
dict (what the informers receive) and otherwise stores, answers and refuses exactly what a patch
with a private answer does: the same random patches (merge, strategic, JSON; on a PodGroup's
``/status`` and on the object; some refused) run on two fresh API servers, one asking for
read-only answers with the mutation detector on."""

from __future__ import annotations

import asyncio
import random
import re
from typing import Any

import orjson
import pytest

from apiserver import errors
from apiserver.client.interface import PODGROUPS
from apiserver.meta import FakeClock
from apiserver.server.instance import build_api
from apiserver.server.localclient import LocalClient, ReadOnlyObjects

NS = "default"
SMP = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_RV = re.compile(rb'"resourceVersion":"[0-9]+"')


def _normal(raw: bytes) -> bytes:
    """The bytes without what differs between two servers (uids, resourceVersions)."""
    return _RV.sub(b'"resourceVersion":"<rv>"', _UUID.sub(b"<uid>", raw))


def _condition(rnd: random.Random) -> dict[str, Any]:
    return {
        "type": rnd.choice(["PodGroupInitiallyScheduled", "DisruptionTarget"]),
        "status": rnd.choice(["True", "False", "Maybe"]),  # "Maybe" is refused (422)
        "reason": rnd.choice(["Scheduled", "Unschedulable"]),
        "message": rnd.choice(["", "m"]),
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }


def _patch(rnd: random.Random) -> tuple[str, Any, str]:
    kind = rnd.randrange(5)
    if kind == 0:
        return SMP, {"status": {"conditions": [_condition(rnd)]}}, "status"
    if kind == 1:
        return MERGE, {"status": {"conditions": [_condition(rnd)]}}, "status"
    if kind == 2:
        return (
            JSON_PATCH,
            [{"op": "add", "path": "/metadata/labels", "value": {"k": rnd.choice(["a", "-"])}}],
            "",
        )
    if kind == 3:
        return MERGE, {"metadata": {"resourceVersion": "1"}, "status": {}}, "status"  # stale: 409
    return SMP, {"spec": {"schedulingPolicy": {"gang": {"minCount": rnd.randint(0, 3)}}}}, ""


async def _run(seed: int, read_only: bool) -> list[Any]:
    api = build_api(clock=FakeClock())
    client = LocalClient(api, read_only_objects=ReadOnlyObjects(enabled=True))
    rnd = random.Random(seed)
    log: list[Any] = []
    for i in range(6):
        name = f"g{i}"
        await client.create(
            PODGROUPS,
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": name},
                "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
            },
            NS,
            field_manager="ctl",
        )
        for _ in range(8):
            api.clock.step(1)
            patch_type, body, sub = _patch(rnd)
            try:
                ans = await client.patch(
                    PODGROUPS,
                    name,
                    body,
                    NS,
                    patch_type=patch_type,
                    subresource=sub,
                    field_manager="kube-scheduler",
                    read_only=read_only,
                )
            except errors.StatusError as e:
                log.append(("error", e.code, e.message.replace(name, "<name>")))
                continue
            rec = api.store.get((PODGROUPS.group, PODGROUPS.resource), (NS, name))
            assert rec is not None
            if read_only:
                assert ans is rec.shared()
            else:
                assert ans is not rec.shared()
            assert ans == orjson.loads(rec.raw)
            log.append(("ok", _normal(orjson.dumps(ans)), _normal(rec.raw)))
    client.read_only_objects.verify()
    return log


@pytest.mark.parametrize("seed", range(4))
def test_read_only_patches_store_answer_and_refuse_as_private_ones(seed: int) -> None:
    shared = asyncio.run(_run(seed, True))
    private = asyncio.run(_run(seed, False))
    assert shared == private
    # not vacuous: writes stored and refused
    assert sum(1 for e in shared if e[0] == "ok") > 10
    assert {e[1] for e in shared if e[0] == "error"} & {409, 422}
