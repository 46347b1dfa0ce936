"""A pod the StatefulSet controller creates is read from its create response once: the sync its
add event causes takes those facts for the informer's copy of that version (controllers/statefulset/podfacts.py)."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import STATEFULSETS
from apiserver.meta import key_of
from controllers.statefulset.podfacts import pod_facts
from controllers.testing import observed
from gangplane.controlplane import ControlPlane
from tests.integration.kep6277_support import (
    GANG,
    NS,
    settled,
    start_statefulset_controller,
    sts_manifest,
    wait_pods,
)

pytestmark = pytest.mark.anyio


async def test_the_sync_after_the_creating_one_uses_the_created_pods_facts(
    cp: ControlPlane, client: Any
) -> None:
    ctrl = await start_statefulset_controller(cp)
    ctrl.quiet_shortcut = False  # the full sync's reading (the shortcut reads no facts at all)
    await client.create(STATEFULSETS, sts_manifest("web", 3, GANG), NS)
    pods = await wait_pods(client, "web", 3)
    for p in pods:
        rv = p["metadata"]["resourceVersion"]
        await observed(
            ctrl.pods,
            key_of(p),
            lambda o, rv=rv: o is not None and int(o["metadata"]["resourceVersion"]) >= int(rv),
        )
    await settled(ctrl, client, "web")
    entries = ctrl.facts._sets[f"{NS}/web"]
    # each seed was taken by the sync that saw its pod in the informer
    assert entries.seeds == {} and entries.seed_hits == 3
    cached = ctrl.pods.list(NS)
    assert len(cached) == 3
    for p in cached:
        _, facts, selected = entries.by_id[id(p)]
        assert facts == pod_facts(p) and selected
    sts = await client.get(STATEFULSETS, "web", NS)
    assert sts["status"]["replicas"] == 3 and sts["status"]["currentReplicas"] == 3
