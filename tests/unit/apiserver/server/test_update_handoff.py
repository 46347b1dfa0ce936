"""Handed-off updates and read-only answers store, answer and refuse exactly what copied ones do.

The in-process client's ``update``/``update_status`` with ``handoff=True`` copy only what the
write may modify and pass the live object's own sections through (``registry.handoff``), and
with ``read_only=True`` answer with the stored object's shared dict. The same random sequences
of writes run on two fresh API servers: once as the node agent sends them (bodies built around
the store's shared dicts, handed off, answers read only), once as any other caller does (a body
of its own, copied, and a private answer). Every answer, error and stored byte must be the same.
On the first server, after every write, the shared dicts the bodies were built from (and the
bodies themselves) must be exactly as before: same content, and every container the same object
(nothing replaced in place either) — the write path never modifies what it was handed.
"""

from __future__ import annotations

import asyncio
import copy
import random
import re
from types import SimpleNamespace
from typing import Any, cast

import orjson
import pytest

from apiserver import errors
from apiserver.client.interface import LEASES, PODS, STATEFULSETS
from apiserver.meta import FakeClock
from apiserver.server.instance import build_api
from apiserver.server.localclient import LocalClient, ReadOnlyObjects
from controllers.nodeagent.agent import status_write_body
from controllers.testing import statefulset

from ..patch.test_tracker import _mutate, _random_pod
from ..registry.test_update_path_fastpaths import _Log, _node_lease, _running, _status

NS = "default"
#: uids differ between the two servers by design (a precondition's error names the stored one)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _containers(v: Any, out: list[int]) -> list[int]:
    """The ids of every dict and list in ``v``, depth first."""
    if isinstance(v, dict):
        out.append(id(v))
        for x in v.values():
            _containers(x, out)
    elif isinstance(v, list):
        out.append(id(v))
        for x in v:
            _containers(x, out)
    return out


def _snapshot(v: Any) -> tuple[str, list[int]]:
    return repr(v), _containers(v, [])  # repr: bodies may hold what JSON cannot


class _Writer:
    """One server, written to as the node agent writes (``agent``) or as any caller does."""

    def __init__(self, agent: bool, plain: bool = False) -> None:
        self.agent = agent
        #: the body sent as built (around the shared dicts), neither handed off nor copied by
        #: the caller: the client's own copy must leave the caller free to change it afterwards
        self.plain = plain
        self.api = build_api(clock=FakeClock())
        # the mutation detector on: every read-only answer must still match its bytes at the end
        self.client = LocalClient(self.api, read_only_objects=ReadOnlyObjects(enabled=True))
        self.log = _Log()
        self.checked = 0

    def live(self, plural: str, name: str, group: str = "") -> Any:
        return self.api.peek(group, plural, NS, name)  # the shared dict, as an informer holds it

    async def write(self, verb: str, gvr: Any, body: Any, *shared: Any) -> None:
        self.api.clock.step(1)
        before = [_snapshot(s) for s in (*shared, body)]
        try:
            if self.agent:
                ans = await getattr(self.client, verb)(gvr, body, NS, handoff=True, read_only=True)
            elif self.plain:
                ans = await getattr(self.client, verb)(gvr, body, NS)
            else:
                ans = await getattr(self.client, verb)(gvr, copy.deepcopy(body), NS)
        except errors.StatusError as e:
            self.log.append(("error", e.code, _UUID.sub("<uid>", e.message)))
            ans = None
        except TypeError as e:  # what the JSON round trip of the body refuses
            self.log.append(("refused", type(e).__name__, str(e)))
            ans = None
        else:
            self.log.append(("ok", self.log.normal(ans)))
        if self.agent or self.plain:
            after = [_snapshot(s) for s in (*shared, body)]
            assert after == before, "the write modified an object it was handed"
            self.checked += 1
        if self.plain:
            _scribble(body, shared)  # the caller's own parts are its own again
        name = body["metadata"]["name"] if isinstance(body.get("metadata"), dict) else ""
        rec = self.api.store.get((gvr.group, gvr.resource), (NS, name))
        if rec is not None:
            if self.agent and ans is not None:
                # the answer is the stored object's shared dict (what the informers receive)
                assert ans is rec.shared()
            rec.shared()
            self.log.append(("stored", self.log.normal(orjson.loads(rec.raw)), self.log.rv(rec.rv)))


def _scribble(body: Any, shared: tuple[Any, ...]) -> None:
    """Change the dicts of ``body`` a caller builds for a write (its top level, ``metadata`` and
    every section) where they are not one of the shared dicts' own, as it may once its write
    returned. (Not deeper: a status may hold the test helpers' constants.)"""
    held = {i for s in shared for i in _containers(s, [])}
    if not isinstance(body, dict):
        return
    for v in [body, *body.values()]:
        if isinstance(v, dict) and id(v) not in held:
            v["scribbled"] = True


def _pod(rnd: random.Random, name: str) -> dict[str, Any]:
    pod = _random_pod(rnd)
    md = pod["metadata"]
    md["name"] = name
    md["labels"] = {k: str(v) for k, v in (md.get("labels") or {}).items()}
    for c in pod["spec"]["containers"]:
        c["image"] = str(c["image"]) or "img"
        for e in c.get("env") or []:
            e["value"] = str(e["value"])
    pod.pop("unknown", None)
    pod.pop("status", None)
    if rnd.random() < 0.5:
        md["annotations"] = {"a": "1"}
    if rnd.random() < 0.5:
        md["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "s", "uid": "u-1", "controller": True}
        ]
    return pod


async def _pod_writes(w: _Writer, rnd: random.Random, i: int) -> None:
    name = f"p{i}"
    try:
        await w.client.create(PODS, _pod(rnd, name), NS, field_manager="ctl")
    except errors.StatusError as e:  # a random pod refused (an odd label): the same on both
        w.log.append(("create", e.code, e.message))
        return
    for _ in range(4):
        live = w.live("pods", name)
        if live is None:
            return
        kind = rnd.randrange(11)
        status = _running(rnd, live.get("status")) if rnd.random() < 0.7 else _status(rnd)
        md = live["metadata"]
        if kind == 0:  # the node agent's body: the pod without managedFields, a new status
            body = status_write_body(live, status)
        elif kind == 1:  # managedFields sent back as read
            body = {**live, "status": status}
        elif kind == 2:  # another spec (a status write ignores it; a wrong type is still a 400)
            spec = copy.deepcopy(live["spec"])
            spec = _mutate(rnd, spec) if rnd.random() < 0.5 else {**spec, "hostname": "h"}
            body = {**live, "spec": spec, "status": status}
        elif kind == 3:  # other labels, annotations, finalizers (status writes keep the stored ones)
            new_md = {**md, "labels": {"new": "x"}, "annotations": {"b": "2"}, "finalizers": ["x/y"]}
            body = {**live, "metadata": new_md, "status": status}
        elif kind == 4:  # a status of wrong types
            body = {**live, "status": _mutate(rnd, status)}
        elif kind == 5:  # the stored object as it is: nothing to write
            body = {**live}
        elif kind == 6:  # a stale resourceVersion
            body = {**live, "metadata": {**md, "resourceVersion": "1"}, "status": status}
        elif kind == 7:  # another pod's uid: a failed precondition
            body = {**live, "metadata": {**md, "uid": "other"}, "status": status}
        elif kind == 9:  # what JSON cannot hold (refused by the round trip) or rewrites
            odd = rnd.choice([2**70, "\ud800", 1.0, float("nan"), ("t",), "é"])
            where = rnd.choice(["generateName", "generation", "\ud800", "x"])
            body = {**live, "metadata": {**md, where: odd}, "status": status}
        elif kind == 8:  # an invalid value: 422
            body = {**live, "status": {**status, "podIP": "not-an-ip", "podIPs": [{"ip": "not-an-ip"}]}}
        else:  # labels of a wrong type, and the body without a status
            body = {k: v for k, v in live.items() if k != "status"}
            body["metadata"] = {**md, "labels": {"a": 1}}
        await w.write("update_status", PODS, body, live)
    live = w.live("pods", name)
    if live is not None:  # a main-resource update, handed off too: everything is copied
        body = {**live, "metadata": {**live["metadata"], "labels": {"m": rnd.choice(["1", "2"])}}}
        await w.write("update", PODS, body, live)


async def _set_writes(w: _Writer, rnd: random.Random, i: int) -> None:
    name = f"s{i}"
    sts = statefulset(name, namespace=NS)
    sts["metadata"]["labels"] = {"app": name}
    await w.client.create(STATEFULSETS, sts, NS, field_manager="ctl")
    for _ in range(2):
        live = w.live("statefulsets", name, "apps")
        n = rnd.choice([0, 1, 3, "3"])
        status = {"observedGeneration": 1, "replicas": n, "availableReplicas": 0, "collisionCount": 0}
        await w.write("update_status", STATEFULSETS, {**live, "status": status}, live)


async def _lease_writes(w: _Writer, rnd: random.Random, i: int) -> None:
    name = f"l{i}"
    lease = _node_lease(i)
    await w.client.create(LEASES, lease, NS, field_manager="agent")
    for second in range(1, 4):
        live = w.live("leases", name, "coordination.k8s.io")
        spec = {**live["spec"], "renewTime": f"2026-01-01T00:00:0{second}.000000Z"}
        if rnd.random() < 0.2:
            spec["leaseDurationSeconds"] = rnd.choice([41, "40"])
        await w.write("update", LEASES, {**live, "spec": spec}, live)


async def _run(seed: int, agent: bool, plain: bool = False) -> _Writer:
    w = _Writer(agent, plain)
    rnd = random.Random(seed)
    for i in range(25):
        await _pod_writes(w, rnd, i)
        if i % 3 == 0:
            await _set_writes(w, rnd, i)
        if i % 3 == 1:
            await _lease_writes(w, rnd, i)
    w.client.read_only_objects.verify()
    return w


@pytest.mark.parametrize("seed", range(3))
def test_handed_off_updates_store_answer_and_refuse_as_copied_ones(seed: int) -> None:
    fast = asyncio.run(_run(seed, True))
    general = asyncio.run(_run(seed, False))
    assert len(fast.log) == len(general.log)
    for a, b in zip(fast.log, general.log, strict=True):
        assert a == b
    # not vacuous: writes stored, refused (400, 409, 422) and checked for mutations
    assert sum(1 for e in fast.log if e[0] == "stored") > 100
    assert {e[1] for e in fast.log if e[0] == "error"} >= {400, 409, 422}
    assert fast.checked > 100


@pytest.mark.parametrize("seed", range(3))
def test_status_writes_around_the_shared_dicts_store_answer_and_refuse_as_copied_ones(seed: int) -> None:
    """Without ``handoff`` too, a ``/status`` body built around the shared dicts passes their
    sections through (the StatefulSet controller's status write): the same answers, errors and
    stored bytes as a body of the caller's own, nothing it was handed modified, and every part
    of the body that is the caller's free to change afterwards (the mutation detector and the
    stored bytes would see it otherwise)."""
    plain = asyncio.run(_run(seed, False, plain=True))
    general = asyncio.run(_run(seed, False))
    assert len(plain.log) == len(general.log)
    for a, b in zip(plain.log, general.log, strict=True):
        assert a == b
    assert sum(1 for e in plain.log if e[0] == "stored") > 100
    assert plain.checked > 100


def test_a_status_write_passes_the_live_spec_through_and_copies_the_rest() -> None:
    from apiserver.registry.handoff import private_update_body

    async def go() -> None:
        w = _Writer(True)
        pod = {
            "metadata": {"name": "p", "labels": {"a": "1"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        }
        await w.client.create(PODS, pod, NS)
        live = w.live("pods", "p")
        rd = w.api.registry.get("", "v1", "pods")
        status = {"phase": "Running", "conditions": live["status"].get("conditions") or []}
        body = {**status_write_body(live, status)}
        out = private_update_body(rd, body, live, "status")
        assert out["spec"] is live["spec"]
        assert out is not body and out["metadata"] is not body["metadata"]
        assert out["status"] == body["status"] and out["status"] is not body["status"]
        assert out["status"]["conditions"] is not live["status"].get("conditions")
        # anything but a status write, or no live object held: a whole private copy
        for sub, held in (("", live), ("status", None)):
            whole = private_update_body(rd, body, held, sub)
            assert whole == body and whole["spec"] is not live["spec"]
        # a custom resource (pruned in place by its schema) is copied whole too
        custom = SimpleNamespace(is_view=False, strategy=rd.strategy, schema={}, converter=object())
        whole = private_update_body(cast("Any", custom), body, live, "status")
        assert whole == body and whole["spec"] is not live["spec"]

    asyncio.run(go())
