"""Feature gates: Kubernetes --feature-gates syntax, stages, lock-to-default, per-component views."""

from __future__ import annotations

import pytest

from featuregates import (
    ALPHA,
    BETA,
    DRA_WORKLOAD_RESOURCE_CLAIMS,
    GENERIC_WORKLOAD,
    WORKLOAD_WITH_STATEFULSET,
    FeatureGate,
    FeatureGateError,
    FeatureSpec,
    parse_feature_gates,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("A=true", {"A": True}),
        ("A=true,B=false", {"A": True, "B": False}),
        (" A = True , B=0 ,", {"A": True, "B": False}),
        ("A=t,B=F,C=1", {"A": True, "B": False, "C": True}),
    ],
)
def test_parse(text: str, expected: dict[str, bool]) -> None:
    assert parse_feature_gates(text) == expected


@pytest.mark.parametrize(
    ("text", "fragment"), [("A", "missing bool value for A"), ("A=yes", "invalid value of A=yes")]
)
def test_parse_errors(text: str, fragment: str) -> None:
    with pytest.raises(FeatureGateError) as e:
        parse_feature_gates(text)
    assert fragment in str(e.value)


def test_defaults_turn_the_kep_stack_on_with_upstream_stages() -> None:
    g = FeatureGate()
    assert (
        g.enabled(WORKLOAD_WITH_STATEFULSET)
        and g.enabled(GENERIC_WORKLOAD)
        and g.enabled(DRA_WORKLOAD_RESOURCE_CLAIMS)
    )
    stages = {name: spec.stage for name, spec, _ in g.items()}
    assert stages[WORKLOAD_WITH_STATEFULSET] == ALPHA and stages[GENERIC_WORKLOAD] == BETA


def test_unknown_gate_is_an_error() -> None:
    with pytest.raises(FeatureGateError) as e:
        FeatureGate.from_string("NoSuchGate=true")
    assert "unrecognized feature gate: NoSuchGate" in str(e.value)


def test_lock_to_default() -> None:
    known = {"Locked": FeatureSpec(True, "", lock_to_default=True)}
    FeatureGate(known, {"Locked": True})
    with pytest.raises(FeatureGateError) as e:
        FeatureGate(known, {"Locked": False})
    assert "locked to true" in str(e.value)


def test_component_views_are_independent() -> None:
    server = FeatureGate.from_string("WorkloadWithStatefulSet=false")
    scheduler = server.with_overrides({GENERIC_WORKLOAD: False})
    assert not server.enabled(WORKLOAD_WITH_STATEFULSET) and server.enabled(GENERIC_WORKLOAD)
    assert not scheduler.enabled(WORKLOAD_WITH_STATEFULSET) and not scheduler.enabled(GENERIC_WORKLOAD)


def test_all_alpha_turns_on_alpha_gates_not_set_explicitly() -> None:
    g = FeatureGate.from_string("AllAlpha=true,CompositePodGroup=false")
    assert g.enabled("PodGroupPreemptionPolicy")
    assert not g.enabled("CompositePodGroup")
