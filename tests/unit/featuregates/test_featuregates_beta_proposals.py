"""gangplane's own gates for KEP-6277's Beta questions and the KEP-6413 proposal: off by default,
labelled as gangplane proposals in ``--help`` (never mistaken for an upstream stage), and turned on
by ``AllAlpha=true`` as kube's AllAlpha turns on alpha gates."""

from __future__ import annotations

import pytest

from featuregates import (
    KEP_6277_BETA_PROPOSAL,
    KEP_6413_PROPOSAL,
    POD_GROUP_REPLACEMENTS_SCHEDULE_FREELY,
    POD_GROUP_RUNTIME_SATISFACTION,
    STATEFULSET_WORKLOAD_BETA_METRICS,
    STATEFULSET_WORKLOAD_CLAIM_RELEASE,
    STATEFULSET_WORKLOAD_GANG_ROLLING_UPDATE,
    STATEFULSET_WORKLOAD_PARTITION,
    STATEFULSET_WORKLOAD_STATUS_CONDITION,
    STATEFULSET_WORKLOAD_USER_MIN_COUNT,
    FeatureGate,
)
from gangplane.cli import main

KEP_6277_GATES = (
    STATEFULSET_WORKLOAD_USER_MIN_COUNT,
    STATEFULSET_WORKLOAD_PARTITION,
    STATEFULSET_WORKLOAD_GANG_ROLLING_UPDATE,
    STATEFULSET_WORKLOAD_CLAIM_RELEASE,
    STATEFULSET_WORKLOAD_STATUS_CONDITION,
    STATEFULSET_WORKLOAD_BETA_METRICS,
)
KEP_6413_GATES = (POD_GROUP_RUNTIME_SATISFACTION, POD_GROUP_REPLACEMENTS_SCHEDULE_FREELY)


@pytest.mark.parametrize("name", [*KEP_6277_GATES, *KEP_6413_GATES])
def test_proposal_gates_are_off_by_default_and_on_with_all_alpha(name: str) -> None:
    assert not FeatureGate().enabled(name)
    assert FeatureGate.from_string("AllAlpha=true").enabled(name)
    assert not FeatureGate.from_string(f"AllAlpha=true,{name}=false").enabled(name)
    assert not FeatureGate.from_string("AllBeta=true").enabled(name)


def test_help_shows_the_proposal_as_stage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = capsys.readouterr().out
    for name in KEP_6277_GATES:
        assert f"{name}=true|false ({KEP_6277_BETA_PROPOSAL} - default=false)" in out
    for name in KEP_6413_GATES:
        assert f"{name}=true|false ({KEP_6413_PROPOSAL} - default=false)" in out
    # upstream gates keep upstream's stage names
    assert "WorkloadWithStatefulSet=true|false (ALPHA - default=true)" in out
