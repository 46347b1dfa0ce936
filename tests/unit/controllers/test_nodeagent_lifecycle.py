"""The lifecycle as data: the shipped defaults load through the user loader, selectors, delays,
weights, templates, and errors that name the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controllers.nodeagent.lifecycle import (
    compile_lifecycle,
    default_lifecycle,
    default_stages,
    field_value,
    lifecycle_for,
    merge_status,
)
from controllers.nodeagent.stages import AgentOptions, PodContext, PodRecord, select
from controllers.nodeagent.stagespec import parse_path
from controllers.nodeagent.userstages import StageError, parse_stages
from gangplane.stagefile import with_stage_file


def test_the_shipped_lifecycle_is_data_read_by_the_user_loader() -> None:
    shipped = default_stages()
    assert not shipped.replace_defaults and not shipped.stages, "no steering stages, only lifecycle ones"
    lc = default_lifecycle()
    assert [s.name for s in lc.pods][:2] == ["pod-orphaned", "pod-delete-unstarted"]
    assert {s.name for s in lc.nodes} == {
        "node-pod-cidr",
        "node-status",
        "node-devices",
        "node-untaint",
        "node-heartbeat",
    }
    assert [s.name for s in lc.leases] == ["lease-renew"]
    assert lifecycle_for(parse_stages([])) is lc


def test_field_paths_pick_list_items_by_key() -> None:
    node = {
        "spec": {"taints": [{"key": "a"}, {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]}
    }
    path = parse_path(".spec.taints[key=node.kubernetes.io/not-ready].effect", "k")
    assert field_value(node, path) == "NoSchedule"
    assert not isinstance(field_value(node, parse_path(".spec.taints[key=b].effect", "k")), str)


def _pod_stage(name: str, **kw: Any) -> dict[str, Any]:
    base = {"name": name, "resourceRef": {"kind": "Pod"}, "next": {"event": {"reason": name}}}
    base.update(kw)
    return base


def _ctx(pod: dict[str, Any], mono: float = 0.0) -> PodContext:
    rec = PodRecord("d/p", (pod.get("metadata") or {}).get("uid", "u"), "n", {})
    return PodContext(pod, rec, None, 0.0, mono, AgentOptions())


POD = {"metadata": {"name": "p", "uid": "u1", "labels": {"app": "w"}}, "status": {"phase": "Running"}}


def test_expressions_labels_and_weight_choose_the_stage() -> None:
    stages = parse_stages(
        [
            _pod_stage("light", selector={"matchLabels": {"app": "w"}}),
            _pod_stage(
                "heavy",
                weight=5,
                selector={
                    "matchExpressions": [{"key": ".status.phase", "operator": "In", "values": ["Running"]}]
                },
            ),
            _pod_stage(
                "other",
                selector={
                    "matchExpressions": [{"key": ".status.phase", "operator": "NotIn", "values": ["Running"]}]
                },
            ),
        ]
    )
    lc = compile_lifecycle(stages.lifecycle)
    picked = select(lc.pods, _ctx(POD), 1.0)
    assert picked is not None and picked[0].name == "heavy"
    picked = select(lc.pods, _ctx({**POD, "status": {}}), 1.0)
    assert picked is not None and picked[0].name == "light", "absent phase reads as '' for NotIn/In"


def test_a_delay_counts_from_when_the_stage_began_to_match_and_jitter_is_stable() -> None:
    stages = parse_stages([_pod_stage("j", delay={"duration": "2s", "jitter": "1s"})])
    (stage,) = compile_lifecycle(stages.lifecycle).pods
    ctx = _ctx(POD, mono=10.0)
    _, due = select([stage], ctx, 1.0) or (None, 0.0)
    assert 12.0 <= due < 13.0
    ctx.mono = 11.0  # re-evaluated later: same deadline
    assert select([stage], ctx, 1.0) == (stage, due)
    other = _ctx({**POD, "metadata": {**POD["metadata"], "uid": "u2"}}, mono=10.0)
    assert select([stage], other, 1.0)[1] != due  # type: ignore[index]


def test_a_data_stage_runs_once_per_pod() -> None:
    (stage,) = compile_lifecycle(parse_stages([_pod_stage("once")]).lifecycle).pods
    ctx = _ctx(POD)
    action = stage.apply(ctx)
    assert action.fired == "once" and [e.reason for e in action.events] == ["once"]
    ctx.record.fired = ctx.record.fired | {action.fired}
    assert not stage.match(ctx)


def test_merge_status_merges_conditions_by_type_and_stamps_transitions() -> None:
    st = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "t0"}]}
    out = merge_status(
        st,
        {
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "R"},
                {"type": "X", "status": "False"},
            ],
            "podIP": "$(podIP)",
        },
        {"podIP": "10.0.0.9"},
        0.0,
    )
    assert out["conditions"][0] == {
        "type": "Ready",
        "status": "True",
        "lastTransitionTime": "t0",
        "reason": "R",
    }
    assert out["conditions"][1]["type"] == "X" and out["conditions"][1]["lastTransitionTime"]
    assert out["podIP"] == "10.0.0.9" and out["phase"] == "Running"
    assert st["conditions"][0].get("reason") is None, "the input is not mutated"


@pytest.mark.parametrize(
    ("stage", "message"),
    [
        (
            {"selector": {"matchExpressions": [{"key": ".status.phase", "operator": "Is"}]}},
            "stages[0].selector.matchExpressions[0].operator",
        ),
        (
            {"selector": {"matchExpressions": [{"key": "status.phase", "operator": "Exists"}]}},
            "stages[0].selector.matchExpressions[0].key",
        ),
        ({"selector": {"when": ["sleepy"]}}, "stages[0].selector.when[0]: unknown condition 'sleepy'"),
        ({"next": {"effect": "explode"}}, "stages[0].next.effect: unknown 'explode'"),
        ({"delay": {"from": "later"}}, "stages[0].delay.from"),
        ({"delay": {"anchor": "birth"}}, "stages[0].delay.anchor"),
        ({"weight": "heavy"}, "stages[0].weight"),
        ({"next": {"statusTemplate": "Running"}}, "stages[0].next.statusTemplate"),
        ({"next": {"event": {"type": "Odd", "reason": "x"}}}, "stages[0].next.events[0].type"),
        ({"resourceRef": {"kind": "Lease"}, "next": {"delete": True}}, "a Lease stage's next is an effect"),
    ],
)
def test_errors_name_the_field(stage: dict[str, Any], message: str) -> None:
    with pytest.raises(StageError, match=message.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
        parse_stages([_pod_stage("s", **stage)])


def test_replace_defaults_in_a_stage_file_survives_joining_the_fleet(tmp_path: Path) -> None:
    f = tmp_path / "stages.yaml"
    f.write_text(
        "replaceDefaults: true\nstages:\n- name: only\n  resourceRef: {kind: Pod}\n  next: {delete: true}\n"
    )
    fleet = with_stage_file(None, f)
    parsed = parse_stages(list(fleet.stages))
    assert parsed.replace_defaults
    assert [s.name for s in lifecycle_for(parsed).pods] == ["only"]
    assert lifecycle_for(parsed).nodes == ()


def test_a_user_stage_named_like_a_shipped_one_is_refused_unless_it_replaces_them() -> None:
    with pytest.raises(StageError, match="'pod-ready': a shipped stage has this name"):
        lifecycle_for(parse_stages([_pod_stage("pod-ready")]))
    assert [
        s.name for s in lifecycle_for(parse_stages([{"replaceDefaults": True}, _pod_stage("pod-ready")])).pods
    ] == ["pod-ready"]


def test_inlined_conditions_read_as_their_predicates() -> None:
    """Every ``when:`` condition the compiler writes inline gives what the predicate of the same
    name gives, over pods in every phase and container state, admitted or not, with or without
    a node: inlining is a speed-up, never a second definition."""
    import itertools

    from controllers.nodeagent.lifecycle import _INLINE
    from controllers.nodeagent.stages import POD_PREDICATES, NodeState

    node = NodeState(name="n1", ordinal=0, internal_ip="172.16.0.2", pod_cidr="10.128.0.0/24")
    states: list[dict[str, Any]] = [{}, {"running": {}}, {"waiting": {}}, {"terminated": {}}]
    phases = [None, "Pending", "Running", "Succeeded", "Failed"]
    checked = 0
    for phase, state, admitted, has_node, claims in itertools.product(
        phases, states, (False, True), (False, True), (False, True)
    ):
        status: dict[str, Any] = {}
        if phase is not None:
            status["phase"] = phase
        if state:
            status["containerStatuses"] = [{"name": "c", "state": state}]
        pod = {"metadata": {"name": "p", "namespace": "default", "uid": "u"}, "status": status}
        rec = PodRecord(key="default/p", uid="u", node="n1", request={}, admitted=admitted)
        ctx = PodContext(pod, rec, node if has_node else None, 0.0, 0.0, AgentOptions(), claims)
        for (kind, name), source in _INLINE.items():
            if kind != "Pod":
                continue
            assert bool(eval(source, {}, {"c": ctx})) == bool(POD_PREDICATES[name](ctx)), (
                name,
                status,
                admitted,
            )  # noqa: S307
            checked += 1
    assert checked > 0


def test_the_stages_of_a_live_or_deleting_pod_select_as_all_of_them() -> None:
    """The shipped stages split by deletion (and user stages that test ``deletionTimestamp`` with
    Exists, DoesNotExist or In, or not at all) pick the same stage and deadline as the whole list,
    for pods in every phase and container state, deleting or not, admitted or not."""
    import itertools

    from controllers.nodeagent.stages import NodeState

    user = parse_stages(
        [
            _pod_stage(
                "gone",
                selector={"matchExpressions": [{"key": ".metadata.deletionTimestamp", "operator": "Exists"}]},
            ),
            _pod_stage(
                "here",
                selector={
                    "matchExpressions": [{"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"}]
                },
            ),
            _pod_stage(
                "text",
                selector={
                    "matchExpressions": [
                        {"key": ".metadata.deletionTimestamp", "operator": "In", "values": [""]}
                    ]
                },
            ),
            _pod_stage("any", delay={"duration": "3s"}),
        ]
    )
    node = NodeState(name="n1", ordinal=0, internal_ip="172.16.0.2", pod_cidr="10.128.0.0/24")
    for lc in (default_lifecycle(), lifecycle_for(user)):
        assert len(lc.pods_live) < len(lc.pods) and len(lc.pods_deleting) < len(lc.pods)
        states: list[dict[str, Any]] = [{}, {"running": {}}, {"waiting": {}}, {"terminated": {}}]
        for phase, state, deleting, admitted, has_node in itertools.product(
            ("Pending", "Running", "Succeeded"), states, (False, True), (False, True), (False, True)
        ):
            md: dict[str, Any] = {"name": "p", "namespace": "default", "uid": "u"}
            if deleting:
                md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
                md["deletionGracePeriodSeconds"] = 30
            status: dict[str, Any] = {"phase": phase}
            if state:
                status["containerStatuses"] = [{"name": "c", "state": state, "restartCount": 0}]
            pod = {
                "metadata": md,
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
                "status": status,
            }
            rec = PodRecord(key="default/p", uid="u", node="n1", request={}, admitted=admitted, started=0.0)
            rec.deleting = 0.0 if deleting else None
            whole = select(
                lc.pods, PodContext(pod, rec, node if has_node else None, 0.0, 0.0, AgentOptions()), 1.0
            )
            part = select(
                lc.pod_stages(deleting),
                PodContext(pod, rec, node if has_node else None, 0.0, 0.0, AgentOptions()),
                1.0,
            )
            assert (whole and (whole[0].name, whole[1])) == (part and (part[0].name, part[1])), (md, status)
