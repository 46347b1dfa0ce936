"""The scheduler's PodGroup condition write is upstream's ``PatchPodGroupStatus``: a two-way
strategic merge patch of ``/status`` (conditions merged by ``type``), without a resourceVersion.

The patch builder is checked against the server's strategic merge on random condition lists
(the patch must turn the status read into the status wanted, and be empty exactly when they are
equal), for upstream's exact wire shapes, and end to end on an in-process API where another
writer added a condition the scheduler has not seen yet.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import PODGROUPS
from apiserver.openapi import schema
from apiserver.patch.strategic import strategic_merge
from scheduler.podgroup_status import (
    POD_GROUP_INITIALLY_SCHEDULED,
    STRATEGIC_MERGE_PATCH,
    desired_conditions,
    status_patch,
    update_pod_group_condition,
)

T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"
TYPES = (POD_GROUP_INITIALLY_SCHEDULED, "DisruptionTarget", "Example")


def _cond(ctype: str, status: str = "False", reason: str = "Unschedulable", message: str = "m") -> Obj:
    return {
        "type": ctype,
        "status": status,
        "reason": reason,
        "message": message,
        "observedGeneration": 1,
        "lastTransitionTime": T0,
    }


def _merged(old_status: Obj | None, patch: Obj) -> list[Obj]:
    node = schema.for_gvk("scheduling.k8s.io", "v1beta1", "PodGroup")
    original: Obj = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {}}
    if old_status is not None:
        original["status"] = copy.deepcopy(old_status)
    out = strategic_merge(original, copy.deepcopy(patch), node)
    return list((out.get("status") or {}).get("conditions") or [])


def test_the_first_condition_is_sent_whole_as_go_sends_a_key_the_original_lacks() -> None:
    cond = _cond(POD_GROUP_INITIALLY_SCHEDULED, "True", "Scheduled", "")
    assert status_patch({}, [cond]) == {"status": {"conditions": [cond]}}
    assert status_patch(None, [cond]) == {"status": {"conditions": [cond]}}
    assert status_patch({"conditions": []}, [cond]) == {"status": {"conditions": [cond]}}


def test_a_changed_condition_sends_its_changed_fields_and_type_with_the_element_order() -> None:
    other = _cond("DisruptionTarget", "True", "PreemptionByScheduler", "x")
    old = _cond(POD_GROUP_INITIALLY_SCHEDULED)
    new = {**old, "status": "True", "reason": "Scheduled", "message": "", "lastTransitionTime": T1}
    assert status_patch({"conditions": [other, old]}, [other, new]) == {
        "status": {
            "$setElementOrder/conditions": [
                {"type": "DisruptionTarget"},
                {"type": POD_GROUP_INITIALLY_SCHEDULED},
            ],
            "conditions": [
                {
                    "status": "True",
                    "reason": "Scheduled",
                    "message": "",
                    "lastTransitionTime": T1,
                    "type": POD_GROUP_INITIALLY_SCHEDULED,
                }
            ],
        }
    }
    assert status_patch({"conditions": [other, old]}, [other, old]) is None


def _random_condition(rng: random.Random, ctype: str) -> Obj:
    c: Obj = {"type": ctype}
    for key, values in (
        ("status", ("True", "False", "Unknown")),
        ("reason", ("Scheduled", "Unschedulable", "SchedulerError")),
        ("message", ("", "m", "minCount (3) cannot be satisfied")),
        ("observedGeneration", (1, 2)),
        ("lastTransitionTime", (T0, T1)),
    ):
        if rng.random() < 0.9:
            c[key] = rng.choice(values)
    return c


def _mutated(rng: random.Random, conds: list[Obj]) -> list[Obj]:
    out = [dict(c) for c in conds]
    for _ in range(rng.randint(0, 3)):
        op = rng.randrange(4)
        if op == 0 and out:  # change or drop fields of one condition
            c = rng.choice(out)
            fresh = _random_condition(rng, c["type"])
            c.clear()
            c.update(fresh)
        elif op == 1:  # add a type not present yet
            free = [t for t in TYPES if t not in {c["type"] for c in out}]
            if free:
                out.insert(rng.randint(0, len(out)), _random_condition(rng, rng.choice(free)))
        elif op == 2 and out:  # remove one
            out.pop(rng.randrange(len(out)))
        elif op == 3:  # reorder
            rng.shuffle(out)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_the_patch_turns_the_status_read_into_the_status_wanted_on_random_lists(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(150):
        types = rng.sample(TYPES, rng.randint(0, len(TYPES)))
        old = [_random_condition(rng, t) for t in types]
        old_status: Obj = {"conditions": old} if old or rng.random() < 0.5 else {}
        if rng.random() < 0.5:
            pg: Obj = {"metadata": {"generation": rng.randint(1, 3)}, "status": copy.deepcopy(old_status)}
            status, reason = rng.choice((("True", "Scheduled"), ("False", "Unschedulable")))
            new = desired_conditions(pg, status, reason, rng.choice(("", "m")), T1)
            if new is None:
                continue
        else:
            new = _mutated(rng, old)
        patch = status_patch(old_status, new)
        if patch is None:
            assert new == old
            continue
        assert new != old or [c["type"] for c in new] != [c["type"] for c in old]
        assert _merged(old_status, patch) == new, (old_status, new, patch)


class _Recording:
    """The real in-process client, recording each patch the scheduler sends."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.patches: list[tuple[Any, dict[str, Any]]] = []

    async def patch(self, resource: Any, name: str, body: Any, ns: str, **kw: Any) -> Obj:
        self.patches.append((copy.deepcopy(body), kw))
        return await self.client.patch(resource, name, body, ns, **kw)


@pytest.mark.anyio
async def test_a_condition_another_writer_added_meanwhile_is_kept_and_no_resource_version_is_sent() -> None:
    from gangplane.controlplane import ControlPlane

    plane = ControlPlane()
    try:
        c = plane.client("kube-scheduler")
        read = await c.create(
            PODGROUPS,
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": "g"},
                "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
            },
            "default",
        )
        other = _cond("DisruptionTarget", "True", "PreemptionByScheduler", "x")
        await c.patch(
            PODGROUPS,
            "g",
            {"status": {"conditions": [other]}},
            "default",
            patch_type=STRATEGIC_MERGE_PATCH,
            subresource="status",
        )
        rec = _Recording(c)
        # the scheduler still holds the PodGroup as first read (no DisruptionTarget yet)
        updated = await update_pod_group_condition(rec, read, "True", "Scheduled", "", T1)
        assert updated is not None
        # the scheduler read no conditions, so it sends its list whole (no order directive);
        # apimachinery's merge puts the patch's new item before the server's own
        assert [(k["type"], k["status"]) for k in updated["status"]["conditions"]] == [
            (POD_GROUP_INITIALLY_SCHEDULED, "True"),
            ("DisruptionTarget", "True"),
        ]
        ((body, kw),) = rec.patches
        assert kw == {"patch_type": STRATEGIC_MERGE_PATCH, "subresource": "status", "read_only": True}
        assert "metadata" not in body
        assert body["status"]["conditions"][0] == {
            "type": POD_GROUP_INITIALLY_SCHEDULED,
            "status": "True",
            "reason": "Scheduled",
            "message": "",
            "observedGeneration": 1,
            "lastTransitionTime": T1,
        }
        stored = await c.get(PODGROUPS, "g", "default")
        assert stored["status"] == updated["status"]
        # nothing changes: no write at all
        assert await update_pod_group_condition(rec, stored, "True", "Scheduled", "", T1) is None
        assert len(rec.patches) == 1
    finally:
        await plane.stop()
