"""A set's vouched quiet state keeps what its pods' facts are read from, not the pods (controllers/statefulset).

The state is kept for as long as the set stays quiet; the pods it saw are versions the informer
has since replaced (the scheduler's binding replaces every gang pod), so keeping them kept each
pod's whole manifest alive a second time.
"""

from __future__ import annotations

import copy
import gc
import weakref
from typing import Any

from controllers.statefulset.podfacts import FactsWitness, pod_facts
from controllers.statefulset.quiet import Quiet


class _Pod(dict):  # type: ignore[type-arg]
    """A pod dict that can be referenced weakly (a plain dict cannot)."""


def _pod(**status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-0",
            "namespace": "ns",
            "uid": "u-0",
            "resourceVersion": "7",
            "labels": {"app": "web", "statefulset.kubernetes.io/pod-name": "web-0"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": "web",
                    "uid": "s",
                    "controller": True,
                }
            ],
        },
        "spec": {"containers": [{"name": "c", "image": "pause"}], "hostname": "web-0"},
        "status": {"phase": "Pending", **status},
    }


def test_the_vouched_state_keeps_no_pod() -> None:
    pod = _Pod(_pod())
    seen = weakref.ref(pod)
    q = Quiet.vouched(("s", "3"), {"u-0": (pod, pod_facts(pod))}, ())
    del pod
    gc.collect()
    assert seen() is None
    assert isinstance(q.pods["u-0"][0], FactsWitness)


def test_a_witness_holds_for_the_same_version_and_for_a_binding() -> None:
    old = _pod()
    w = FactsWitness.of(old)
    assert w.holds_for(old) and w.holds_for(copy.deepcopy(old))
    bound = copy.deepcopy(old)
    bound["metadata"]["resourceVersion"] = "8"
    bound["spec"]["nodeName"] = "n1"
    bound["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    assert w.holds_for(bound)


def test_a_witness_does_not_hold_where_the_facts_may_differ() -> None:
    old = _pod()
    w = FactsWitness.of(old)

    def changed(edit: Any) -> dict[str, Any]:
        new = copy.deepcopy(old)
        new["metadata"]["resourceVersion"] = "9"
        edit(new)
        return new

    changes = [
        lambda p: p["metadata"]["labels"].update(app="other"),
        lambda p: p["metadata"].update(deletionTimestamp="2026-12-07T00:00:00Z"),
        lambda p: p["metadata"]["ownerReferences"][0].update(uid="t"),
        lambda p: p["metadata"].update(uid="u-1"),
        lambda p: p["status"].update(phase="Running"),
        lambda p: p["status"].update(
            conditions=[{"type": "Ready", "status": "True", "lastTransitionTime": "t"}]
        ),
    ]
    for edit in changes:
        new = changed(edit)
        assert not w.holds_for(new), new
    # (another uid is another pod, whose facts read alike: the witness is conservative there)
    for edit in (changes[1], changes[2], changes[4], changes[5]):
        assert pod_facts(changed(edit)) != pod_facts(old)
    # a ready pod's witness tells another transition time apart (the facts keep it: minReadySeconds)
    ready = changed(changes[-1])
    later = changed(
        lambda p: p["status"].update(
            conditions=[{"type": "Ready", "status": "True", "lastTransitionTime": "u"}]
        )
    )
    later["metadata"]["resourceVersion"] = "10"
    assert not FactsWitness.of(ready).holds_for(later)
