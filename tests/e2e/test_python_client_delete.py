"""DELETE of every served kind through the official Python client decodes into the client's model.

The 37 client's typed ``delete_*`` methods declare what kube's OpenAPI says DELETE returns: the
object for kinds whose storage sets ``ReturnDeletedObject`` (``V1Service``, ``V1Pod``,
``V1StorageClass`` …; a ``Status`` there fails pydantic decoding) and ``object`` for the rest.
The test is parametrised over the server's own resource registry (what discovery lists), checks
each resource really is in legacy discovery, creates one object over HTTP and deletes it with
the typed client. A served kind without a sample below fails, so new kinds get covered.
"""

from __future__ import annotations

import inspect
import re
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from apiserver.api.types import Obj
from apiserver.registry.builtin import builtin_resources
from apiserver.rest.resources import ResourceDef
from tests.e2e.conftest import Server
from tests.e2e.kubectl_util import delete_namespace

pytestmark = pytest.mark.e2e

k8s = pytest.importorskip("kubernetes.client")
config = pytest.importorskip("kubernetes.config")

POD_SPEC = {
    "containers": [{"name": "c", "image": "nginx"}],
    "nodeSelector": {"e2e.gangplane.dev/nowhere": "true"},
}
TEMPLATE = {"metadata": {"labels": {"app": "del"}}, "spec": POD_SPEC}
SELECTOR = {"matchLabels": {"app": "del"}}
RULE = [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]

#: admission objects that match nothing the other tests on the shared server write
NOTHING_RULE = {
    "apiGroups": ["e2e.example.com"],
    "apiVersions": ["v1"],
    "operations": ["CREATE"],
    "resources": ["nothings"],
}
WEBHOOKS = {
    "webhooks": [
        {
            "name": "del.e2e.example.com",
            "clientConfig": {"url": "https://127.0.0.1:1/admit"},
            "rules": [NOTHING_RULE],
            "failurePolicy": "Ignore",
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }
    ]
}

#: (group, plural) -> the fields of a minimal valid object besides apiVersion/kind/metadata.name
SAMPLES: dict[tuple[str, str], Obj] = {
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): WEBHOOKS,
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): WEBHOOKS,
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"): {
        "spec": {
            "matchConstraints": {"resourceRules": [NOTHING_RULE]},
            "validations": [{"expression": "true"}],
        }
    },
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): {
        "spec": {"policyName": "del-none", "validationActions": ["Deny"]}
    },
    ("admissionregistration.k8s.io", "mutatingadmissionpolicies"): {
        "spec": {
            "matchConstraints": {"resourceRules": [NOTHING_RULE]},
            "reinvocationPolicy": "Never",
            "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": "[]"}}],
        }
    },
    ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings"): {"spec": {"policyName": "del-none"}},
    ("scheduling.gangplane.dev", "schedulingrecords"): {
        "subject": {"kind": "Pod", "name": "p"},
        "attempts": [],
    },
    ("", "namespaces"): {},
    ("", "nodes"): {"spec": {"unschedulable": True}},
    ("", "pods"): {"spec": POD_SPEC},
    ("", "services"): {"spec": {"ports": [{"port": 80}]}},
    ("", "endpoints"): {},
    ("", "configmaps"): {"data": {"k": "v"}},
    ("", "secrets"): {"stringData": {"k": "v"}},
    ("", "serviceaccounts"): {},
    ("", "events"): {
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "{ns}"},
        "reason": "Test",
        "message": "m",
        "type": "Normal",
        "source": {"component": "e2e"},
    },
    ("", "persistentvolumeclaims"): {
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "e2e-none",
            "resources": {"requests": {"storage": "1Gi"}},
        }
    },
    ("", "persistentvolumes"): {
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "e2e-none",
            "hostPath": {"path": "/tmp/e2e"},
        }
    },
    ("", "limitranges"): {"spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}}]}},
    ("", "resourcequotas"): {"spec": {"hard": {"pods": "10"}}},
    ("", "replicationcontrollers"): {
        "spec": {"replicas": 0, "selector": {"app": "del"}, "template": TEMPLATE}
    },
    ("", "podtemplates"): {"template": TEMPLATE},
    ("apps", "statefulsets"): {
        "spec": {"replicas": 0, "serviceName": "del", "selector": SELECTOR, "template": TEMPLATE}
    },
    ("apps", "controllerrevisions"): {"revision": 1, "data": {}},
    ("apps", "deployments"): {"spec": {"replicas": 0, "selector": SELECTOR, "template": TEMPLATE}},
    ("apps", "replicasets"): {"spec": {"replicas": 0, "selector": SELECTOR, "template": TEMPLATE}},
    ("apps", "daemonsets"): {"spec": {"selector": SELECTOR, "template": TEMPLATE}},
    ("batch", "jobs"): {
        "spec": {"suspend": True, "template": {"spec": {**POD_SPEC, "restartPolicy": "Never"}}}
    },
    ("batch", "cronjobs"): {
        "spec": {
            "schedule": "0 0 * * *",
            "suspend": True,
            "jobTemplate": {"spec": {"template": {"spec": {**POD_SPEC, "restartPolicy": "Never"}}}},
        }
    },
    ("events.k8s.io", "events"): {
        "regarding": {"kind": "Pod", "name": "p", "namespace": "{ns}"},
        "reason": "Test",
        "note": "n",
        "type": "Normal",
        "action": "Testing",
        "reportingController": "e2e.example.com/c",
        "reportingInstance": "e2e",
        "eventTime": "2026-01-01T00:00:00.000000Z",
    },
    ("discovery.k8s.io", "endpointslices"): {
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.1.2.3"]}],
        "ports": [{"port": 80}],
    },
    ("coordination.k8s.io", "leases"): {"spec": {"holderIdentity": "e2e"}},
    ("policy", "poddisruptionbudgets"): {"spec": {"minAvailable": 1, "selector": SELECTOR}},
    ("scheduling.k8s.io", "priorityclasses"): {"value": 1000},
    ("scheduling.k8s.io", "workloads"): {
        "spec": {"podGroupTemplates": [{"name": "t", "schedulingPolicy": {"gang": {"minCount": 1}}}]}
    },
    ("scheduling.k8s.io", "podgroups"): {"spec": {"schedulingPolicy": {"gang": {"minCount": 1}}}},
    ("scheduling.k8s.io", "compositepodgroups"): {
        "spec": {"workloadRef": {"workloadName": "w", "templateName": "t"}, "schedulingPolicy": {"basic": {}}}
    },
    ("rbac.authorization.k8s.io", "clusterrolebindings"): {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}
    },
    ("rbac.authorization.k8s.io", "clusterroles"): {"rules": RULE},
    ("rbac.authorization.k8s.io", "rolebindings"): {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}
    },
    ("rbac.authorization.k8s.io", "roles"): {"rules": RULE},
    ("storage.k8s.io", "storageclasses"): {"provisioner": "e2e.example.com/none"},
    ("storage.k8s.io", "csidrivers"): {"spec": {}},
    ("networking.k8s.io", "ingresses"): {
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}
    },
    ("networking.k8s.io", "ingressclasses"): {"spec": {"controller": "e2e.example.com/ingress"}},
    ("networking.k8s.io", "networkpolicies"): {"spec": {"podSelector": {}}},
    ("autoscaling", "horizontalpodautoscalers"): {
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 2,
        }
    },
    ("apiregistration.k8s.io", "apiservices"): {
        "spec": {
            "group": "{name}.example.com",
            "version": "v1",
            "groupPriorityMinimum": 100,
            "versionPriority": 10,
        }
    },
    ("apiextensions.k8s.io", "customresourcedefinitions"): {
        "spec": {
            "group": "e2e.example.com",
            "scope": "Namespaced",
            "names": {"plural": "{name}s", "singular": "{name}", "kind": "{kind}", "listKind": "{kind}List"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        }
    },
    ("resource.k8s.io", "resourceclaims"): {
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "e2e-none"}}]}}
    },
    ("resource.k8s.io", "resourceclaimtemplates"): {
        "spec": {
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "e2e-none"}}]}}
        }
    },
    ("resource.k8s.io", "deviceclasses"): {"spec": {}},
    ("resource.k8s.io", "resourceslices"): {
        "spec": {
            "driver": "e2e.example.com",
            "nodeName": "e2e-nowhere",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "devices": [],
        }
    },
}


def _deletable() -> list[ResourceDef]:
    return [d for d in builtin_resources() if "delete" in d.verbs]


def _camel_to_snake(kind: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", kind).lower()


def _api_class(group: str, version: str) -> Any:
    """``CoreV1Api``, ``AppsV1Api``, ``RbacAuthorizationV1Api``, ``SchedulingV1beta1Api`` …"""
    base = group.removesuffix(".k8s.io") if group else "core"
    name = "".join(p.capitalize() for p in base.split(".")) + version.capitalize() + "Api"
    return getattr(k8s, name)


def _fill(value: Any, ns: str, name: str) -> Any:
    if isinstance(value, str):
        kind = "E2e" + name.removeprefix("del-")
        return value.replace("{ns}", ns).replace("{name}", name.replace("-", "")).replace("{kind}", kind)
    if isinstance(value, dict):
        return {k: _fill(v, ns, name) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, ns, name) for v in value]
    return value


@pytest.fixture(scope="module")
def api_client(server: Server) -> Iterator[Any]:
    c = config.new_client_from_config(config_file=str(server.kubeconfig))
    yield c
    c.close()


@pytest.fixture(scope="module")
def ns(server: Server) -> Iterator[str]:
    name = "del-" + uuid.uuid4().hex[:8]
    r = httpx.post(
        server.url + "/api/v1/namespaces",
        json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
    )
    assert r.status_code == 201, r.text
    yield name
    delete_namespace(server, name)


@pytest.mark.parametrize("rd", _deletable(), ids=lambda d: f"{d.plural}.{d.group or 'core'}.{d.version}")
def test_delete_decodes_into_the_client_model(
    rd: ResourceDef, server: Server, api_client: Any, ns: str
) -> None:
    prefix = rd.url_prefix()
    listed = httpx.get(server.url + prefix).json()
    assert rd.plural in {r["name"] for r in listed["resources"]}, f"{rd.plural} is not in {prefix} discovery"
    sample = SAMPLES.get((rd.group, rd.plural))
    assert sample is not None, f"no sample object for {rd.plural}.{rd.group}: add one to SAMPLES"
    name = "del-" + uuid.uuid4().hex[:6]
    body = {
        "apiVersion": rd.api_version,
        "kind": rd.kind,
        "metadata": {"name": name},
        **_fill(sample, ns, name),
    }
    if rd.group == "apiregistration.k8s.io":  # APIService names are <version>.<group>
        body["metadata"]["name"] = f"v1.{name.replace('-', '')}.example.com"
        name = body["metadata"]["name"]
    if rd.plural == "customresourcedefinitions":  # CRD names are <plural>.<group>
        body["metadata"]["name"] = f"{name.replace('-', '')}s.e2e.example.com"
        name = body["metadata"]["name"]
    base = f"{prefix}/namespaces/{ns}/{rd.plural}" if rd.namespaced else f"{prefix}/{rd.plural}"
    made = httpx.post(server.url + base, json=body)
    assert made.status_code == 201, made.text

    if rd.group.endswith(".gangplane.dev"):  # gangplane's own kinds: no typed model, the custom-objects API
        custom = k8s.CustomObjectsApi(api_client)
        declared: Any = object
        if rd.namespaced:
            out = custom.delete_namespaced_custom_object(rd.group, rd.version, ns, rd.plural, name)
        else:
            out = custom.delete_cluster_custom_object(rd.group, rd.version, rd.plural, name)
    else:
        api = _api_class(rd.group, rd.version)(api_client)
        method = getattr(api, f"delete_{'namespaced_' if rd.namespaced else ''}{_camel_to_snake(rd.kind)}")
        declared = inspect.signature(method).return_annotation
        out = method(name, ns) if rd.namespaced else method(name)
    if isinstance(declared, type) and declared is not object:
        # The client decoded the reply into its model: kube answers the object for this kind. (Named,
        # not isinstance: the client loads its models lazily, and pytester's in-process sessions of
        # tests/plugin drop a model module first imported inside them, so a later import is a new class.)
        assert (type(out).__module__, type(out).__qualname__) == (declared.__module__, declared.__qualname__)
        assert out.metadata.name == name and out.metadata.uid == made.json()["metadata"]["uid"]
    else:
        assert isinstance(out, dict)
        if out["kind"] == "Status":
            assert out["status"] == "Success" and out["details"]["name"] == name
            assert (
                out["details"]["kind"] == rd.plural
                and out["details"]["uid"] == made.json()["metadata"]["uid"]
            )
        else:  # held by finalizers (a namespace), returned with its deletionTimestamp
            assert out["kind"] == rd.kind and out["metadata"]["deletionTimestamp"]
