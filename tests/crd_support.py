"""CRD bodies shared by the apiextensions tests (unit, integration, e2e)."""

from __future__ import annotations

import copy
from typing import Any

from apiserver.api.types import Obj
from apiserver.client.interface import GVR

CRDS = GVR("apiextensions.k8s.io", "v1", "customresourcedefinitions")
CRONTABS = GVR("stable.example.com", "v1", "crontabs")

CRONTAB_SCHEMA: Obj = {
    "type": "object",
    "description": "CronTab runs an image on a schedule.",
    "properties": {
        "spec": {
            "type": "object",
            "description": "Desired state of the CronTab.",
            "required": ["cronSpec"],
            "x-kubernetes-validations": [
                {
                    "rule": "self.replicas <= self.maxReplicas",
                    "message": "replicas must not exceed maxReplicas",
                },
                {
                    "rule": "self.replicas >= oldSelf.replicas || self.allowScaleDown",
                    "messageExpression": "'cannot scale down from ' + string(oldSelf.replicas) + ' to ' + string(self.replicas)",
                },
            ],
            "properties": {
                "cronSpec": {"type": "string", "description": "When to run.", "pattern": r"^[0-9*/ ,-]+$"},
                "image": {"type": "string", "maxLength": 64},
                "replicas": {"type": "integer", "minimum": 0, "default": 1},
                "maxReplicas": {"type": "integer", "default": 10},
                "allowScaleDown": {"type": "boolean", "default": True},
                "mode": {"type": "string", "enum": ["Allow", "Forbid"]},
                "port": {"x-kubernetes-int-or-string": True},
                "selector": {"type": "string"},
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                    },
                },
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                },
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "selector": {"type": "string"},
                "phase": {"type": "string"},
            },
        },
    },
}


def crontab_crd(*, scope: str = "Namespaced", versions: list[Obj] | None = None, **names: Any) -> Obj:
    """The CronTab CRD of kube's documentation, with status/scale, printer columns and CEL rules."""
    n = {
        "plural": "crontabs",
        "singular": "crontab",
        "kind": "CronTab",
        "shortNames": ["ct"],
        "categories": ["all"],
    }
    n.update(names)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{n['plural']}.stable.example.com"},
        "spec": {
            "group": "stable.example.com",
            "scope": scope,
            "names": n,
            "versions": versions
            if versions is not None
            else [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": copy.deepcopy(CRONTAB_SCHEMA)},
                    "subresources": {
                        "status": {},
                        "scale": {
                            "specReplicasPath": ".spec.replicas",
                            "statusReplicasPath": ".status.replicas",
                            "labelSelectorPath": ".status.selector",
                        },
                    },
                    "additionalPrinterColumns": [
                        {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
                        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                        {"name": "Image", "type": "string", "jsonPath": ".spec.image", "priority": 1},
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    ],
                }
            ],
        },
    }


def crontab(name: str, ns: str = "default", version: str = "v1", **spec: Any) -> Obj:
    body: Obj = {"cronSpec": "*/5 * * * *", "image": "cron:1"}
    body.update(spec)
    return {
        "apiVersion": f"stable.example.com/{version}",
        "kind": "CronTab",
        "metadata": {"name": name, "namespace": ns},
        "spec": body,
    }


def condition(crd: Obj, ctype: str) -> Obj | None:
    for c in (crd.get("status") or {}).get("conditions") or ():
        if c.get("type") == ctype:
            return c
    return None
