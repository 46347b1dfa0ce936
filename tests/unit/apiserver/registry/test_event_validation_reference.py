"""``legacy_validate_event`` against itself with its namespace check made afresh every time.

The validator renders its paths once and remembers the namespace check per namespace string;
over varied Events, valid and not (namespaces that clash with the involved object's, malformed
or over-long namespaces, series-style Events with and without their required fields, values of
the wrong type), it must answer exactly the errors it answers without the remembered check, in the
same order.
"""

from __future__ import annotations

import itertools
import random
from typing import Any
from unittest import mock

import pytest

from apiserver import field
from apiserver.field import ErrorList
from apiserver.registry.strategies.core import event as event_module
from apiserver.registry.strategies.core.common import NOTE_LIMIT
from apiserver.registry.strategies.core.event import legacy_validate_event
from apiserver.validation import names


def _plain_namespace_messages(ns: str) -> tuple[str, ...]:
    return tuple(names.is_dns1123_subdomain(ns))


def reference_validate(event: Any, namespace: str, reporting_field: str = "reportingComponent") -> ErrorList:
    """``legacyValidateEvent`` with the namespace asked afresh every time (no remembered answer)."""
    with mock.patch.object(event_module, "_namespace_messages", _plain_namespace_messages):
        return legacy_validate_event(event, namespace, reporting_field)


NAMESPACES = [
    "",
    "default",
    "kube-system",
    "team-a",
    "Team_A",
    "-bad",
    "a." * 120 + "b",  # 241 characters: valid
    "a" * 253,
    "a" * 254,  # one too long
    "x" * 400 + "_",  # too long and malformed
    "ns.with.dots",
    "trailing-",
]
VALUES: list[Any] = ["", "kubelet", "Kubelet/x", "a" * 129, 7, None, {"x": 1}]


def _random_event(rng: random.Random) -> tuple[dict[str, Any], str]:
    ev: dict[str, Any] = {"apiVersion": "v1", "kind": "Event"}
    md: dict[str, Any] = {"name": f"p.{rng.randrange(1 << 30):x}"}
    if rng.random() < 0.8:
        md["namespace"] = rng.choice(NAMESPACES)
    ev["metadata"] = md if rng.random() < 0.95 else rng.choice([None, "x", []])
    involved: dict[str, Any] = {"kind": "Pod", "name": "p"}
    if rng.random() < 0.8:
        involved["namespace"] = rng.choice([*NAMESPACES, 5])
    ev["involvedObject"] = involved if rng.random() < 0.95 else rng.choice([None, "x"])
    if rng.random() < 0.4:
        ev["eventTime"] = rng.choice(["2026-12-05T09:00:00.000000Z", "", None, 0])
    for key in ("reportingComponent", "reportingInstance", "action", "reason"):
        if rng.random() < 0.7:
            ev[key] = rng.choice(VALUES)
    if rng.random() < 0.5:
        ev["message"] = rng.choice(["Started container c", "m" * NOTE_LIMIT, "m" * (NOTE_LIMIT + 1), 3])
    request_ns = rng.choice(["", *NAMESPACES[:6]])
    return ev, request_ns


def _render(errs: ErrorList) -> list[tuple[str, str, str, str]]:
    return [(str(e.type), e.field, repr(e.bad_value), e.detail) for e in errs]


@pytest.mark.parametrize("seed", range(4))
def test_same_errors_as_the_plain_validation(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(2500):
        ev, request_ns = _random_event(rng)
        for reporting_field in ("reportingComponent", "reportingController"):
            want = _render(reference_validate(ev, request_ns, reporting_field))
            # twice: the second answer comes from the remembered namespace check
            assert _render(legacy_validate_event(ev, request_ns, reporting_field)) == want
            assert _render(legacy_validate_event(ev, request_ns, reporting_field)) == want


def test_every_namespace_pair() -> None:
    """Each request namespace against each involved-object namespace, with and without eventTime."""
    for ns, involved, event_time in itertools.product(NAMESPACES, NAMESPACES, ("", "2026-12-05T09:00:00Z")):
        ev = {"metadata": {"name": "e", "namespace": ns}, "involvedObject": {"namespace": involved}}
        if event_time:
            ev |= {"eventTime": event_time, "reportingComponent": "c", "reportingInstance": "i"}
            ev |= {"action": "A", "reason": "R"}
        assert _render(legacy_validate_event(ev, ns)) == _render(reference_validate(ev, ns))


def test_a_returned_list_is_the_callers() -> None:
    """The remembered check hands out fresh errors: a caller extending its list changes no later answer."""
    ev = {"metadata": {"namespace": "Bad_NS"}, "involvedObject": {"namespace": "Bad_NS"}}
    first = legacy_validate_event(ev, "")
    first.append(field.required("x"))
    assert _render(legacy_validate_event(ev, "")) == _render(reference_validate(ev, ""))


class _Str(str):
    """A ``str`` subclass (the fast path leaves it to the rules)."""


@pytest.mark.parametrize("seed", range(4))
def test_the_recorders_event_is_answered_as_the_rules_answer(seed: int) -> None:
    """The answer from the recorder's Event's facts (session 18) against the rules step by step,
    over random Events, half of them with the involved object in the request's namespace."""
    rng = random.Random(seed)
    fast = 0
    for _ in range(2500):
        ev, request_ns = _random_event(rng)
        if rng.random() < 0.5 and isinstance(ev.get("involvedObject"), dict):
            ev["involvedObject"]["namespace"] = rng.choice([request_ns, request_ns, _Str(request_ns)])
        if rng.random() < 0.2:
            request_ns = rng.choice([_Str(request_ns), "a" * 254, "a" * 253])
        for reporting_field in ("reportingComponent", "reportingController"):
            want = _render(event_module._legacy_rules(ev, request_ns, reporting_field))
            assert _render(legacy_validate_event(ev, request_ns, reporting_field)) == want, (ev, request_ns)
            fast += not want
    assert fast > 400  # Events without an error (the recorder's shape among them) came up
