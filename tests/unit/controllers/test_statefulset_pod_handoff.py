"""The pods a sync stamps are handed off to their create (``StatefulSetControl.handoff``) and the
sync still does exactly what it does when the client copies them.

A handed-off body becomes the server's: an in-process API server fills it in place (uid,
defaults down in the containers, status) and may keep it as the stored object, also when the
create then fails. :class:`FillingClient` does the same with every handed-off body and fills a
copy otherwise. Differential: two controls, handoff on and off, sync the same random sets (with
and without claim templates, both management policies) over the same random pods, some creates
failing after the fill-in, and then sync again with the same pods (the informer has not shown
the creates yet: the pods are stamped again from the kept prototypes). Every call with its body
at the time of the call, every Event and status must be equal, in order.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.interface import CONTROLLERREVISIONS
from apiserver.meta import FakeClock
from controllers.statefulset import utils
from controllers.statefulset.control import StatefulSetControl
from controllers.statefulset.pod_control import StatefulPodControl
from tests.unit.controllers.test_statefulset_claim_shortcut import (
    Claims,
    Recorder,
    RecordingClient,
    _set,
    random_case,
)

pytestmark = pytest.mark.anyio


class FillingClient(RecordingClient):
    """A recording client whose pod creates fill the body in as an in-process server does:
    in place when it is handed off, in a copy otherwise; the pods named in ``failing`` are
    refused after the fill-in."""

    def __init__(self, log: list[Any], failing: set[str]) -> None:
        super().__init__(log)
        self.failing = failing
        self.handed_off = 0

    async def create(self, gvr: Any, body: Obj, namespace: str = "", **kw: Any) -> Obj:
        if gvr.resource != "pods":
            return await super().create(gvr, body, namespace, **kw)
        self.log.append(("create", gvr.resource, copy.deepcopy(body)))
        handoff = kw.get("handoff", False)
        self.handed_off += handoff
        obj = body if handoff else copy.deepcopy(body)
        self.rv += 1
        md = obj["metadata"]
        md.update(uid=f"uid-{md['name']}-{self.rv}", resourceVersion=str(self.rv))
        md.setdefault("labels", {})["filled"] = "yes"
        spec = obj.setdefault("spec", {})
        spec.setdefault("restartPolicy", "Always")
        for c in spec.get("containers") or []:
            c.setdefault("imagePullPolicy", "IfNotPresent")
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("resources", {}).setdefault("requests", {})["filled"] = "1"
        for v in spec.get("volumes") or []:
            v["filled"] = True
        obj["status"] = {"phase": "Pending"}
        if md["name"] in self.failing:
            raise errors.StatusError(500, "InternalError", f"refused {md['name']}")
        return obj


async def _syncs(handoff: bool, sts: Obj, pods: list[Obj], claims: dict[str, Obj], failing: set[str]) -> Any:
    log: list[Any] = []
    client, recorder = FillingClient(log, failing), Recorder(log)
    pod_control = StatefulPodControl(client, recorder, Claims(claims))  # type: ignore[arg-type]
    ctl = StatefulSetControl(client, pod_control, recorder, FakeClock(), handoff=handoff)  # type: ignore[arg-type]
    revision = ctl._new_revision(sts, 1, 0)
    revision["metadata"].update(uid="rev-uid", resourceVersion="5")
    for _ in range(2):
        try:
            status = await ctl.update(copy.deepcopy(sts), copy.deepcopy(pods), [revision])
            log.append(("returned", status))
        except errors.StatusError as e:
            log.append(("raised", e.code, e.message))
    return [c for c in log if c[:2] != ("create", CONTROLLERREVISIONS.resource)], client.handed_off


@pytest.mark.parametrize("seed", range(6))
async def test_handing_off_stamped_pods_syncs_exactly_as_copying_them(seed: int) -> None:
    rnd = random.Random(1000 + seed)
    handed_off = failed = 0
    for _ in range(60):
        sts, pods, claims = random_case(rnd, 0.5)
        failing = {f"web-{o}" for o in range(utils.replicas_of(sts)) if rnd.random() < 0.2}
        fast, n = await _syncs(True, sts, pods, claims, failing)
        general, none = await _syncs(False, sts, pods, claims, failing)
        assert fast == general
        assert none == 0 and (n == 0 or not utils.claim_templates(sts))
        handed_off += n
        failed += sum(1 for c in fast if c[0] == "raised")
    assert handed_off > 20 and failed > 3  # both happened, often


async def test_only_stamped_pods_of_sets_without_claim_templates_are_handed_off() -> None:
    sts = utils_set = _set(random.Random(7))
    utils_set["spec"].pop("volumeClaimTemplates", None)
    utils_set["spec"]["podManagementPolicy"] = "Parallel"
    utils_set["spec"]["replicas"] = 3
    _, n = await _syncs(True, sts, [], {}, set())
    assert n == 6  # three pods stamped per sync, two syncs
    sts["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {}}]
    _, n = await _syncs(True, sts, [], {}, set())
    assert n == 0
