"""KEP-6277 Beta graduation criteria, admission side, with gangplane's proposal gates on:

* "Support user-configurable gang.minCount … relax the field-level immutability accordingly"
  (``StatefulSetWorkloadUserMinCount``);
* "decide and implement rollingUpdate.partition support" (``StatefulSetWorkloadPartition``).

With the gates off the Alpha rules of test_statefulset_validation_kep6277.py hold unchanged.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.registry.strategies.statefulset_scheduling import (
    statefulset_build_options,
    statefulset_workload_item,
)
from apiserver.workloadbuilder import new_builder
from featuregates import STATEFULSET_WORKLOAD_PARTITION, STATEFULSET_WORKLOAD_USER_MIN_COUNT, FeatureGate
from tests.unit.apiserver.registry.test_statefulset_validation_kep6277 import (
    BASIC,
    GANG,
    IMMUTABLE,
    MIN_COUNT,
    PARTITION,
    TOPOLOGY,
    create_errors,
    ctx,
    sts,
    update_errors,
)

ON = {STATEFULSET_WORKLOAD_USER_MIN_COUNT: True}


def gang(min_count: int | None = None, **extra: Any) -> dict[str, Any]:
    g: dict[str, Any] = {} if min_count is None else {"minCount": min_count}
    return {"schedulingPolicy": {"gang": g}, **extra}


def too_big(count: int, replicas: int) -> str:
    return (
        f"spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: {count}: "
        f"must be less than or equal to spec.replicas ({replicas})"
    )


# -- user minCount ------------------------------------------------------------------------------


@pytest.mark.parametrize(("count", "replicas"), [(1, 5), (3, 5), (5, 5), (3, 0)])
def test_user_min_count_is_accepted_within_replicas(count: int, replicas: int) -> None:
    assert create_errors(sts(gang(count), replicas=replicas), ctx(**ON)) == []
    # the Alpha rule with the gate off
    assert create_errors(sts(gang(count), replicas=replicas)) == [MIN_COUNT]


def test_user_min_count_above_replicas_or_below_one_is_rejected() -> None:
    assert create_errors(sts(gang(6), replicas=5), ctx(**ON)) == [too_big(6, 5)]
    errs = create_errors(sts(gang(0), replicas=5), ctx(**ON))
    assert errs and all("minCount" in e for e in errs)
    assert any("must be greater than or equal to 1" in e for e in errs)


def test_min_count_may_be_set_changed_and_removed_in_place() -> None:
    c = ctx(**ON)
    assert update_errors(sts(gang(3), replicas=5), sts(gang(), replicas=5), c) == []
    assert update_errors(sts(gang(4), replicas=5), sts(gang(3), replicas=5), c) == []
    assert update_errors(sts(gang(), replicas=5), sts(gang(3), replicas=5), c) == []
    assert update_errors(sts(gang(6), replicas=5), sts(gang(3), replicas=5), c) == [too_big(6, 5)]
    # gate off: the whole field stays immutable (Alpha)
    assert update_errors(sts(gang(3), replicas=5), sts(gang(), replicas=5)) == [IMMUTABLE, MIN_COUNT]


def test_scale_keeps_the_user_value_and_cannot_go_below_it_except_to_zero() -> None:
    c = ctx(**ON)
    old = sts(gang(3), replicas=5)
    assert update_errors(sts(gang(3), replicas=7), old, c) == []
    assert update_errors(sts(gang(3), replicas=0), old, c) == []
    assert update_errors(sts(gang(3), replicas=2), old, c) == [too_big(3, 2)]


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (None, gang(3), [IMMUTABLE]),
        (gang(3), None, [IMMUTABLE]),
        (
            gang(3),
            BASIC,
            [
                "spec.scheduling.schedulingPolicy: Invalid value: null: may not change between basic and gang "
                "after creation; only gang.minCount may be changed"
            ],
        ),
        (
            gang(3),
            gang(3, schedulingConstraints=TOPOLOGY),
            ["spec.scheduling.schedulingConstraints: Invalid value: null: field is immutable"],
        ),
        (
            gang(3),
            gang(2, disruptionMode={"all": {}}),
            ["spec.scheduling.disruptionMode: Invalid value: null: field is immutable"],
        ),
    ],
    ids=["add", "remove", "gang-to-basic", "constraints", "disruption-mode"],
)
def test_the_rest_of_spec_scheduling_stays_immutable(old: Any, new: Any, want: list[str]) -> None:
    def obj(s: Any) -> dict[str, Any]:
        return sts(replicas=5) if s is None else sts(s, replicas=5)

    assert update_errors(obj(new), obj(old), ctx(**ON)) == want


@pytest.mark.parametrize(("user", "replicas", "want"), [(3, 5, 3), (3, 7, 3), (3, 0, 3), (None, 5, 5)])
def test_controller_item_keeps_a_user_min_count(user: int | None, replicas: int, want: int) -> None:
    obj = sts(gang(user), replicas=replicas)
    gates = FeatureGate().with_overrides(ON)
    wl = new_builder(statefulset_workload_item(obj, gates), statefulset_build_options(obj)).build_workload()
    assert wl["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {"gang": {"minCount": want}}
    assert obj["spec"]["scheduling"] == gang(user)  # the derived value is never written back


# -- partition ------------------------------------------------------------------------------------


def test_partition_is_admitted_with_scheduling_only_with_the_gate() -> None:
    c = ctx(**{STATEFULSET_WORKLOAD_PARTITION: True})
    assert create_errors(sts(GANG, partition=2), c) == []
    assert update_errors(sts(GANG, partition=2), sts(GANG, partition=0), c) == []
    assert create_errors(sts(GANG, partition=2)) == [PARTITION]
    assert update_errors(sts(GANG, partition=2), sts(GANG, partition=0)) == [PARTITION]
