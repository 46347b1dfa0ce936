"""``gangplane explain`` when there is no record: never attempted, or no longer kept (the window)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from gangplane import explain

SERVER = "http://gp.test"


def _serve(monkeypatch: pytest.MonkeyPatch, routes: dict[str, tuple[int, Any]]) -> None:
    def get(url: str, **_: Any) -> httpx.Response:
        code, body = routes.get(url.removeprefix(SERVER), (404, {"kind": "Status", "code": 404}))
        return httpx.Response(code, json=body, request=httpx.Request("GET", url))

    monkeypatch.setattr(explain.httpx, "get", get)


BOUND = {"spec": {"nodeName": "n1"}, "status": {"conditions": [{"type": "PodScheduled", "status": "True"}]}}


def test_a_scheduled_pod_without_a_record_is_no_longer_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    _serve(
        monkeypatch,
        {
            "/api/v1/namespaces/default/pods/web": (200, BOUND),
            "/configz": (200, {"gangplane.dev/schedulingRecords": {"maxSubjects": 40}}),
        },
    )
    msg = explain._why_absent(SERVER, {}, "Pod", "pod", "web", "default")
    assert msg.startswith(
        "no SchedulingRecord for pod/web in namespace default: the scheduler keeps the newest 40 subjects "
        "(--scheduling-records-max-subjects) and this one is no longer among them"
    )


def test_without_the_window_in_configz_the_flag_and_its_default_are_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A scheduler in its own process serves no /configz: the message names the flag and its default."""
    pending = {
        "status": {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}
    }
    _serve(
        monkeypatch,
        {"/api/v1/namespaces/ml/pods/big": (200, pending), "/configz": (200, {"componentconfig": {}})},
    )
    msg = explain._why_absent(SERVER, {}, "Pod", "pod", "big", "ml")
    assert (
        "the scheduler keeps the newest subjects, as many as its --scheduling-records-max-subjects (256 by default)"
        in msg
    )


@pytest.mark.parametrize(
    ("routes", "kind"),
    [
        ({}, "Pod"),  # no such pod
        (
            {"/api/v1/namespaces/default/pods/web": (200, {"status": {"phase": "Pending"}})},
            "Pod",
        ),  # not tried yet
        (
            {"/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups/web": (200, {"status": {}})},
            "PodGroup",
        ),
    ],
)
def test_a_subject_never_attempted_gets_the_plain_message(
    monkeypatch: pytest.MonkeyPatch, routes: dict[str, tuple[int, Any]], kind: str
) -> None:
    _serve(monkeypatch, routes)
    text = kind.lower()
    assert explain._why_absent(SERVER, {}, kind, text, "web", "default") == (
        f"no scheduling record for {text}/web in namespace default "
        "(not attempted yet, or the server runs with --no-scheduling-records)"
    )
