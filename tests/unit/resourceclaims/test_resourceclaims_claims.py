"""resourceclaims.claims: generated names, KEP-5729 matching, which claim an entry stands for, reservations."""

from __future__ import annotations

import pytest

from apiserver.api.types import Obj
from resourceclaims import claims as rc

SHARED = {"name": "shared", "resourceClaimTemplateName": "accel"}


def pod(
    entries: list[Obj], statuses: list[Obj] | None = None, group: str = "pg", uid: str = "pod-uid"
) -> Obj:
    spec: Obj = {"resourceClaims": entries}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {
        "metadata": {"name": "p", "namespace": "ns", "uid": uid},
        "spec": spec,
        "status": {"resourceClaimStatuses": statuses or []},
    }


def pod_group(entries: list[Obj], statuses: list[Obj] | None = None) -> Obj:
    return {
        "metadata": {"name": "pg", "uid": "pg-uid"},
        "spec": {"resourceClaims": entries},
        "status": {"resourceClaimStatuses": statuses or []},
    }


def test_generate_name_cuts_both_parts_proportionally() -> None:
    assert rc.generate_name("web-0", "shared") == "web-0-shared-"
    long = rc.generate_name("a" * 60, "b" * 20)
    assert long == "a" * 41 + "-" + "b" * 13  # no trailing hyphen once cut, as upstream


@pytest.mark.parametrize(
    ("entry", "matches"),
    [
        (dict(SHARED), True),
        ({"name": "shared", "resourceClaimTemplateName": "other"}, False),
        ({"name": "other", "resourceClaimTemplateName": "accel"}, False),
        ({"name": "shared", "resourceClaimName": "accel"}, False),
    ],
)
def test_a_pod_claim_matches_only_when_all_fields_are_equal(entry: Obj, matches: bool) -> None:
    assert (rc.group_claim_entry(entry, pod_group([dict(SHARED)])) is not None) is matches


def test_shared_entry_resolves_through_the_pod_group_status() -> None:
    pg = pod_group([dict(SHARED)], [{"name": "shared", "resourceClaimName": "pg-shared-x"}])
    ref = rc.claim_name_for(pod([dict(SHARED)]), dict(SHARED), pg, True)
    assert (ref.name, ref.shared, ref.known) == ("pg-shared-x", True, True)
    # not recorded yet anywhere: not known
    ref = rc.claim_name_for(pod([dict(SHARED)]), dict(SHARED), pod_group([dict(SHARED)]), True)
    assert not ref.known and ref.shared
    # gate off: the pod's own status decides, the claim is the pod's
    p = pod([dict(SHARED)], [{"name": "shared", "resourceClaimName": "pg-shared-x"}])
    ref = rc.claim_name_for(p, dict(SHARED), pg, False)
    assert (ref.name, ref.shared, ref.known) == ("pg-shared-x", False, True)


def test_a_pod_scoped_claim_recorded_on_the_pod_wins_over_the_group() -> None:
    """Skew: a claim controller without the gate generated a claim for the pod itself."""
    pg = pod_group([dict(SHARED)], [{"name": "shared", "resourceClaimName": "pg-shared-x"}])
    p = pod([dict(SHARED)], [{"name": "shared", "resourceClaimName": "p-shared-y"}])
    ref = rc.claim_name_for(p, dict(SHARED), pg, True)
    assert (ref.name, ref.shared) == ("p-shared-y", False)


def test_named_claims_and_unneeded_entries() -> None:
    named = {"name": "d", "resourceClaimName": "pool"}
    assert rc.claim_name_for(pod([named], group=""), named, None, True) == rc.ClaimRef(
        "d", "pool", False, True
    )
    entry = {"name": "t", "resourceClaimTemplateName": "x"}
    ref = rc.claim_name_for(pod([entry], [{"name": "t"}], group=""), entry, None, True)
    assert ref.known and not ref.needed
    assert rc.pod_claim_names(pod([named, entry], [{"name": "t", "resourceClaimName": "gen"}])) == (
        True,
        ["pool", "gen"],
    )
    assert rc.pod_claim_names(pod([entry])) == (False, [])


def test_reservations() -> None:
    pg = pod_group([])
    claim = {"status": {"allocation": {}, "reservedFor": [rc.pod_group_consumer(pg)]}}
    assert rc.pod_group_consumer(pg) == {
        "apiGroup": "scheduling.k8s.io",
        "resource": "podgroups",
        "name": "pg",
        "uid": "pg-uid",
    }
    assert rc.is_usable_by(claim, pod([])) and not rc.is_usable_by(claim, pod([], group="other"))
    assert rc.is_usable_by(
        {"status": {"allocation": {}, "reservedFor": [{"uid": "pod-uid"}]}}, pod([], group="")
    )
    assert not rc.is_usable_by({"status": {"reservedFor": [{"uid": "pod-uid"}]}}, pod([], group=""))
    full = {"status": {"reservedFor": [{"uid": str(i)} for i in range(256)]}}
    assert not rc.can_be_reserved(full) and rc.can_be_reserved({"status": {}})
