"""The AdmissionRequest a webhook or policy gets (kube's VersionedAttributes): a ``/scale`` write names
the parent resource with the Scale kind and carries Scale objects untouched; a request matched
through another version carries its objects converted to the matched version."""

from __future__ import annotations

from apiserver.admission import UPDATE, Attributes
from apiserver.admission.policy.request import admission_request, attrs_stored, attrs_view
from apiserver.registry.builtin import builtin_resources
from apiserver.rest.resources import Registry, ResourceDef

REGISTRY = Registry(builtin_resources())
STS = REGISTRY.get("apps", "v1", "statefulsets")
HPA_V1 = REGISTRY.get("autoscaling", "v1", "horizontalpodautoscalers")
HPA_V2 = REGISTRY.get("autoscaling", "v2", "horizontalpodautoscalers")


class Views:
    """Records the conversions asked for (stored objects are v2; v1 is a view)."""

    def __init__(self) -> None:
        self.to: list[str] = []
        self.back: list[str] = []

    def to_view(self, rd: ResourceDef, obj: dict) -> dict:
        self.to.append(rd.version)
        return {**obj, "apiVersion": f"{rd.group}/{rd.version}"}

    def from_view(self, rd: ResourceDef, obj: dict) -> dict:
        self.back.append(rd.version)
        return {**obj, "apiVersion": "autoscaling/v2"}


def scale(replicas: int) -> dict:
    return {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "web"},
        "spec": {"replicas": replicas},
    }


def test_scale_write_names_the_parent_resource_and_the_scale_kind() -> None:
    attrs = Attributes(UPDATE, STS, "ns", "web", scale(3), scale(1), "scale", subresource_kind=True)
    req = admission_request(attrs, Views(), "uid", STS)
    assert req["kind"] == req["requestKind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    assert req["resource"] == {"group": "apps", "version": "v1", "resource": "statefulsets"}
    assert req["subResource"] == req["requestSubResource"] == "scale"
    assert req["object"] == scale(3) and req["oldObject"] == scale(1)
    assert req["object"] is not attrs.obj  # a private copy


def test_objects_are_converted_to_the_matched_version_and_back() -> None:
    api = Views()
    stored = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"}}
    attrs = Attributes(UPDATE, HPA_V2, "ns", "h", stored, stored, "")
    req = admission_request(attrs, api, "uid", HPA_V1)
    assert req["kind"]["version"] == "v1" and req["requestKind"]["version"] == "v2"
    assert req["resource"]["version"] == "v1" and req["requestResource"]["version"] == "v2"
    assert req["object"]["apiVersion"] == "autoscaling/v1" and api.to == ["v1", "v1"]
    assert attrs_stored(api, attrs, req["object"], HPA_V1)["apiVersion"] == "autoscaling/v2"
    assert api.back == ["v1"]
    # the request's own version (the stored one) needs no conversion either way
    assert attrs_view(api, attrs, stored)["apiVersion"] == "autoscaling/v2" and api.to == ["v1", "v1"]
    assert attrs_stored(api, attrs, stored) is stored
