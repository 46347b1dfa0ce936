"""``pods/binding`` gives a pod with no other condition the table's one conditions list of its
second (:meth:`SharedSubtrees.built`): the stored bytes must be those of the general path (a list
of its own per pod), across seconds, pods that carry other conditions and tables cleared when
full; the list is one object per second while the table keeps it, and nobody modifies it.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from apiserver.client.informer import Informer
from apiserver.client.interface import PODS
from apiserver.meta import FakeClock, rfc3339
from apiserver.storage.sharedsubtrees import SharedSubtrees
from gangplane.controlplane import ControlPlane

from .test_binding_shares_revision import _reference

pytestmark = pytest.mark.anyio


def _pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulerName": "none", "containers": [{"name": "c", "image": "x"}]},
    }


@pytest.mark.parametrize("seed", range(4))
async def test_bound_pods_are_the_general_path_s_bytes_and_share_one_list_per_second(
    plane: ControlPlane, seed: int
) -> None:
    rnd = random.Random(seed)
    clock = plane.api.clock
    assert isinstance(clock, FakeClock)
    table = plane.api.shared_subtrees
    table.limit = rnd.choice([3, 8, 4096])  # small tables are cleared between bindings
    c = plane.client("scheduler")
    store = plane.api.store
    rd = plane.api.registry.get("", "v1", "pods")
    assert rd is not None
    skey = plane.api._skey(rd)
    inf = Informer(plane.client("watcher"), PODS)  # shares (and so checks) some revisions
    inf.start()
    await inf.wait_for_sync()
    lists: dict[str, list[Any]] = {}  # the one list seen per second (while not cleared)
    bound_keys = []
    for i in range(60):
        name = f"p{i}"
        created = await c.create(PODS, _pod(name), "default")
        other = rnd.random() < 0.3
        if other or rnd.random() < 0.2:  # a failed cycle's condition (replaced), maybe another one
            created["status"]["conditions"] = [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastProbeTime": None}
            ] + ([{"type": "Initialized", "status": "True", "lastProbeTime": None}] if other else [])
            await c.update_status(PODS, created, "default")
        prev = store.get(skey, ("default", name))
        assert prev is not None
        prev_raw = prev.raw
        clock.step(rnd.choice([0.0, 0.0, 0.3, 1.0, 2.5]))
        body = {"metadata": {"name": name}, "target": {"kind": "Node", "name": f"n{i}"}}
        same_second = lists.get(rfc3339(clock.now()))
        await c.create_subresource(PODS, name, "binding", body, "default")
        bound = store.get(skey, ("default", name))  # not shared yet: the writer's own dict
        assert bound is not None
        now = rfc3339(clock.now())
        assert bound.raw == _reference(orjson.loads(prev_raw), f"n{i}", now, bound.rv)
        conds = bound.obj["status"]["conditions"]
        if not other:
            assert table._known.get(id(conds)) is conds  # the table's list, known by identity
            if same_second is not None and conds is not same_second:
                # one list per second while the table keeps it (a reader may have filled and
                # cleared it while the request waited for its turn)
                assert table._known.get(id(same_second)) is not same_second
            lists[now] = conds
        if rnd.random() < 0.5:
            await c.get(PODS, name, "default")  # a reader shares it (its lists made canonical)
        bound_keys.append(("default", name))
    # no list handed to many pods was modified: every revision still serializes to its bytes
    for key in bound_keys:
        rec = store.get(skey, key)
        assert rec is not None
        assert orjson.dumps(rec.obj) == rec.raw
    await inf.stop()


def _general(key: str) -> list[Any]:
    return [{"type": "PodScheduled", "status": "True", "lastTransitionTime": key}]


@pytest.mark.parametrize("seed", range(6))
def test_built_is_the_list_share_would_make_canonical(seed: int) -> None:
    """Against a table fed the same lists through :meth:`share` (the reader's general path)."""
    rnd = random.Random(seed)
    table = SharedSubtrees(limit=rnd.choice([2, 5, 50]))
    for _ in range(400):
        key = f"t{rnd.randrange(4)}"
        if rnd.random() < 0.3:  # a reader shares a pod holding an equal list of its own first
            obj = {"kind": "Pod", "status": {"conditions": _general(key)}}
            table.share(obj)
        got = table.built("conditions", key, _general)
        assert got == _general(key)
        assert table._known.get(id(got)) is got  # the table's own list, known by identity
        reader = {"kind": "Pod", "status": {"conditions": _general(key)}}
        assert table.share(reader)["status"]["conditions"] is got
