"""Typed decoding of an update or patch: only the sections the write changed are walked.

What a client observes must not change: the same 400 (kube's decoder message, field and Go
type) for a wrong type anywhere the write put one, ``null``s filled with zero values, and no
error for what the live object already held.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

import pytest

from apiserver.errors import StatusError
from apiserver.patch.typecheck import check_types

POD_RD = SimpleNamespace(group="", version="v1", kind="Pod")


def live_pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "x"}, "resourceVersion": "5"},
        "spec": {
            "containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 80}]}],
            "terminationGracePeriodSeconds": 30,
            "tolerations": [{"key": "k", "operator": "Exists"}],
        },
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}]},
    }


def message(obj: dict[str, Any], live: dict[str, Any] | None) -> str | None:
    try:
        check_types(POD_RD, obj, live=live)
    except StatusError as e:
        return e.message
    return None


@pytest.mark.parametrize(
    ("section", "change"),
    [
        ("status", lambda o: o["status"].update(phase=3)),
        ("status", lambda o: o["status"]["conditions"].append({"type": "Ready", "status": True})),
        ("spec", lambda o: o["spec"].update(terminationGracePeriodSeconds="30")),
        ("spec", lambda o: o["spec"]["containers"][0]["ports"].append({"containerPort": "81"})),
        ("metadata", lambda o: o["metadata"]["labels"].update(n=1)),
    ],
)
def test_a_wrong_type_the_write_puts_anywhere_is_the_decoders_400(section: str, change: Any) -> None:
    live = live_pod()
    new = copy.deepcopy(live)
    change(new)
    got = message(new, live)
    assert got is not None and got == message(copy.deepcopy(new), None)  # as the full walk says it
    assert got.startswith('Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal')


def test_the_first_mismatch_in_document_order_is_reported() -> None:
    live = live_pod()
    new = copy.deepcopy(live)
    new["spec"]["terminationGracePeriodSeconds"] = "x"
    new["status"]["phase"] = 1
    assert message(new, live) == message(copy.deepcopy(new), None)
    assert "PodSpec.spec.terminationGracePeriodSeconds" in (message(new, live) or "")


def test_unchanged_sections_are_not_walked_and_changed_ones_are_filled() -> None:
    live = live_pod()
    new = copy.deepcopy(live)
    new["status"]["conditions"].append(None)  # a typed list's null becomes its zero value
    assert message(new, live) is None
    assert new["status"]["conditions"][-1] == {}


@pytest.mark.parametrize("lookalike", [True, 30.0, float("nan")])
def test_a_value_equal_to_the_live_one_but_of_another_type_is_still_checked(lookalike: Any) -> None:
    # 30 == 30.0 and 1 == True in Python; NaN is written as null: none passes for the live value
    live = live_pod()
    live["spec"]["terminationGracePeriodSeconds"] = 1 if lookalike is True else 30
    new = copy.deepcopy(live)
    new["spec"]["terminationGracePeriodSeconds"] = lookalike
    assert message(new, live) == message(copy.deepcopy(new), None)
    if lookalike is True:
        assert message(new, live) is not None  # a boolean is no integer


def test_a_section_the_write_left_as_it_was_is_not_walked_again() -> None:
    # The live object passed this check when it was stored; a value it could not hold shows the
    # section is taken as checked (only the status is walked for this status write).
    live = live_pod()
    live["spec"]["terminationGracePeriodSeconds"] = "30"
    new = copy.deepcopy(live)
    new["status"]["phase"] = "Running"
    assert message(new, live) is None
    assert message(copy.deepcopy(new), None) is not None


# ------------------------------------- metadata with managedFields entries: as the full walk
def live_pod_with_entries() -> dict[str, Any]:
    live = live_pod()
    live["metadata"]["managedFields"] = [
        {
            "manager": "kubelet",
            "operation": "Update",
            "apiVersion": "v1",
            "time": "2026-12-05T08:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:status": {"f:phase": {}}},
            "subresource": "status",
        }
    ]
    return live


def outcome(obj: dict[str, Any], live: dict[str, Any] | None) -> tuple[str | None, dict[str, Any]]:
    """The 400's message (or none) and the body as the check left it (nulls filled)."""
    body = copy.deepcopy(obj)
    return message(body, live), body


METADATA_CHANGES: list[Any] = [
    lambda o: None,
    lambda o: o["metadata"]["managedFields"][0].update(manager=1),
    lambda o: o["metadata"]["managedFields"][0].update(time=True),
    lambda o: o["metadata"]["managedFields"].append(None),  # filled to {} as the full walk does
    lambda o: o["metadata"]["managedFields"].append("x"),
    lambda o: o["metadata"].update(managedFields={"a": 1}),
    lambda o: o["metadata"]["managedFields"][0]["fieldsV1"].update({"f:spec": 1}),
    lambda o: o["metadata"]["labels"].update(a=1),
    lambda o: o["metadata"]["labels"].update(a=None),  # a null map value becomes ""
    lambda o: o["metadata"].update(generation="1"),
    lambda o: (o["metadata"]["labels"].update(a=1), o["metadata"]["managedFields"][0].update(manager=1)),
    lambda o: o["metadata"].pop("managedFields"),
    lambda o: o["metadata"].update(resourceVersion=5),
]


@pytest.mark.parametrize("change", METADATA_CHANGES)
@pytest.mark.parametrize("status_change", [False, True])
def test_metadata_and_its_entries_answer_as_the_full_walk(change: Any, status_change: bool) -> None:
    live = live_pod_with_entries()
    new = copy.deepcopy(live)
    change(new)
    if status_change:
        new["status"]["phase"] = 2  # a later mismatch: the first one in document order wins
    assert outcome(new, live) == outcome(new, None)


def test_entries_are_walked_even_when_the_rest_of_metadata_is_unchanged() -> None:
    live = live_pod_with_entries()
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"][0]["operation"] = 7
    assert message(new, live) == (
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct '
        "field ManagedFieldsEntry.metadata.managedFields[0].operation of type string"
    )


def test_a_changed_metadata_is_walked_whole() -> None:
    # the live object held a value of the wrong type (it cannot, once stored: this shows the walk)
    live = live_pod_with_entries()
    live["metadata"]["labels"]["app"] = 1
    new = copy.deepcopy(live)
    assert message(new, live) is None  # unchanged: taken as checked
    new["metadata"]["annotations"] = {"a": "b"}
    assert message(new, live) is not None  # changed: the whole of metadata is walked again


def test_a_new_map_of_the_live_values_is_taken_as_the_live_map() -> None:
    # a status write's metadata: a new map holding the live object's very values, in order
    live = live_pod_with_entries()
    live["metadata"]["labels"]["app"] = 1  # (a stored object cannot hold this: it shows the walk)
    new = copy.deepcopy(live)
    new["metadata"] = dict(live["metadata"])
    assert message(new, live) is None  # each value is the live one: not walked
    new["metadata"]["labels"] = dict(live["metadata"]["labels"])  # an equal copy: the texts decide
    assert message(new, live) is None
    reordered = dict(reversed(list(live["metadata"].items())))
    new["metadata"] = reordered  # the same values in another order: another text, walked
    assert message(new, live) is not None
    new["metadata"] = {**live["metadata"], "annotations": {"a": "b"}}  # one more key: walked
    assert message(new, live) is not None
