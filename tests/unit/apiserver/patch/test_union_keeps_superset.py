"""A union that adds nothing to one side is that side's own set, and a manager's entry that a
write leaves with the same fields keeps its set.

A manager re-writing fields it owns (a Lease renewal, a controller's status rewrite) unions the
write's fields into its entry; the entry's set, decoded from the stored object, knows its
encoding and its stored tree, which an equal new set would have to encode again.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.openapi import schema
from apiserver.patch import fieldpath
from apiserver.patch.apply import updated_managed_fields
from apiserver.patch.fieldpath import FieldSet, make_path
from apiserver.patch.sharedtrees import shared_fields_v1

RENEW = make_path("spec", "renewTime")
HOLDER = make_path("spec", "holderIdentity")


def test_the_superset_itself_is_the_union() -> None:
    owned = FieldSet([make_path("spec"), RENEW, HOLDER])
    taken = FieldSet([RENEW])
    assert (taken | owned) is owned
    assert (owned | taken) is owned
    assert (owned | FieldSet()) is owned and (FieldSet() | owned) is owned


def test_a_union_that_adds_paths_to_both_sides_is_a_new_set() -> None:
    a = FieldSet([RENEW])
    b = FieldSet([HOLDER])
    u = a | b
    assert u is not a and u is not b
    assert u == FieldSet([RENEW, HOLDER])
    assert set(u.paths) == {RENEW, HOLDER}


def test_a_decoded_entry_keeps_its_encoding_through_a_rewrite_of_its_fields() -> None:
    fields_v1 = {"f:spec": {"f:holderIdentity": {}, "f:renewTime": {}}}
    owned = FieldSet.from_fields_v1(fields_v1, stored=True)
    after = FieldSet([RENEW]) | owned
    assert after is owned
    assert after.to_fields_v1() == fields_v1
    assert after.stored_tree() is owned.stored_tree()


def test_a_renewal_does_not_encode_its_managers_entry_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Lease renewed by its holder: the entry's set is the one decoded from the request (whose
    encoding is known), not an equal one encoded again, even once the table of encodings has
    been cleared, as a busy server's is (every pod's status entry is a set of its own); the
    entry's ``fieldsV1`` is unchanged and only its time moves."""
    node = schema.for_gvk("coordination.k8s.io", "v1", "Lease")
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "n1", "namespace": "kube-node-lease", "uid": "u1"},
        "spec": {
            "holderIdentity": "n1",
            "leaseDurationSeconds": 40,
            "renewTime": "2030-01-01T00:00:00.000000Z",
        },
    }
    created = updated_managed_fields(
        None,
        lease,
        "agent",
        node,
        "2030-01-01T00:00:00Z",
        "coordination.k8s.io/v1",
        fields_v1=shared_fields_v1,
    )
    assert created is not None
    stored = {**lease, "metadata": {**lease["metadata"], "managedFields": created}}
    emitted: list[Any] = []
    real = fieldpath._emit_and_check
    monkeypatch.setattr(fieldpath, "_emit_and_check", lambda paths: emitted.append(paths) or real(paths))
    for second in range(1, 3):
        renewed = {**stored, "spec": {**stored["spec"], "renewTime": f"2030-01-01T00:00:0{second}.000000Z"}}
        now = f"2030-01-01T00:00:0{second}Z"
        fieldpath._ENCODED.clear()
        entries = updated_managed_fields(
            stored,
            renewed,
            "agent",
            node,
            now,
            "coordination.k8s.io/v1",
            fields_v1=shared_fields_v1,
            old_is_stored=True,
        )
        assert entries is not None and len(entries) == 1
        (entry,) = entries
        (before,) = stored["metadata"]["managedFields"]
        assert entry["fieldsV1"] == before["fieldsV1"]
        assert entry["time"] == now
        stored = {**renewed, "metadata": {**renewed["metadata"], "managedFields": entries}}
    assert emitted == []
