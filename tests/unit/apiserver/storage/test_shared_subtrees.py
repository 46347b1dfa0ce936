"""Revisions shared read-only take one object for each list equal to a known one; nothing read changes."""

from __future__ import annotations

import asyncio
import copy
import gc
import random
import tracemalloc
from typing import Any

import orjson
import pytest

from apiserver.client.interface import GVR
from apiserver.server.instance import build_api
from apiserver.server.localclient import LocalClient, ReadOnlyObjects
from apiserver.storage.compact import compact
from apiserver.storage.interface import Record
from apiserver.storage.sharedsubtrees import SharedSubtrees

TIME = "2026-12-05T10:00:00Z"


def pod(
    name: str,
    owner: str = "set-a",
    image: str = "pause",
    cpu: str = "100m",
    time: str = TIME,
    tolerations: int = 2,
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app": owner, "pod-name": name},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": owner,
                    "uid": f"uid-{owner}",
                    "controller": True,
                }
            ],
            "managedFields": [
                {
                    "manager": "statefulset-controller",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": time,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:spec": {"f:containers": {".": {}, 'k:{"name":"c"}': {".": {}, "f:image": {}}}}
                    },
                }
            ],
        },
        "spec": {
            "containers": [{"name": "c", "image": image, "resources": {"requests": {"cpu": cpu}}}],
            "hostname": name,
            "tolerations": [
                {"key": f"k{i}", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
                for i in range(tolerations)
            ],
        },
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": time}],
        },
    }


def shared(table: SharedSubtrees, obj: dict[str, Any]) -> dict[str, Any]:
    return table.share(compact(obj))


def test_a_shared_revision_keeps_every_value_and_its_serialization() -> None:
    table = SharedSubtrees()
    shared(table, pod("a"))
    b = pod("b")
    raw, before = orjson.dumps(b), copy.deepcopy(b)
    assert shared(table, b) is b
    assert b == before and orjson.dumps(b) == raw


def test_the_lists_of_one_template_are_one_object_and_the_rest_are_each_pods_own() -> None:
    table = SharedSubtrees()
    a, b = shared(table, pod("a")), shared(table, pod("b"))
    for parent, field in (
        ("metadata", "ownerReferences"),
        ("metadata", "managedFields"),
        ("spec", "containers"),
        ("spec", "tolerations"),
    ):
        assert a[parent][field] is b[parent][field], field
    assert a["status"]["conditions"] is b["status"]["conditions"]  # moved in the same second
    assert (
        a["spec"] is not b["spec"] and a["metadata"] is not b["metadata"] and a["status"] is not b["status"]
    )
    assert b["spec"]["hostname"] == "b" and b["metadata"]["labels"]["pod-name"] == "b"


def test_lists_that_differ_anywhere_are_not_shared() -> None:
    table = SharedSubtrees()
    a = shared(table, pod("a"))
    other = shared(table, pod("o", owner="set-b", image="nginx", time="2026-12-05T10:00:01Z", tolerations=1))
    for parent, field in (
        ("metadata", "ownerReferences"),
        ("metadata", "managedFields"),
        ("spec", "containers"),
        ("spec", "tolerations"),
        ("status", "conditions"),
    ):
        assert a[parent][field] is not other[parent][field], field
        assert a[parent][field] != other[parent][field], field
    # the same items in another key order are another list: the serialization is kept
    c = pod("c")
    c["spec"]["containers"] = [dict(reversed(list(c["spec"]["containers"][0].items())))]
    raw = orjson.dumps(c)
    shared(table, c)
    assert c["spec"]["containers"] is not a["spec"]["containers"] and orjson.dumps(c) == raw


def test_only_pods_share_their_spec_lists() -> None:
    table = SharedSubtrees()
    x = {"kind": "Other", "metadata": {"name": "x"}, "spec": {"containers": [{"name": "c"}]}}
    y = copy.deepcopy(x)
    table.share(x)
    table.share(y)
    assert x["spec"]["containers"] is not y["spec"]["containers"]


def test_a_full_table_starts_again_without_changing_anything() -> None:
    table = SharedSubtrees(limit=3)
    pods = [pod(f"p{i}", owner=f"set-{i}", image=f"img{i}") for i in range(6)]
    expected = copy.deepcopy(pods)
    out = [shared(table, p) for p in pods]
    assert out == expected and len(table) <= 3


def test_entries_and_objects_that_are_not_plain_json_are_left_alone() -> None:
    table = SharedSubtrees()
    odd: dict[str, Any] = {
        "kind": "Pod",
        "metadata": {"managedFields": [{"manager": "m", "fieldsV1": {}, "n": 1}, "not an entry"]},
        "spec": {"containers": [{"name": "c", "x": {1, 2}}], "tolerations": []},
    }
    before = copy.deepcopy(odd)
    assert table.share(odd) == before and len(table) == 0
    assert table.share({"metadata": None, "spec": None}) == {"metadata": None, "spec": None}


def test_random_revisions_read_as_their_bytes() -> None:
    """Random pods of a few templates, shared in one table: each still decodes to its own bytes,
    and every equal list the table knows is one object."""
    rng = random.Random(7)
    table = SharedSubtrees(limit=16)  # 13 distinct lists: no clear once all are known
    records = []
    for i in range(300):
        p = pod(
            f"p{i}",
            owner=rng.choice(["s1", "s2", "s3"]),
            image=rng.choice(["i1", "i2"]),
            cpu=rng.choice(["100m", "1"]),
            time=rng.choice([TIME, "2026-12-05T10:00:01Z"]),
            tolerations=rng.randrange(3),
        )
        raw = orjson.dumps(p)
        rec = Record(p if rng.random() < 0.5 else None, raw, i + 1)
        records.append((rec.shared(table), raw))
    for obj, raw in records:
        assert orjson.dumps(obj) == raw and obj == orjson.loads(raw)
    containers = {id(o["spec"]["containers"]) for o, _ in records[-50:]}
    assert len(containers) <= 4  # 2 images x 2 cpus, once the table stopped clearing


def test_a_shared_pod_leaves_fewer_tracked_objects() -> None:
    """What the table is for: a second pod of one template, written and moved in the same second,
    holds four tracked containers of its own (itself, metadata, spec, status) instead of all its lists."""
    table = SharedSubtrees()
    first = shared(table, pod("a"))

    def own(obj: Any, seen: set[int]) -> int:
        if id(obj) in seen or not gc.is_tracked(obj):
            return 0
        seen.add(id(obj))
        kids = obj.values() if type(obj) is dict else obj if type(obj) in (list, tuple) else ()
        return 1 + sum(own(k, seen) for k in kids)

    seen: set[int] = set()
    own(first, seen)
    assert own(shared(table, pod("b")), seen) == 4
    assert own(compact(pod("c")), seen) > 4


PODS = GVR("", "v1", "pods")


def template_pod(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"app": "a"}},
        "spec": {
            "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m"}}}],
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }


@pytest.mark.parametrize("detector", [True, False], ids=["mutation-detector", "plain"])
def test_informer_reads_of_one_template_share_their_lists_and_clients_get_their_own(detector: bool) -> None:
    """Through the in-process client: a read-only list and a read-only watch (what informers ask
    for) hand out pods whose template lists are one object; a plain read gets its own copy."""

    async def go() -> None:
        client = LocalClient(build_api(), read_only_objects=ReadOnlyObjects(enabled=detector))
        await client.create(PODS, template_pod("a"), "default", field_manager="m")
        listed = (await client.list(PODS, "default", read_only=True))["items"]
        watch = client.watch(
            PODS, "default", resource_version=listed[0]["metadata"]["resourceVersion"], read_only=True
        )
        created = await client.create(PODS, template_pod("b"), "default", field_manager="m")
        event = await anext(watch)
        await watch.aclose()
        a, b = listed[0], event.object
        assert b["metadata"]["name"] == "b" and b == created
        for parent, field in (("spec", "containers"), ("spec", "tolerations"), ("metadata", "managedFields")):
            assert a[parent][field] is b[parent][field], field
        got = await client.get(PODS, "b", "default")
        assert got == b and got["spec"]["containers"] is not b["spec"]["containers"]
        got["spec"]["containers"][0]["image"] = "changed"  # the client's own copy
        assert (await client.list(PODS, "default", read_only=True))["items"][0]["spec"]["containers"][0][
            "image"
        ] == "pause"
        if detector:
            client.read_only_objects.verify()

    asyncio.run(go())


def test_a_create_templates_list_is_shared_as_made_and_not_compacted_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The creates a template answers (every one after a shape's first) get a list the store's
    table takes as it is made: equal to the general path's list of the first create, and the
    very same object, and handed out read-only without a compaction walk of its entries."""
    import apiserver.storage.sharedsubtrees as subtrees_module

    walked: list[str] = []
    real_compact = subtrees_module.compact

    def counting(obj: dict[str, Any]) -> dict[str, Any]:
        if obj.get("kind") == "Pod":
            walked.append(obj["metadata"]["name"])
        return real_compact(obj)

    monkeypatch.setattr(subtrees_module, "compact", counting)

    async def go() -> list[dict[str, Any]]:
        client = LocalClient(build_api())
        for name in ("a", "b", "c"):
            await client.create(PODS, template_pod(name), "default", field_manager="m")
        return list((await client.list(PODS, "default", read_only=True))["items"])

    pods = asyncio.run(go())
    lists = [p["metadata"]["managedFields"] for p in pods]
    # the first create's (the general path's) list, compacted when handed out, is the one all three hold
    assert lists[0] == lists[1] == lists[2] and lists[0] is lists[1] is lists[2]
    assert lists[0][0]["manager"] == "m" and lists[0][0]["operation"] == "Update"
    assert walked == ["a"], walked
    # what a client reads is unchanged: a fresh decoding of the stored bytes, entry for entry
    assert orjson.loads(orjson.dumps(pods[2]))["metadata"]["managedFields"] == lists[0]


def test_the_keys_kept_are_the_size_of_their_text() -> None:
    """orjson hands back its whole write buffer (at least 4 KB): a kept key is an exact copy, so
    a table of distinct lists grows by about their text, not by a write buffer each."""
    table = SharedSubtrees()
    pods = [compact(pod(f"p{i}", owner=f"s{i}", image=f"img-{i}")) for i in range(200)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for p in pods:
            table.share(p)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(table) == 403  # 200 owners and 200 containers lists, one of each of the rest
    assert grown / len(table) < 1500, grown / len(table)


def test_managed_fields_split_into_entries_differently_are_other_lists() -> None:
    table = SharedSubtrees()
    one = {"metadata": {"managedFields": [{"manager": "m", "operation": "Update"}, {"time": "t"}]}}
    two = {"metadata": {"managedFields": [{"manager": "m"}, {"operation": "Update", "time": "t"}]}}
    table.share(one)
    table.share(two)
    assert one["metadata"]["managedFields"] is not two["metadata"]["managedFields"]
    assert two["metadata"]["managedFields"] == [{"manager": "m"}, {"operation": "Update", "time": "t"}]
    same = copy.deepcopy(two)
    table.share(same)
    assert same["metadata"]["managedFields"] is two["metadata"]["managedFields"]


def test_a_managed_fields_key_is_one_tuple_of_atoms() -> None:
    # most lists are one object's own and stay in the table until it is full: their keys are
    # what the cyclic collector meets, one object each (untracked at its first pass)
    table = SharedSubtrees()
    table.share(compact(pod("a")))
    keys = [k for k in table._lists if k[0] == "managedFields"]
    assert len(keys) == 1
    assert all(type(x) in (str, int) for x in keys[0])
    gc.collect()
    assert not gc.is_tracked(keys[0])


def test_a_unique_list_is_known_by_identity_without_a_content_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A list no other can equal (a created object's own join, ``adopt(..., unique=True)``) is
    the table's as it is: a revision holding it is handed out without a compaction walk, and no
    content key is kept for it; an ordinary list is still matched by content."""
    import apiserver.storage.sharedsubtrees as subtrees_module

    walked: list[str] = []
    real_compact = subtrees_module.compact

    def counting(obj: dict[str, Any]) -> dict[str, Any]:
        walked.append(obj["metadata"]["name"])
        return real_compact(obj)

    monkeypatch.setattr(subtrees_module, "compact", counting)
    table = SharedSubtrees()
    owned = compact(pod("a"))["metadata"]["managedFields"]
    assert table.adopt(owned, True) is owned
    assert _entry_keys(table) == 0  # no key kept
    held = pod("a")
    held["metadata"]["managedFields"] = owned
    assert table.compact_and_share(held)["metadata"]["managedFields"] is owned
    assert walked == []  # known by identity: not walked
    # an equal list met later by content is not matched to it (none can be, for such a list)...
    twin = compact(pod("b"))["metadata"]["managedFields"]
    assert table.adopt(twin) is twin and _entry_keys(table) == 1
    # ... and an ordinary one is, as before
    again = compact(pod("c"))["metadata"]["managedFields"]
    assert table.adopt(again) is twin


def _entry_keys(table: SharedSubtrees) -> int:
    """How many ``managedFields`` lists the table keeps a content key for."""
    return sum(1 for k in table._lists if k[0] == "managedFields")


def test_lists_known_by_identity_alone_are_bounded_too() -> None:
    table = SharedSubtrees(limit=8)
    kept = [[{"manager": f"m{i}"}] for i in range(20)]
    for entries in kept:
        table.adopt(entries, True)
    assert len(table._known) <= 8
