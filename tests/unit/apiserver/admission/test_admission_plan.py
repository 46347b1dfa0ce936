"""The admission plan: a plugin left out of a (resource, operation)'s steps because it does not
``handles`` it would have done nothing there; the chain keeps its order; the plan follows edits
of the registry's plugin list."""

from __future__ import annotations

import copy
from dataclasses import fields
from typing import Any

import pytest

from apiserver import errors
from apiserver.admission import CONNECT, CREATE, DELETE, UPDATE, Attributes, Plugin
from apiserver.admission.plan import AdmissionPlan, build_steps
from apiserver.admission.plugins import default_plugins
from apiserver.registry.builtin import builtin_resources
from apiserver.registry.servicealloc import ServiceAllocator
from apiserver.server.instance import build_api
from featuregates import GENERIC_WORKLOAD, FeatureGate

OPERATIONS = (CREATE, UPDATE, DELETE, CONNECT)


class RecordingLookup:
    """A Lookup that answers like a cluster with every namespace and records every read."""

    def __init__(self) -> None:
        self.reads: list[tuple[Any, ...]] = []

    def lookup(self, group: str, plural: str, namespace: str, name: str) -> Any:
        self.reads.append(("lookup", group, plural, namespace, name))
        return {"metadata": {"name": name}}

    def peek(self, group: str, plural: str, namespace: str, name: str) -> Any:
        self.reads.append(("peek", group, plural, namespace, name))
        return {"metadata": {"name": name}}

    def lookup_all(self, group: str, plural: str, namespace: str = "") -> list[Any]:
        self.reads.append(("lookup_all", group, plural, namespace))
        return []

    def peek_all(self, group: str, plural: str, namespace: str = "") -> list[Any]:
        self.reads.append(("peek_all", group, plural, namespace))
        return []

    def stored_count(self, group: str, plural: str) -> int:
        self.reads.append(("stored_count", group, plural))
        return 0


def _bodies(rd: Any) -> list[dict[str, Any]]:
    """Objects of ``rd``'s kind with the fields the built-in plugins act on."""
    base = {"apiVersion": rd.api_version, "kind": rd.kind, "metadata": {"name": "x", "namespace": "ns"}}
    full = copy.deepcopy(base)
    full["spec"] = {
        "priorityClassName": "",
        "tolerations": [],
        "schedulingGroup": {"podGroupName": "pg"},
        "type": "ClusterIP",
        "ports": [{"port": 80, "nodePort": 30080}],
    }
    return [base, full]


def _state(attrs: Attributes) -> dict[str, Any]:
    """Everything of ``attrs`` a plugin may change (copied)."""
    return copy.deepcopy({f.name: getattr(attrs, f.name) for f in fields(attrs) if f.name != "gates"})


def _plugins() -> list[Any]:
    return [*default_plugins(), ServiceAllocator()]


@pytest.mark.parametrize("operation", OPERATIONS)
def test_a_plugin_that_does_not_handle_a_write_does_nothing_to_it(operation: str) -> None:
    """For every built-in resource and operation a plugin declines, its ``admit`` and
    ``validate`` neither change the request, nor raise, nor read anything (with the gates that
    widen what the plugins do turned on)."""
    gates = FeatureGate().with_overrides({GENERIC_WORKLOAD: True})
    declined = 0
    for rd in builtin_resources():
        for plugin in _plugins():
            if plugin.handles(operation, rd):
                continue
            for body in _bodies(rd):
                for sub in ("", "status"):
                    attrs = Attributes(
                        operation,
                        rd,
                        "ns",
                        "x",
                        copy.deepcopy(body) if operation != DELETE else None,
                        copy.deepcopy(body) if operation != CREATE else None,
                        sub,
                        False,
                        gates,
                    )
                    before = _state(attrs)
                    api = RecordingLookup()
                    plugin.admit(attrs, api)
                    plugin.validate(attrs, api)
                    assert _state(attrs) == before, (plugin.name, rd.plural, operation)
                    assert api.reads == [], (plugin.name, rd.plural, operation)
                    declined += 1
    assert declined > 100  # the declarations do leave most pairs out


def test_the_plugins_that_handle_pods_and_events_on_create() -> None:
    api = build_api()
    reg = api.registry
    pods, events = reg.get("", "v1", "pods"), reg.get("", "v1", "events")
    services = reg.get("", "v1", "services")
    plan = AdmissionPlan()

    def names(rd: Any, op: str) -> tuple[list[str], list[str]]:
        s = plan.steps(api.admission, op, rd)
        return [h.__self__.name for h in s.admit], [h.__self__.name for h in s.validate]  # type: ignore[attr-defined]

    dynamic_admit = ["MutatingAdmissionPolicy", "MutatingAdmissionWebhook"]
    dynamic_validate = ["ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook"]
    assert names(pods, CREATE) == (
        ["NamespaceLifecycle", "ServiceAccount", "Priority", "DefaultTolerationSeconds", "PodGroupProtection"]
        + dynamic_admit,
        ["PodGroupProtection", *dynamic_validate],
    )
    assert names(events, CREATE) == (["NamespaceLifecycle", *dynamic_admit], dynamic_validate)
    assert names(events, UPDATE) == (dynamic_admit, dynamic_validate)
    assert names(services, UPDATE)[0] == ["ServiceIPAllocator", *dynamic_admit]


class Stamp(Plugin):
    """A plugin added at run time: no ``handles`` of its own, so it sees every write."""

    name = "Stamp"

    def admit(self, attrs: Attributes, api: Any) -> None:
        if attrs.obj is not None:
            attrs.obj["metadata"].setdefault("labels", {})["stamped"] = "yes"


class Deny(Plugin):
    name = "Deny"

    def validate(self, attrs: Attributes, api: Any) -> None:
        raise errors.forbidden(attrs.rd.plural, attrs.name, attrs.rd.group, "denied by test")


def test_plan_follows_edits_of_the_plugin_list() -> None:
    api = build_api()
    rd = api.registry.get("", "v1", "configmaps")
    body = {"metadata": {"name": "a"}, "data": {}}
    assert "labels" not in api.create(rd, "default", copy.deepcopy(body)).obj["metadata"]
    api.admission.append(Stamp())  # edited in place
    got = api.create(rd, "default", {"metadata": {"name": "b"}, "data": {}}).obj
    assert got["metadata"]["labels"] == {"stamped": "yes"}
    api.admission = [*api.admission, Deny()]  # replaced
    with pytest.raises(errors.StatusError) as e:
        api.create(rd, "default", {"metadata": {"name": "c"}, "data": {}})
    assert e.value.code == 403 and "denied by test" in e.value.message
    api.admission = [p for p in api.admission if not isinstance(p, (Stamp, Deny))]
    assert "labels" not in api.create(rd, "default", {"metadata": {"name": "d"}, "data": {}}).obj["metadata"]
    api.admission[-1] = Stamp()  # one plugin replaced in place: the same list, the same length
    got = api.create(rd, "default", {"metadata": {"name": "e"}, "data": {}}).obj
    assert got["metadata"]["labels"] == {"stamped": "yes"}


def test_steps_keep_the_chain_order_and_leave_out_base_no_ops() -> None:
    class AdmitOnly(Plugin):
        name = "AdmitOnly"

        def admit(self, attrs: Attributes, api: Any) -> None:
            return None

    class ValidateOnly(Plugin):
        name = "ValidateOnly"

        def validate(self, attrs: Attributes, api: Any) -> None:
            return None

    a, v, a2 = AdmitOnly(), ValidateOnly(), AdmitOnly()
    rd = next(r for r in builtin_resources() if r.plural == "configmaps")
    steps = build_steps([a, v, a2], CREATE, rd)
    assert [h.__self__ for h in steps.admit] == [a, a2]  # type: ignore[attr-defined]
    assert [h.__self__ for h in steps.validate] == [v]  # type: ignore[attr-defined]
