"""The node lifecycle's pure parts: zone states and rates, the rate-limited queue, the
conditions written on a silent node, taint swaps, and toleration times."""

from __future__ import annotations

from controllers.nodelifecycle import health, zones
from controllers.nodelifecycle.tainteviction import eviction_delay


def test_zone_state_follows_compute_zone_state() -> None:
    assert zones.zone_state(["True"] * 4, 0.55) == (0, zones.NORMAL)
    assert zones.zone_state(["True", "True", "Unknown", "False"], 0.55) == (2, zones.NORMAL)  # not > 2
    assert zones.zone_state(["True", "Unknown", "Unknown", "False"], 0.55) == (3, zones.PARTIAL)
    assert zones.zone_state(["True"] * 3 + ["False"] * 3, 0.55) == (3, zones.NORMAL)  # 0.5 < 0.55
    assert zones.zone_state(["Unknown"], 0.55) == (1, zones.FULL)
    cfg = zones.ZoneConfig()
    assert zones.zone_rate(zones.PARTIAL, 50, cfg) == 0.0
    assert zones.zone_rate(zones.PARTIAL, 51, cfg) == 0.01
    assert zones.zone_rate(zones.FULL, 3, cfg) == 0.1


def test_rate_limited_queue_lets_one_through_per_token() -> None:
    q = zones.RateLimitedQueue(0.1)
    for n in ("a", "b", "c"):
        q.add(n)
    assert q.take(0.0) == "a"
    assert q.take(9.9) is None
    assert q.next_token_at(9.9) == 10.0
    assert q.take(10.0) == "b"
    q.swap_rate(0.0, 10.0)
    assert q.take(1000.0) is None and q.next_token_at(1000.0) is None
    assert zones.zone_key({"topology.kubernetes.io/zone": "z1"}) == ":\x00:z1"


def test_unknown_conditions_keep_heartbeats_and_add_never_posted() -> None:
    node = {
        "metadata": {"creationTimestamp": "2027-01-01T00:00:00Z"},
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "lastHeartbeatTime": "2027-01-01T00:01:00Z",
                    "reason": "KubeletReady",
                }
            ]
        },
    }
    conds = {c["type"]: c for c in health.unknown_conditions(node, 1_800_000_000.0) or []}
    assert conds["Ready"]["status"] == "Unknown"
    assert conds["Ready"]["reason"] == health.STOPPED_REASON
    assert conds["Ready"]["lastHeartbeatTime"] == "2027-01-01T00:01:00Z"
    assert conds["PIDPressure"]["reason"] == health.NEVER_REASON
    assert conds["PIDPressure"]["lastHeartbeatTime"] == "2027-01-01T00:00:00Z"
    again = {**node, "status": {"conditions": list(conds.values())}}
    assert health.unknown_conditions(again, 1_800_000_100.0) is None


def test_controller_taints_swap_and_keep_others() -> None:
    mine = [{"key": "dedicated", "value": "x", "effect": "NoExecute"}]
    t = health.with_taint(mine, health.NOT_READY_TAINT, "NoExecute", 1_800_000_000.0)
    assert t[1]["key"] == health.NOT_READY_TAINT and t[1]["timeAdded"]
    t = health.with_taint(t, health.UNREACHABLE_TAINT, "NoExecute", 1_800_000_000.0)
    assert [x["key"] for x in t] == ["dedicated", health.UNREACHABLE_TAINT]
    assert health.with_taint(t, "", "NoExecute", 0.0) == mine
    assert health.taint_key_for("True") == ""
    assert health.taint_key_for("False") == health.NOT_READY_TAINT
    assert health.taint_key_for("Unknown") == health.UNREACHABLE_TAINT


def test_eviction_delay_is_the_shortest_matching_toleration() -> None:
    taint = {"key": health.UNREACHABLE_TAINT, "effect": "NoExecute"}
    pod = {
        "spec": {
            "tolerations": [
                {
                    "key": health.UNREACHABLE_TAINT,
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
                {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60},
                {"key": "other", "operator": "Exists", "tolerationSeconds": 1},
            ]
        }
    }
    assert eviction_delay(pod, [taint]) == 60.0
    assert eviction_delay({"spec": {}}, [taint]) == 0.0
    forever = {"spec": {"tolerations": [{"operator": "Exists"}]}}
    assert eviction_delay(forever, [taint]) is None
    negative = {"spec": {"tolerations": [{"operator": "Exists", "tolerationSeconds": -5}]}}
    assert eviction_delay(negative, [taint]) == 0.0


def test_cluster_command_names_match_the_agent_and_fleet() -> None:
    from controllers.fleet import RACK_LABEL, ZONE_LABEL
    from controllers.nodeagent import node_annotations
    from gangplane import faults

    assert faults.FAULT == node_annotations.FAULT
    assert faults.MODES[:2] == node_annotations.FAULTS
    assert (faults.RACK_LABEL, faults.ZONE_LABEL) == (RACK_LABEL, ZONE_LABEL)
