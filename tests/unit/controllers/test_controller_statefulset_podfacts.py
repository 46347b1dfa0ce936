"""A pod's StatefulSet facts agree with the pure helpers, and the per-set memo never serves a stale pod."""

from __future__ import annotations

import copy
import itertools

import pytest

from apiserver.selectors import label_selector_from_dict
from controllers.statefulset import utils
from controllers.statefulset.control import count_facts
from controllers.statefulset.podfacts import PodFactsCache, pod_facts
from controllers.testing import statefulset

NOW = 1_800_000_000.0


def sts() -> dict:
    s = statefulset("web", 3)
    s["metadata"]["uid"] = "sts-uid"
    return s


def pod(name: str, **kw: object) -> dict:
    p: dict = {
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {},
        "status": {},
    }
    md, status = p["metadata"], p["status"]
    if kw.get("uid"):
        md["uid"] = kw["uid"]
    if kw.get("named", True):
        md["labels"][utils.POD_NAME_LABEL] = name
    if kw.get("revision"):
        md["labels"][utils.REVISION_LABEL] = kw["revision"]
    if kw.get("deleting"):
        md["deletionTimestamp"] = "2027-01-15T08:00:00Z"
    if kw.get("owner"):
        md["ownerReferences"] = [{"kind": "StatefulSet", "uid": kw["owner"], "controller": True}]
    if kw.get("phase"):
        status["phase"] = kw["phase"]
    if kw.get("ready") is not None:
        status["conditions"] = [
            {
                "type": "Ready",
                "status": "True" if kw["ready"] else "False",
                "lastTransitionTime": str(kw.get("since", "2027-01-15T08:00:00Z")),
            }
        ]
    return p


PODS = [
    pod("web-0"),
    pod("web-1", uid="u1", phase="Pending", revision="r1", owner="sts-uid"),
    pod("web-2", uid="u2", phase="Running", ready=True, revision="r2", owner="sts-uid"),
    pod("web-3", uid="u3", phase="Running", ready=False, revision="r1"),
    pod("web-4", uid="u4", phase="Running", ready=True, deleting=True, revision="r2"),
    pod("web-5", uid="u5", phase="Failed", named=False),
    pod("web-06", uid="u6", phase="Running", ready=True),  # a leading zero: not the pod's identity
    pod("other-1", uid="u7", phase="Succeeded"),
    pod("web-7", uid="u8", phase="Running", ready=True, since="2027-01-15T08:00:00Z"),
    pod("nameless", uid="u9"),
]


@pytest.mark.parametrize("p", PODS, ids=lambda p: p["metadata"]["name"])
def test_facts_agree_with_the_helpers(p: dict) -> None:
    f, s = pod_facts(p), sts()
    assert f.ordinal == utils.ordinal_of(p)
    assert f.created == utils.is_created(p)
    assert f.phase == utils.phase(p)
    assert f.ready == utils.is_pod_ready(p)
    assert f.running_and_ready == utils.is_running_and_ready(p)
    assert f.terminating == utils.is_terminating(p)
    assert f.healthy == utils.is_healthy(p)
    assert f.revision == utils.revision_of(p)
    assert f.identity_matches(s) == utils.identity_matches(s, p)
    assert (f.parent == "web") == utils.is_member_of(s, p)
    for min_ready, now in itertools.product((0, 10, 10**9), (NOW, 0.0)):
        assert f.available(min_ready, now) == utils.is_running_and_available(p, min_ready, now)
        assert f.unavailable(min_ready, now) == utils.is_unavailable(p, min_ready, now)


def test_status_counts_agree_with_count_pods() -> None:
    for min_ready, cur, upd in itertools.product((0, 10**9), ("r1", "r2"), ("r1", "r2")):
        want = utils.count_pods(PODS, min_ready, NOW, cur, upd)
        assert count_facts([pod_facts(p) for p in PODS], min_ready, NOW, cur, upd) == want


def test_the_memo_rereads_a_changed_pod_and_forgets_pods_not_seen() -> None:
    cache = PodFactsCache()
    sel = label_selector_from_dict({"matchLabels": {"app": "web"}})
    p0 = pod("web-1", uid="u1", phase="Pending")
    facts = cache.begin("default/web", "sts-uid", sel)
    assert facts(p0).phase == "Pending" and facts.entry(p0)[2] is True
    facts.end()
    # the informer's next version of the pod is another object: it is read again
    p1 = copy.deepcopy(p0)
    p1["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    p1["metadata"]["labels"] = {"app": "db"}
    facts = cache.begin("default/web", "sts-uid", sel)
    assert facts(p0) is not facts(p1)
    assert facts(p1).running_and_ready and facts.entry(p1)[2] is False
    facts.end()
    assert len(cache) == 2
    facts = cache.begin("default/web", "sts-uid", sel)
    facts(p1)
    facts.end()
    assert len(cache) == 1  # p0 was not looked at in the last sync


def test_a_recreated_set_or_another_selector_starts_afresh() -> None:
    cache = PodFactsCache()
    p = pod("web-1", uid="u1")
    facts = cache.begin("default/web", "uid-1", label_selector_from_dict({"matchLabels": {"app": "web"}}))
    assert facts.entry(p)[2] is True
    facts.end()
    facts = cache.begin("default/web", "uid-1", label_selector_from_dict({"matchLabels": {"app": "db"}}))
    assert facts.entry(p)[2] is False
    facts.end()
    facts = cache.begin("default/web", "uid-2", label_selector_from_dict(None))
    assert facts.entry(p)[2] is False  # a nil selector matches nothing
    facts.end()
    cache.forget("default/web")
    assert len(cache) == 0


def _version(p: dict, rv: str) -> dict:
    out = copy.deepcopy(p)
    out["metadata"]["resourceVersion"] = rv
    return out


def test_a_created_pods_facts_serve_the_informers_copy_of_that_version_only() -> None:
    cache = PodFactsCache()
    sel = label_selector_from_dict({"matchLabels": {"app": "web"}})
    made = _version(pod("web-0", uid="u0", owner="sts-uid"), "7")
    facts = cache.begin("default/web", "sts-uid", sel)
    seeded = facts.created(made)
    assert seeded == pod_facts(made)
    facts.end()
    # the informer's object for the same version is another dict with the same content
    echo, later = _version(made, "7"), _version(made, "8")
    later["status"] = {"phase": "Running"}
    facts = cache.begin("default/web", "sts-uid", sel)
    assert facts(echo) is seeded and facts.entry(echo)[2] is True
    assert facts(later) == pod_facts(later) and facts(later).phase == "Running"
    facts.end()
    # through the bulk path as well, and a newer version is never served from the seed
    facts = cache.begin("default/web", "sts-uid", sel)
    other = _version(pod("web-1", uid="u1", owner="sts-uid"), "9")
    f1 = facts.created(other)
    facts.end()
    newer = _version(other, "10")
    newer["metadata"]["labels"] = {"app": "db"}
    facts = cache.begin("default/web", "sts-uid", sel)
    ((_, got, selected),) = facts.entries([newer])
    assert got is not f1 and got == pod_facts(newer) and selected is False
    facts.end()


def test_seeds_need_a_uid_and_resource_version_and_expire() -> None:
    from controllers.statefulset.podfacts import SEED_SYNCS

    cache = PodFactsCache()
    sel = label_selector_from_dict({"matchLabels": {"app": "web"}})
    facts = cache.begin("default/web", "sts-uid", sel)
    facts.created(pod("web-0", uid="u0"))  # no resourceVersion: not kept
    facts.created(_version(pod("web-1", uid="u1"), "5"))
    facts.end()
    entries = cache._sets["default/web"]
    assert list(entries.seeds) == [("u1", "5")]
    for _ in range(SEED_SYNCS):
        cache.begin("default/web", "sts-uid", sel).end()
    assert entries.seeds == {}  # the informer never showed that version: dropped
