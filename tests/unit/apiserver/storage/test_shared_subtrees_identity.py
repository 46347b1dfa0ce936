"""A revision built from a shared one (``pods/binding``) brings lists that already are the
table's: known by identity, they are neither serialized nor compacted again, and every revision
ends as the general path (every list looked up by its text, every object compacted) leaves it."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import orjson

from apiserver.client.interface import GVR
from apiserver.server.instance import build_api
from apiserver.server.localclient import LocalClient
from apiserver.storage import sharedsubtrees
from apiserver.storage.compact import compact
from apiserver.storage.interface import Record
from apiserver.storage.sharedsubtrees import SharedSubtrees

from .test_shared_subtrees import pod

LISTS = (
    ("metadata", "ownerReferences"),
    ("metadata", "managedFields"),
    ("spec", "containers"),
    ("spec", "tolerations"),
    ("status", "conditions"),
)


class _NeverKnown(dict[int, list[Any]]):
    """An identity table that knows nothing: every list is looked up by its content."""

    def get(self, key: int, default: Any = None) -> Any:
        return None


class GeneralSubtrees(SharedSubtrees):
    """The table without its identity short-cuts: what every revision went through before."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self._known = _NeverKnown()

    def compact_and_share(self, obj: dict[str, Any]) -> dict[str, Any]:
        return self.share(compact(obj))


def bound(prev: dict[str, Any], node: str, second: int) -> dict[str, Any]:
    """What ``bind`` builds from the stored revision: its maps copied, its lists kept."""
    new = dict(prev)
    new["metadata"] = dict(prev["metadata"], resourceVersion=str(second))
    new["spec"] = dict(prev["spec"], nodeName=node)
    status = new["status"] = dict(prev["status"])
    status["conditions"] = [
        {
            "type": "PodScheduled",
            "status": "True",
            "lastTransitionTime": f"2026-12-05T10:00:{second % 3:02d}Z",
        }
    ]
    return new


def run(table: SharedSubtrees, seed: int) -> list[tuple[dict[str, Any], bytes]]:
    """Random writes of pods of a few templates, each shared: fresh (decoded), or derived from the
    pod's current shared revision as a binding, a status write or a re-created pod would be."""
    rng = random.Random(seed)
    current: dict[str, dict[str, Any]] = {}
    out = []
    for step in range(600):
        name = f"p{rng.randrange(40)}"
        prev = current.get(name)
        if prev is None or rng.random() < 0.3:
            obj = pod(
                name,
                owner=rng.choice(["s1", "s2", "s3"]),
                image=rng.choice(["i1", "i2"]),
                time=rng.choice(["2026-12-05T10:00:00Z", "2026-12-05T10:00:01Z"]),
                tolerations=rng.randrange(3),
            )
            raw = orjson.dumps(obj)
            rec = Record(obj if rng.random() < 0.5 else None, raw, step + 1)
        else:
            obj = bound(prev, f"n{rng.randrange(3)}", step)
            raw = orjson.dumps(obj)
            rec = Record(obj, raw, step + 1)
        shared = rec.shared(table)
        current[name] = shared
        out.append((shared, raw))
    return out


def partition(objs: list[dict[str, Any]], pick: Any) -> list[int]:
    """For each object, the index of the first object whose picked value is the same object."""
    first: dict[int, int] = {}
    return [first.setdefault(id(pick(o)), i) for i, o in enumerate(objs)]


def test_revisions_built_from_shared_ones_end_as_the_general_path_leaves_them() -> None:
    for seed, limit in ((1, 64), (2, 64), (3, 9)):  # 9: the tables clear as they fill
        fast, general = run(SharedSubtrees(limit), seed), run(GeneralSubtrees(limit), seed)
        for (obj, raw), (ref, ref_raw) in zip(fast, general, strict=True):
            assert raw == ref_raw and orjson.dumps(obj) == raw and orjson.dumps(ref) == raw
        objs, refs = [o for o, _ in fast], [o for o, _ in general]
        for parent, field in LISTS:

            def pick(o: dict[str, Any], parent: str = parent, field: str = field) -> Any:
                return o[parent].get(field)

            assert partition(objs, pick) == partition(refs, pick), (seed, field)
        for i in range(2):  # the managedFields entry's strings and its fieldsV1 tree

            def tree(o: dict[str, Any], i: int = i) -> Any:
                return (
                    o["metadata"]["managedFields"][0]["fieldsV1"],
                    o["metadata"]["managedFields"][0]["manager"],
                )[i]

            assert partition(objs, tree) == partition(refs, tree), seed


def test_a_known_list_is_not_serialized_again(monkeypatch: Any) -> None:
    table = SharedSubtrees()
    first = Record(pod("a"), orjson.dumps(pod("a")), 1).shared(table)
    second = bound(first, "n1", 2)
    dumped: list[Any] = []
    real = sharedsubtrees.orjson.dumps

    def counting(value: Any, *a: Any) -> bytes:
        dumped.append(value)
        return real(value, *a)

    monkeypatch.setattr(sharedsubtrees.orjson, "dumps", counting)
    Record(second, real(second), 2).shared(table)
    assert dumped == [second["status"]["conditions"]]  # only the binding's new list
    for parent, field in LISTS[:4]:
        assert second[parent][field] is first[parent][field]


PODS = GVR("", "v1", "pods")


def test_a_bound_pod_reaches_a_read_only_watch_with_the_lists_of_its_revision_before() -> None:
    async def go() -> None:
        client = LocalClient(build_api())
        body = pod("a")
        del body["metadata"]["managedFields"], body["status"]
        await client.create(PODS, body, "default", field_manager="statefulset-controller")
        listed = (await client.list(PODS, "default", read_only=True))["items"][0]
        watch = client.watch(
            PODS, "default", resource_version=listed["metadata"]["resourceVersion"], read_only=True
        )
        binding = {"kind": "Binding", "metadata": {"name": "a"}, "target": {"kind": "Node", "name": "n1"}}
        await client.create_subresource(PODS, "a", "binding", binding, "default")
        got = (await anext(watch)).object
        await watch.aclose()
        assert got == await client.get(PODS, "a", "default") and got["spec"]["nodeName"] == "n1"
        for parent, field in (
            ("metadata", "ownerReferences"),
            ("metadata", "managedFields"),
            ("spec", "containers"),
        ):
            assert got[parent][field] is listed[parent][field], field

    asyncio.run(go())
