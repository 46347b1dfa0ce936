"""``gangplane serve`` per-component feature gates: ``--feature-gates`` sets every component and
``--{apiserver,controller-manager,scheduler,kubelet}-feature-gates`` override one (Kubernetes syntax,
listed in ``--help``); each lands in that component's gate view (``ControlPlane.gates_for``)."""

from __future__ import annotations

import pytest

from controllers.manager import GARBAGE_COLLECTOR, NODE_AGENT, STATEFULSET, register_controllers
from featuregates import GENERIC_WORKLOAD, WORKLOAD_WITH_STATEFULSET, FeatureGate
from featuregates.scopes import CONTROLLER_MANAGER
from gangplane.cli import _parser, component_gates, feature_gates_help, main
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from scheduler.component import COMPONENT_NAME as SCHEDULER
from scheduler.component import register_scheduler


def _serve_args(*argv: str) -> dict[str, dict[str, bool]]:
    args = _parser().parse_args(["serve", *argv])
    return component_gates(args, FeatureGate.from_string(args.feature_gates))


def test_help_lists_every_gate_with_stage_and_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = capsys.readouterr().out
    for flag in (
        "--feature-gates",
        "--apiserver-feature-gates",
        "--controller-manager-feature-gates",
        "--scheduler-feature-gates",
        "--kubelet-feature-gates",
    ):
        assert flag in out
    assert "GenericWorkload=true|false (BETA - default=true)" in out
    assert "PodGroupPreemptionPolicy=true|false (ALPHA - default=false)" in out
    assert feature_gates_help().splitlines()[0].endswith("Options are:")


def test_component_flags_map_to_gate_views() -> None:
    got = _serve_args(
        "--feature-gates",
        "TopologyAwareWorkloadScheduling=false",
        "--scheduler-feature-gates",
        "GenericWorkload=false",
        "--controller-manager-feature-gates",
        "WorkloadWithStatefulSet=false",
        "--apiserver-feature-gates",
        "PodGroupPreemptionPolicy=true",
        "--kubelet-feature-gates",
        "DRAWorkloadResourceClaims=false",
    )
    assert got == {
        "scheduler": {GENERIC_WORKLOAD: False},
        CONTROLLER_MANAGER: {WORKLOAD_WITH_STATEFULSET: False},
        "apiserver": {"PodGroupPreemptionPolicy": True},
        NODE_AGENT: {"DRAWorkloadResourceClaims": False},
    }
    assert _serve_args() == {}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--scheduler-feature-gates", "Foo=true"],
            "invalid --scheduler-feature-gates: unrecognized feature gate: Foo",
        ),
        (
            ["--controller-manager-feature-gates", "GenericWorkload=maybe"],
            "invalid --controller-manager-feature-gates: invalid value of GenericWorkload=maybe",
        ),
        (
            ["--kubelet-feature-gates", "GenericWorkload"],
            "invalid --kubelet-feature-gates: missing bool value",
        ),
        (["--feature-gates", "Nope=true"], "invalid --feature-gates: unrecognized feature gate: Nope"),
    ],
)
def test_bad_component_gates_exit_2_naming_the_flag(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--port", "0", *argv]) == 2
    assert message in capsys.readouterr().err


def test_views_global_then_group_then_component() -> None:
    cp = ControlPlane(
        ControlPlaneOptions(
            gates=FeatureGate.from_string("TopologyAwareWorkloadScheduling=false"),
            component_gates={
                CONTROLLER_MANAGER: {WORKLOAD_WITH_STATEFULSET: False, GENERIC_WORKLOAD: False},
                SCHEDULER: {GENERIC_WORKLOAD: False},
                STATEFULSET: {GENERIC_WORKLOAD: True},
            },
        )
    )
    register_controllers(cp, "*")
    register_scheduler(cp)
    # the controller-manager flag reaches every controller, not the node agent or the scheduler
    gc = cp.gates_for(GARBAGE_COLLECTOR)
    assert not gc.enabled(WORKLOAD_WITH_STATEFULSET) and not gc.enabled(GENERIC_WORKLOAD)
    sts = cp.gates_for(STATEFULSET)
    assert not sts.enabled(WORKLOAD_WITH_STATEFULSET) and sts.enabled(GENERIC_WORKLOAD)
    agent = cp.gates_for(NODE_AGENT)
    assert agent.enabled(WORKLOAD_WITH_STATEFULSET) and agent.enabled(GENERIC_WORKLOAD)
    sched = cp.gates_for(SCHEDULER)
    assert sched.enabled(WORKLOAD_WITH_STATEFULSET) and not sched.enabled(GENERIC_WORKLOAD)
    # --feature-gates applies everywhere
    for name in (GARBAGE_COLLECTOR, STATEFULSET, NODE_AGENT, SCHEDULER, "apiserver"):
        assert not cp.gates_for(name).enabled("TopologyAwareWorkloadScheduling")


def test_component_contexts_carry_the_views_the_flags_wrote() -> None:
    args = _parser().parse_args(
        [
            "serve",
            "--kubelet-feature-gates",
            "DRAWorkloadResourceClaims=false",
            "--controller-manager-feature-gates",
            "WorkloadWithStatefulSet=false",
        ]
    )
    gates = FeatureGate.from_string(args.feature_gates)
    cp = ControlPlane(ControlPlaneOptions(gates=gates, component_gates=component_gates(args, gates)))
    register_controllers(cp, "*")
    # what each factory receives (ctx.gates) is the view of its binary
    assert not cp.context_for(NODE_AGENT).gates.enabled("DRAWorkloadResourceClaims")
    assert cp.context_for(NODE_AGENT).gates.enabled(WORKLOAD_WITH_STATEFULSET)
    assert not cp.context_for(STATEFULSET).gates.enabled(WORKLOAD_WITH_STATEFULSET)
    assert cp.context_for(STATEFULSET).gates.enabled("DRAWorkloadResourceClaims")
