"""A ``/status`` write's reset metadata shared with the live object where no mutating admission
can act (issue #22).

``GenericStore``'s status reset (kube's ``ResetObjectMetaForStatus``) puts the live object's
labels, annotations, finalizers and owner references back into the written object. It copies
them for mutating admission's sake; where no mutating hook can act on the write, the stored
write keeps the live values themselves. These tests check that the answers, errors and stored
objects are those of the copying path (forced by a mutating hook that does nothing), and that a
mutating hook still gets private copies (the previous revision never changes under it).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from apiserver.admission import UPDATE, Attributes, Lookup, Plugin
from apiserver.meta import FakeClock
from apiserver.registry import generic
from apiserver.registry.generic import WriteOptions
from apiserver.server.instance import build_api

from .test_update_path_fastpaths import _Log
from .test_validated_metadata import _writes


class _Idle(Plugin):
    """A mutating hook that acts on every write and changes nothing (so the reset copies)."""

    name = "Idle"

    def admit(self, attrs: Attributes, api: Lookup) -> None:
        return None


class _Labeller(Plugin):
    """A mutating hook that adds a label to a pod status write's object, in place."""

    name = "Labeller"

    def admit(self, attrs: Attributes, api: Lookup) -> None:
        if attrs.operation == UPDATE and attrs.subresource == "status" and attrs.obj is not None:
            labels = attrs.obj["metadata"].get("labels")
            if type(labels) is dict:
                labels["touched"] = "yes"


def _run(seed: int, idle: bool, monkeypatch: pytest.MonkeyPatch) -> _Log:
    suffixes = random.Random(seed + 1000)
    monkeypatch.setattr(generic, "random_suffix", lambda: suffixes.choice(["aaaaa", "bbbbb", "ccccc"]))
    api = build_api(clock=FakeClock())
    uids = iter(range(10**6))
    api.new_uid = lambda: f"uid-{next(uids)}"
    if idle:
        api.admission.append(_Idle())
    rnd = random.Random(seed)
    log = _Log()
    for i in range(60):
        _writes(api, rnd, i, log)
    return log


@pytest.mark.parametrize("seed", range(4))
def test_status_writes_answer_and_store_the_same_as_with_the_reset_copies(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = _run(seed, False, monkeypatch)
    copied = _run(seed, True, monkeypatch)
    assert len(shared) == len(copied)
    for a, b in zip(shared, copied, strict=True):
        assert a == b
    assert sum(1 for e in shared if e[0] == "stored") > 100


def _pod_status_write(api: Any) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    rd = api.registry.get("", "v1", "pods")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"app": "a"}, "finalizers": ["example.com/f"]},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    api.create(rd, "default", pod, WriteOptions(field_manager="ctl"))
    before = api.store.get(api._skey(rd), api._key(rd, "default", "p"))
    snapshot = before.copy()
    body = before.copy()
    body["status"] = {"phase": "Running"}
    api.update(rd, "default", "p", body, WriteOptions(field_manager="kubelet"), "status")
    after = api.store.get(api._skey(rd), api._key(rd, "default", "p"))
    return before.obj, snapshot, after.obj


def test_without_mutating_admission_the_stored_write_keeps_the_live_values() -> None:
    api = build_api(clock=FakeClock())
    old, old_copy, new = _pod_status_write(api)
    assert new["status"]["phase"] == "Running"
    assert new["metadata"]["labels"] == {"app": "a"}
    assert new["metadata"]["labels"] is old["metadata"]["labels"]
    assert new["metadata"]["finalizers"] is old["metadata"]["finalizers"]
    assert old == old_copy


def test_a_mutating_hook_gets_copies_and_the_previous_revision_stays() -> None:
    api = build_api(clock=FakeClock())
    api.admission.append(_Labeller())
    old, old_copy, new = _pod_status_write(api)
    assert new["metadata"]["labels"] == {"app": "a", "touched": "yes"}
    assert old["metadata"]["labels"] == {"app": "a"}
    assert old == old_copy


def test_a_stored_mutating_policy_and_binding_bring_the_copies_back() -> None:
    api = build_api(clock=FakeClock())
    group = "admissionregistration.k8s.io"
    pods = api.registry.get("", "v1", "pods")
    steps = api._admission_plan.steps(api.admission, UPDATE, pods)
    assert steps.admits_nothing(api)
    policy = {
        "apiVersion": f"{group}/v1",
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": "team"},
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["*"],
                        "operations": ["UPDATE"],
                        "resources": ["pods/status"],
                    }
                ]
            },
            "reinvocationPolicy": "Never",
            "mutations": [
                {
                    "patchType": "ApplyConfiguration",
                    "applyConfiguration": {
                        "expression": 'Object{metadata: Object.metadata{labels: {"team": "gang"}}}'
                    },
                }
            ],
        },
    }
    api.create(api.registry.get(group, "v1", "mutatingadmissionpolicies"), "", policy, WriteOptions())
    assert steps.admits_nothing(api)  # a policy without a binding applies to nothing
    binding = {
        "apiVersion": f"{group}/v1",
        "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": "team"},
        "spec": {"policyName": "team"},
    }
    api.create(api.registry.get(group, "v1", "mutatingadmissionpolicybindings"), "", binding, WriteOptions())
    assert not steps.admits_nothing(api)
    old, old_copy, new = _pod_status_write(api)
    assert new["metadata"]["labels"] == {"app": "a", "team": "gang"}
    assert old == old_copy
    assert old["metadata"]["labels"] == {"app": "a"}


def test_a_dry_run_status_writes_answer_is_the_callers_own() -> None:
    api = build_api(clock=FakeClock())
    rd = api.registry.get("", "v1", "pods")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"app": "a"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    api.create(rd, "default", pod, WriteOptions(field_manager="ctl"))
    body = api.store.get(api._skey(rd), api._key(rd, "default", "p")).copy()
    body["status"] = {"phase": "Running"}
    res = api.update(rd, "default", "p", body, WriteOptions(field_manager="kubelet", dry_run=True), "status")
    res.obj["metadata"]["labels"]["changed"] = "by-caller"
    stored = api.store.get(api._skey(rd), api._key(rd, "default", "p")).obj
    assert stored["metadata"]["labels"] == {"app": "a"}
