"""One valid object per kind: where every hostile body starts, and the fuzz's reference objects.

A mutation of a valid object reaches the validation and patch code of that kind; a body made
from nothing stops at the first missing field. Each seed is created once at setup (as
``target``), so updates, patches and deletes meet a real object too. ``name`` and ``namespace``
are filled in by :func:`seed`.
"""

from __future__ import annotations

import copy
from typing import Any

Obj = dict[str, Any]

_POD_SPEC: Obj = {
    "containers": [
        {
            "name": "c",
            "image": "busybox:1.36",
            "ports": [{"containerPort": 80, "protocol": "TCP"}],
            "env": [{"name": "A", "value": "b"}],
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
        }
    ],
    "restartPolicy": "Always",
    "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
}
_TEMPLATE: Obj = {"metadata": {"labels": {"app": "fuzz"}}, "spec": _POD_SPEC}
_MATCH: Obj = {
    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "fuzz"}},
    "objectSelector": {"matchLabels": {"fuzz-admission": "yes"}},
    "resourceRules": [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["configmaps"],
        }
    ],
}
_WEBHOOK: Obj = {
    "name": "target.fuzz.example",
    "clientConfig": {"url": "https://127.0.0.1:1/admit"},
    "rules": _MATCH["resourceRules"],
    "namespaceSelector": _MATCH["namespaceSelector"],
    "objectSelector": _MATCH["objectSelector"],
    "matchConditions": [{"name": "labelled", "expression": "has(object.metadata.labels)"}],
    "failurePolicy": "Ignore",
    "sideEffects": "None",
    "timeoutSeconds": 1,
    "admissionReviewVersions": ["v1"],
}
_SELECTOR: Obj = {"matchLabels": {"app": "fuzz"}}

#: (group, plural) -> the object without metadata.name/namespace
_SEEDS: dict[tuple[str, str], Obj] = {
    ("", "configmaps"): {"data": {"k": "v"}, "binaryData": {"b": "aGk="}},
    ("", "secrets"): {"type": "Opaque", "data": {"k": "dg=="}, "stringData": {"s": "t"}},
    ("", "serviceaccounts"): {"automountServiceAccountToken": False},
    ("", "pods"): {"spec": _POD_SPEC},
    ("", "podtemplates"): {"template": _TEMPLATE},
    ("", "services"): {"spec": {"selector": {"app": "fuzz"}, "ports": [{"port": 80, "targetPort": 8080}]}},
    ("", "endpoints"): {"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]},
    ("", "events"): {
        "involvedObject": {"kind": "Pod", "name": "target", "namespace": "fuzz"},
        "reason": "Fuzz",
        "message": "m",
        "type": "Normal",
        "source": {"component": "fuzz"},
    },
    ("", "limitranges"): {"spec": {"limits": [{"type": "Container", "default": {"cpu": "1"}}]}},
    ("", "resourcequotas"): {"spec": {"hard": {"pods": "1000"}}},
    ("", "persistentvolumeclaims"): {
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    },
    ("", "persistentvolumes"): {
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/tmp/fuzz"},
        }
    },
    ("", "replicationcontrollers"): {
        "spec": {"replicas": 0, "selector": {"app": "fuzz"}, "template": _TEMPLATE}
    },
    ("", "namespaces"): {"spec": {"finalizers": ["kubernetes"]}},
    ("", "nodes"): {
        "spec": {"taints": [{"key": "fuzz", "effect": "NoSchedule"}]},
        "status": {"capacity": {"cpu": "1", "pods": "10"}},
    },
    ("apps", "deployments"): {"spec": {"replicas": 0, "selector": _SELECTOR, "template": _TEMPLATE}},
    ("apps", "replicasets"): {"spec": {"replicas": 0, "selector": _SELECTOR, "template": _TEMPLATE}},
    ("apps", "daemonsets"): {"spec": {"selector": _SELECTOR, "template": _TEMPLATE}},
    ("apps", "statefulsets"): {
        "spec": {
            "replicas": 0,
            "serviceName": "target",
            "podManagementPolicy": "Parallel",
            "selector": _SELECTOR,
            "scheduling": {"schedulingPolicy": {"gang": {}}},
            "template": _TEMPLATE,
        }
    },
    ("apps", "controllerrevisions"): {"revision": 1, "data": {"spec": {}}},
    ("batch", "jobs"): {
        "spec": {
            "suspend": True,
            "completions": 2,
            "parallelism": 1,
            "completionMode": "Indexed",
            "template": {"spec": {**_POD_SPEC, "restartPolicy": "Never"}},
        }
    },
    ("batch", "cronjobs"): {
        "spec": {
            "schedule": "*/5 * * * *",
            "suspend": True,
            "jobTemplate": {"spec": {"template": {"spec": {**_POD_SPEC, "restartPolicy": "Never"}}}},
        }
    },
    ("events.k8s.io", "events"): {
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "fuzz.example/c",
        "reportingInstance": "i",
        "action": "Fuzz",
        "reason": "Fuzz",
        "type": "Normal",
        "regarding": {"kind": "Pod", "name": "target", "namespace": "fuzz"},
        "note": "n",
    },
    ("discovery.k8s.io", "endpointslices"): {
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {"ready": True}}],
        "ports": [{"name": "p", "port": 80, "protocol": "TCP"}],
    },
    ("coordination.k8s.io", "leases"): {"spec": {"holderIdentity": "fuzz", "leaseDurationSeconds": 15}},
    ("policy", "poddisruptionbudgets"): {"spec": {"minAvailable": 1, "selector": _SELECTOR}},
    ("scheduling.k8s.io", "priorityclasses"): {"value": 1000, "description": "fuzz"},
    ("scheduling.k8s.io", "workloads"): {
        "spec": {
            "controllerRef": {"apiGroup": "apps", "kind": "StatefulSet", "name": "target"},
            "podGroupTemplates": [{"name": "web", "schedulingPolicy": {"gang": {"minCount": 2}}}],
        }
    },
    ("scheduling.k8s.io", "podgroups"): {
        "spec": {
            "workloadRef": {"workloadName": "target", "templateName": "web"},
            "schedulingPolicy": {"gang": {"minCount": 2}},
        }
    },
    ("rbac.authorization.k8s.io", "roles"): {
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]
    },
    ("rbac.authorization.k8s.io", "clusterroles"): {
        "rules": [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
            {"nonResourceURLs": ["/healthz"], "verbs": ["get"]},
        ]
    },
    ("rbac.authorization.k8s.io", "rolebindings"): {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "target"},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "fuzz"}],
    },
    ("rbac.authorization.k8s.io", "clusterrolebindings"): {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "User", "name": "fuzz", "apiGroup": "rbac.authorization.k8s.io"}],
    },
    ("storage.k8s.io", "storageclasses"): {
        "provisioner": "fuzz.example/p",
        "reclaimPolicy": "Delete",
        "parameters": {"k": "v"},
    },
    ("storage.k8s.io", "csidrivers"): {"spec": {"attachRequired": False, "podInfoOnMount": True}},
    ("networking.k8s.io", "ingressclasses"): {"spec": {"controller": "fuzz.example/ingress"}},
    ("networking.k8s.io", "ingresses"): {
        "spec": {
            "rules": [
                {
                    "host": "fuzz.example",
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "pathType": "Prefix",
                                "backend": {"service": {"name": "target", "port": {"number": 80}}},
                            }
                        ]
                    },
                }
            ]
        }
    },
    ("networking.k8s.io", "networkpolicies"): {
        "spec": {"podSelector": _SELECTOR, "policyTypes": ["Ingress"], "ingress": [{"ports": [{"port": 80}]}]}
    },
    ("autoscaling", "horizontalpodautoscalers"): {
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "target"},
            "minReplicas": 1,
            "maxReplicas": 3,
        }
    },
    ("resource.k8s.io", "deviceclasses"): {
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "fuzz.example"'}}]}
    },
    ("resource.k8s.io", "resourceclaims"): {
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "target"}}]}}
    },
    ("resource.k8s.io", "resourceclaimtemplates"): {
        "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "target"}}]}}}
    },
    ("resource.k8s.io", "resourceslices"): {
        "spec": {
            "driver": "fuzz.example",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "target",
            "devices": [{"name": "d0"}],
        }
    },
    ("authentication.k8s.io", "tokenreviews"): {"spec": {"token": "not-a-token", "audiences": ["fuzz"]}},
    ("authentication.k8s.io", "selfsubjectreviews"): {},
    ("authorization.k8s.io", "selfsubjectaccessreviews"): {
        "spec": {"resourceAttributes": {"namespace": "fuzz", "verb": "get", "resource": "pods"}}
    },
    ("authorization.k8s.io", "selfsubjectrulesreviews"): {"spec": {"namespace": "fuzz"}},
    ("authorization.k8s.io", "subjectaccessreviews"): {
        "spec": {
            "user": "fuzz",
            "groups": ["system:authenticated"],
            "extra": {"scopes": ["a"]},
            "resourceAttributes": {
                "namespace": "fuzz",
                "verb": "list",
                "group": "apps",
                "resource": "deployments",
            },
        }
    },
    ("authorization.k8s.io", "localsubjectaccessreviews"): {
        "spec": {
            "user": "fuzz",
            "resourceAttributes": {"namespace": "fuzz", "verb": "get", "resource": "pods", "name": "target"},
        }
    },
    ("apiregistration.k8s.io", "apiservices"): {
        "spec": {
            "group": "fuzz.example",
            "version": "v9",
            "groupPriorityMinimum": 1000,
            "versionPriority": 15,
            "service": {"namespace": "fuzz", "name": "target", "port": 443},
            "insecureSkipTLSVerify": True,
        }
    },
    ("apiextensions.k8s.io", "customresourcedefinitions"): {
        "spec": {
            "group": "fuzz.example",
            "names": {"plural": "targets", "singular": "target", "kind": "Target"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "size": {"type": "integer", "minimum": 0},
                                        "tags": {
                                            "type": "array",
                                            "items": {"type": "string"},
                                            "x-kubernetes-list-type": "set",
                                        },
                                    },
                                }
                            },
                        }
                    },
                    "subresources": {
                        "status": {},
                        "scale": {"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size"},
                    },
                }
            ],
        }
    },
    ("fuzz.example", "targets"): {"spec": {"size": 1, "tags": ["a"]}},
    # admissionregistration.k8s.io: a webhook nobody serves (port 1 refuses at once; Ignore), policies
    # that match only what carries the fuzz's own label
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): {"webhooks": [_WEBHOOK]},
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): {
        "webhooks": [{**_WEBHOOK, "reinvocationPolicy": "IfNeeded"}]
    },
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"): {
        "spec": {
            "failurePolicy": "Ignore",
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": _MATCH,
            "matchConditions": [{"name": "labelled", "expression": "has(object.metadata.labels)"}],
            "variables": [{"name": "n", "expression": "object.metadata.name"}],
            "validations": [
                {
                    "expression": "variables.n != 'forbidden'",
                    "messageExpression": "'name ' + variables.n",
                    "reason": "Forbidden",
                }
            ],
            "auditAnnotations": [{"key": "seen", "valueExpression": "variables.n"}],
        }
    },
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): {
        "spec": {
            "policyName": "target",
            "validationActions": ["Warn", "Audit"],
            "paramRef": {"name": "target", "namespace": "fuzz", "parameterNotFoundAction": "Allow"},
            "matchResources": {"objectSelector": {"matchLabels": {"fuzz-admission": "yes"}}},
        }
    },
    ("admissionregistration.k8s.io", "mutatingadmissionpolicies"): {
        "spec": {
            "failurePolicy": "Ignore",
            "matchConstraints": _MATCH,
            "reinvocationPolicy": "IfNeeded",
            "mutations": [
                {
                    "patchType": "ApplyConfiguration",
                    "applyConfiguration": {
                        "expression": 'Object{metadata: Object.metadata{labels: {"m": "1"}}}'
                    },
                },
                {
                    "patchType": "JSONPatch",
                    "jsonPatch": {"expression": '[JSONPatch{op: "add", path: "/data/m", value: "1"}]'},
                },
            ],
        }
    },
    ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings"): {
        "spec": {
            "policyName": "target",
            "matchResources": {"objectSelector": {"matchLabels": {"fuzz-admission": "yes"}}},
        }
    },
}

#: the CRD every fuzz server gets (its name is fixed by its group and plural)
CRD_NAME = "targets.fuzz.example"
#: kinds whose object name is fixed by its content
_FIXED_NAMES = {
    ("apiextensions.k8s.io", "customresourcedefinitions"): CRD_NAME,
    ("apiregistration.k8s.io", "apiservices"): "v9.fuzz.example",
}

#: kinds whose objects no controller writes to once created: their bytes stay put unless a
#: request changes them, so they make reference objects
STABLE = (
    ("", "configmaps"),
    ("", "secrets"),
    ("", "serviceaccounts"),
    ("", "podtemplates"),
    ("", "limitranges"),
    ("coordination.k8s.io", "leases"),
    ("rbac.authorization.k8s.io", "roles"),
    ("rbac.authorization.k8s.io", "rolebindings"),
    ("networking.k8s.io", "networkpolicies"),
    ("networking.k8s.io", "ingresses"),
    ("fuzz.example", "targets"),
    ("rbac.authorization.k8s.io", "clusterroles"),
    ("rbac.authorization.k8s.io", "clusterrolebindings"),
    ("scheduling.k8s.io", "priorityclasses"),
    ("storage.k8s.io", "storageclasses"),
    ("networking.k8s.io", "ingressclasses"),
)


def has_seed(group: str, plural: str) -> bool:
    return (group, plural) in _SEEDS


def seed(group: str, version: str, kind: str, plural: str, name: str, namespace: str) -> Obj:
    """A fresh valid object of this kind named ``name`` (in ``namespace`` when not empty)."""
    body = copy.deepcopy(_SEEDS.get((group, plural), {}))
    meta: Obj = {"name": name, "labels": {"app": "fuzz"}, "annotations": {"fuzz.example/a": "b"}}
    if namespace:
        meta["namespace"] = namespace
    if (group, plural) in _FIXED_NAMES:
        meta["name"] = _FIXED_NAMES[(group, plural)]
    if group in ("authorization.k8s.io", "authentication.k8s.io"):
        meta = {}  # reviews are not stored: kube wants their metadata empty
    return {"apiVersion": f"{group}/{version}" if group else version, "kind": kind, "metadata": meta, **body}
