"""A stored write's ``fieldsV1`` trees are the shared canonical ones, and nobody can change them.

The registry's managedFields tracker hands a write that is stored the canonical tree of each
entry's field set (``compact.canonical_json``) instead of a fresh decoding; what clients get
(responses, reads, watch events that are not read-only) are copies, and a dry run's response,
which is the tracked object itself, gets fresh trees.
"""

from __future__ import annotations

import asyncio
from typing import Any

from apiserver.client.interface import GVR
from apiserver.server.instance import build_api
from apiserver.server.localclient import LocalClient
from apiserver.storage.compact import canonical_fields, canonical_json

CONFIGMAPS = GVR("", "v1", "configmaps")
DATA_FIELDS = {"f:data": {".": {}, "f:k": {}}}


def cm(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "data": {"k": "v"}}


def fields_v1(obj: dict[str, Any]) -> dict[str, Any]:
    (entry,) = obj["metadata"]["managedFields"]
    tree: dict[str, Any] = entry["fieldsV1"]
    return tree


def test_stored_writes_share_one_tree_that_clients_cannot_reach() -> None:
    async def go() -> None:
        client = LocalClient(build_api())
        first = await client.create(CONFIGMAPS, cm("a"), "default", field_manager="m")
        assert fields_v1(first) == DATA_FIELDS
        fields_v1(first)["f:data"].clear()  # the response is the client's own copy
        dry = await client.create(CONFIGMAPS, cm("b"), "default", dry_run=True, field_manager="m")
        assert fields_v1(dry) == DATA_FIELDS
        fields_v1(dry)["f:data"].clear()  # a dry run's object is fresh too
        await client.create(CONFIGMAPS, cm("c"), "default", field_manager="m")
        got = await client.get(CONFIGMAPS, "a", "default")
        fields_v1(got).clear()
        shared = (await client.list(CONFIGMAPS, "default", read_only=True))["items"]
        assert [o["metadata"]["name"] for o in shared] == ["a", "c"]
        assert [fields_v1(o) for o in shared] == [DATA_FIELDS, DATA_FIELDS]
        assert fields_v1(shared[0]) is fields_v1(shared[1])  # one tree for both objects
        # an update by the same manager keeps the entry, now naming the new key as well
        updated = dict(cm("c"), data={"k": "v", "l": "w"})
        updated["metadata"] = {"name": "c"}
        after = await client.update(CONFIGMAPS, updated, "default", field_manager="m")
        assert fields_v1(after) == {"f:data": {".": {}, "f:k": {}, "f:l": {}}}
        assert fields_v1(await client.get(CONFIGMAPS, "a", "default")) == DATA_FIELDS

    asyncio.run(go())


def test_a_canonical_tree_is_known_by_identity_and_by_its_encoding() -> None:
    tree = canonical_json(b'{"f:data":{".":{},"f:x":{}}}')
    assert tree == {"f:data": {".": {}, "f:x": {}}}
    assert canonical_json(b'{"f:data":{".":{},"f:x":{}}}') is tree
    assert canonical_fields(tree) is tree
    assert canonical_fields({"f:data": {".": {}, "f:x": {}}}) is tree
