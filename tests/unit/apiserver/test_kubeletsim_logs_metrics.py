"""What simulated containers print (pods/log) and use (metrics.k8s.io), from the pod alone."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from apiserver import errors
from apiserver.kubeletsim import logs, metrics

T0 = "2027-01-15T08:00:00Z"


def pod(**over: object) -> dict:
    p: dict = {
        "metadata": {"name": "p", "namespace": "d", "annotations": {}},
        "spec": {
            "nodeName": "n",
            "containers": [
                {
                    "name": "a",
                    "image": "img:1",
                    "resources": {"requests": {"cpu": "200m", "memory": "128Mi"}},
                },
                {"name": "b", "image": "img:2"},
            ],
        },
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {"name": "a", "state": {"running": {"startedAt": T0}}, "lastState": {}},
                {
                    "name": "b",
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {
                        "terminated": {"exitCode": 1, "startedAt": T0, "finishedAt": "2027-01-15T08:00:05Z"}
                    },
                },
            ],
        },
    }
    p.update(over)
    return p


def test_container_choice_and_kubelets_messages() -> None:
    with pytest.raises(
        errors.StatusError, match=r"a container name must be specified for pod p, choose one of: \[a b\]"
    ):
        logs.choose_container(pod(), "")
    with pytest.raises(errors.StatusError, match="container c is not valid for pod p"):
        logs.choose_container(pod(), "c")
    with pytest.raises(
        errors.StatusError, match='container "b" in pod "p" is waiting to start: CrashLoopBackOff'
    ):
        logs.container_lines(pod(), "b", False)
    with pytest.raises(errors.StatusError, match='previous terminated container "a" in pod "p" not found'):
        logs.container_lines(pod(), "a", True)
    prev = logs.container_lines(pod(), "b", True)
    assert [line.text for line in prev][-1] == "gangplane: simulated container b exited with code 1"


def test_lines_annotations_tail_since_and_timestamps() -> None:
    p = pod()
    p["metadata"]["annotations"] = {"gangplane.dev/log": "one\ntwo", "gangplane.dev/log.b": "bee"}
    lines = logs.container_lines(p, "a", False)
    assert [line.text for line in lines] == ["one", "two"]
    assert logs.render(logs.select(lines, tail=1, since=None)) == b"two\n"
    assert logs.select(lines, tail=None, since=lines[0].ts + 1) == []
    assert logs.render(lines[:1], timestamps=True) == b"2027-01-15T08:00:00.000000000Z one\n"
    assert [line.text for line in logs.container_lines(p, "b", True)][0] == "bee"


def test_usage_from_requests_factor_and_quantities() -> None:
    p = pod()
    a = p["spec"]["containers"][0]
    assert metrics.container_usage(p, a) == {"cpu": Fraction(1, 5), "memory": Fraction(128 * 2**20)}
    p["metadata"]["annotations"] = {"gangplane.dev/usage": "50%"}
    assert metrics.container_usage(p, a)["cpu"] == Fraction(1, 10)
    p["metadata"]["annotations"] = {"gangplane.dev/usage.a": "cpu=1500m"}
    assert metrics.container_usage(p, a) == {"cpu": Fraction(3, 2), "memory": Fraction(128 * 2**20)}
    m = metrics.pod_metrics(p, 1_800_000_000.0)
    assert m is not None and m["containers"] == [
        {"name": "a", "usage": {"cpu": "1500000000n", "memory": "131072Ki"}}
    ]
    p["metadata"]["annotations"] = {"gangplane.dev/usage": "lots"}
    assert (
        metrics.pod_metrics(p, 1_800_000_000.0) is None
    )  # an unreadable annotation: no metrics, as a scrape error
    assert metrics.pod_metrics(pod(status={"phase": "Pending"}), 0.0) is None


def _pod_in(state: dict[str, Any], deleting: bool = False) -> dict[str, Any]:
    """Pod ``web`` on a node, its container ``web`` in ``state``."""
    meta: dict[str, Any] = {"name": "web", "namespace": "ns"}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-06T10:00:05Z"
    return {
        "metadata": meta,
        "spec": {"nodeName": "n1", "containers": [{"name": "web", "image": "pause"}]},
        "status": {"phase": "Running", "containerStatuses": [{"name": "web", "state": state}]},
    }


RUNNING = {"running": {"startedAt": "2026-12-06T10:00:00Z"}}
STOPPED = {
    "terminated": {"exitCode": 0, "startedAt": "2026-12-06T10:00:00Z", "finishedAt": "2026-12-06T10:00:06Z"}
}


def test_a_follow_ends_on_the_stopped_container_when_the_delete_comes_in_the_same_batch() -> None:
    """kubectl logs -f: the kubelet's terminated status and the pod's final delete may reach the
    follow in one watch batch; it still ends on the stopped state (the exit line), not on
    "gone"."""
    running, stopped = _pod_in(RUNNING, deleting=True), _pod_in(STOPPED, deleting=True)
    current, ended = logs.follow_events(running, [("MODIFIED", stopped), ("DELETED", stopped)], "web")
    assert ended and current is stopped
    last = logs.container_lines(current, "web", False)[-1].text
    assert last == "gangplane: simulated container web exited with code 0"
    # the batch is read in order: a later event does not replace the state the follow ended on
    assert logs.follow_events(running, [("MODIFIED", stopped), ("MODIFIED", running)], "web") == (
        stopped,
        True,
    )


def test_a_follow_goes_on_while_the_container_runs_and_ends_when_the_pod_is_gone() -> None:
    running = _pod_in(RUNNING)
    later = _pod_in(RUNNING, deleting=True)
    assert logs.follow_events(running, [("MODIFIED", later)], "web") == (later, False)
    assert logs.follow_events(running, [], "web") == (running, False)
    # deleted while running (no terminated status): ends on the pod's last state
    assert logs.follow_events(running, [("DELETED", later)], "web") == (later, True)
