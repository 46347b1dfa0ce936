"""A union that adds nothing to one side is that side's own set.

A manager re-writing fields it owns (a Lease renewal, a controller's status rewrite) unions the
write's fields into its entry; the entry's set, decoded from the stored object, knows its
encoding and its stored tree, which an equal new set would have to encode again.
"""

from __future__ import annotations

from apiserver.patch.fieldpath import FieldSet, make_path

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
