"""kube's defaults and validation (field paths and messages) for the everyday kinds clients assume:
RBAC, ReplicationController/PodTemplate, StorageClass/CSIDriver, Ingress/IngressClass/NetworkPolicy,
autoscaling/v2 HPA, APIService and the authorization reviews; plus the bootstrap objects."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.registry.generic import GenericStore, WriteOptions
from apiserver.server.instance import build_api


@pytest.fixture
def api() -> GenericStore:
    return build_api()


def create(
    api: GenericStore, group: str, plural: str, body: Obj, ns: str = "default", version: str = "v1"
) -> Obj:
    rd = api.registry.get(group, version, plural)
    assert rd is not None, plural
    return api.create(rd, ns if rd.namespaced else "", body).obj


def invalid(
    api: GenericStore, group: str, plural: str, body: Obj, ns: str = "default", version: str = "v1"
) -> list[str]:
    with pytest.raises(errors.StatusError) as e:
        create(api, group, plural, body, ns, version)
    assert e.value.code == 422, e.value.message
    return [f"{c['field']}: {c['message']}" for c in e.value.details["causes"]]


def update_invalid(
    api: GenericStore, group: str, plural: str, name: str, body: Obj, ns: str = "", version: str = "v1"
) -> list[str]:
    rd = api.registry.get(group, version, plural)
    assert rd is not None
    with pytest.raises(errors.StatusError) as e:
        api.update(rd, ns, name, body, WriteOptions())
    assert e.value.code == 422, e.value.message
    return [f"{c['field']}: {c['message']}" for c in e.value.details["causes"]]


RBAC = "rbac.authorization.k8s.io"
CONTAINERS = [{"name": "c", "image": "nginx"}]


# ------------------------------------------------------------------------------------ RBAC


def test_role_rules_need_verbs_groups_and_resources(api: GenericStore) -> None:
    assert invalid(
        api,
        RBAC,
        "roles",
        {"metadata": {"name": "r"}, "rules": [{"verbs": []}, {"verbs": ["get"], "nonResourceURLs": ["/x"]}]},
    ) == [
        "rules[0].verbs: Required value: verbs must contain at least one value",
        "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
        "rules[0].resources: Required value: resource rules must supply at least one resource",
        'rules[1].nonResourceURLs: Invalid value: ["/x"]: namespaced rules cannot apply to non-resource URLs',
    ]
    ok = create(
        api,
        RBAC,
        "roles",
        {"metadata": {"name": "r"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]},
    )
    assert "generation" not in ok["metadata"]


def test_role_names_are_path_segments(api: GenericStore) -> None:
    assert invalid(api, RBAC, "roles", {"metadata": {"name": "a/b"}}) == [
        "metadata.name: Invalid value: \"a/b\": may not contain '/'"
    ]
    assert (
        create(api, RBAC, "roles", {"metadata": {"name": "system:thing"}})["metadata"]["name"]
        == "system:thing"
    )


def test_cluster_role_rules_and_aggregation_rule(api: GenericStore) -> None:
    assert invalid(
        api,
        RBAC,
        "clusterroles",
        {
            "metadata": {"name": "c"},
            "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"], "resources": ["pods"]}],
            "aggregationRule": {"clusterRoleSelectors": []},
        },
    ) == [
        'rules[0].nonResourceURLs: Invalid value: ["/healthz"]: rules cannot apply to both regular resources and non-resource URLs',
        "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil",
    ]
    made = create(
        api,
        RBAC,
        "clusterroles",
        {"metadata": {"name": "urls"}, "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]},
    )
    assert made["rules"][0]["nonResourceURLs"] == ["/healthz"]


def test_role_binding_defaults_and_validation(api: GenericStore) -> None:
    rb = create(
        api,
        RBAC,
        "rolebindings",
        {
            "metadata": {"name": "b"},
            "roleRef": {"kind": "Role", "name": "r"},
            "subjects": [
                {"kind": "User", "name": "alice"},
                {"kind": "ServiceAccount", "name": "default", "namespace": "default"},
            ],
        },
    )
    assert rb["roleRef"]["apiGroup"] == RBAC
    assert rb["subjects"][0]["apiGroup"] == RBAC and "apiGroup" not in rb["subjects"][1]
    assert invalid(
        api,
        RBAC,
        "rolebindings",
        {
            "metadata": {"name": "bad"},
            "roleRef": {"apiGroup": "x", "kind": "Secret", "name": ""},
            "subjects": [
                {"kind": "Robot", "name": "r2"},
                {"kind": "ServiceAccount", "name": "Bad_Name", "apiGroup": "x"},
            ],
        },
    ) == [
        'roleRef.apiGroup: Unsupported value: "x": supported values: "rbac.authorization.k8s.io"',
        'roleRef.kind: Unsupported value: "Secret": supported values: "Role", "ClusterRole"',
        "roleRef.name: Required value",
        'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
        'subjects[1].name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case '
        "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        'subjects[1].apiGroup: Unsupported value: "x": supported values: ""',
    ]


def test_role_ref_is_immutable_and_cluster_bindings_need_namespaces(api: GenericStore) -> None:
    create(
        api,
        RBAC,
        "clusterrolebindings",
        {"metadata": {"name": "crb"}, "roleRef": {"kind": "ClusterRole", "name": "view"}},
    )
    msgs = update_invalid(
        api,
        RBAC,
        "clusterrolebindings",
        "crb",
        {"metadata": {"name": "crb"}, "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "edit"}},
    )
    assert msgs == [
        'roleRef: Invalid value: {"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"edit"}: cannot change roleRef'
    ]
    assert invalid(
        api,
        RBAC,
        "clusterrolebindings",
        {
            "metadata": {"name": "x"},
            "roleRef": {"kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa"}],
        },
    ) == [
        'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
        "subjects[0].namespace: Required value",
    ]


def test_bootstrap_cluster_roles_and_binding(api: GenericStore) -> None:
    roles = {r["metadata"]["name"]: r for r in api.lookup_all(RBAC, "clusterroles")}
    assert {"cluster-admin", "admin", "edit", "view"} <= set(roles)
    assert roles["cluster-admin"]["rules"] == [
        {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
        {"verbs": ["*"], "nonResourceURLs": ["*"]},
    ]
    assert roles["view"]["aggregationRule"] == {
        "clusterRoleSelectors": [{"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}]
    }
    assert roles["view"]["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"] == "true"
    assert roles["admin"]["metadata"]["annotations"] == {
        "rbac.authorization.kubernetes.io/autoupdate": "true"
    }
    assert {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["namespaces"]} in roles[
        "system:aggregate-to-view"
    ]["rules"]
    binding = api.lookup(RBAC, "clusterrolebindings", "", "cluster-admin")
    assert binding is not None and binding["subjects"] == [
        {"apiGroup": RBAC, "kind": "Group", "name": "system:masters"}
    ]


# ------------------------------------------------------------------------ ReplicationController


def test_replication_controller_defaults_selector_labels_and_replicas(api: GenericStore) -> None:
    rc = create(
        api,
        "",
        "replicationcontrollers",
        {
            "metadata": {"name": "rc"},
            "spec": {
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": CONTAINERS}}
            },
        },
    )
    assert rc["spec"]["selector"] == {"app": "web"} and rc["spec"]["replicas"] == 1
    assert rc["metadata"]["labels"] == {"app": "web"} and rc["metadata"]["generation"] == 1
    assert rc["status"] == {"replicas": 0}
    assert rc["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    rd = api.registry.get("", "v1", "replicationcontrollers")
    assert rd is not None
    assert api.scale_get(rd, "default", "rc")["status"] == {"replicas": 0, "selector": "app=web"}


def test_replication_controller_validation(api: GenericStore) -> None:
    assert invalid(
        api,
        "",
        "replicationcontrollers",
        {
            "metadata": {"name": "rc"},
            "spec": {
                "replicas": -1,
                "selector": {"app": "other"},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": CONTAINERS, "restartPolicy": "Never", "activeDeadlineSeconds": 5},
                },
            },
        },
    ) == [
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`',
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicationController is not Supported",
    ]
    assert invalid(api, "", "replicationcontrollers", {"metadata": {"name": "rc"}, "spec": {}}) == [
        "spec.selector: Required value",
        "spec.template: Required value",
    ]


def test_pod_template_is_validated_as_a_pod_template(api: GenericStore) -> None:
    pt = create(
        api,
        "",
        "podtemplates",
        {"metadata": {"name": "pt"}, "template": {"spec": {"containers": CONTAINERS}}},
    )
    assert pt["template"]["spec"]["dnsPolicy"] == "ClusterFirst" and pt["metadata"]["generation"] == 1
    assert invalid(
        api, "", "podtemplates", {"metadata": {"name": "pt2"}, "template": {"spec": {"containers": []}}}
    ) == ["template.spec.containers: Required value"]


# ----------------------------------------------------------------------------------- storage


def test_storage_class_defaults_and_immutable_fields(api: GenericStore) -> None:
    sc = create(
        api,
        "storage.k8s.io",
        "storageclasses",
        {"metadata": {"name": "fast"}, "provisioner": "example.com/disk", "parameters": {"t": "ssd"}},
    )
    assert (sc["reclaimPolicy"], sc["volumeBindingMode"]) == ("Delete", "Immediate")
    assert "generation" not in sc["metadata"]
    assert invalid(
        api,
        "storage.k8s.io",
        "storageclasses",
        {"metadata": {"name": "x"}, "reclaimPolicy": "Recycle", "volumeBindingMode": "Later"},
    ) == [
        "provisioner: Required value",
        'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
        'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
    ]
    msgs = update_invalid(
        api,
        "storage.k8s.io",
        "storageclasses",
        "fast",
        {
            "metadata": {"name": "fast"},
            "provisioner": "example.com/other",
            "reclaimPolicy": "Retain",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
    )
    assert msgs == [
        "parameters: Forbidden: updates to parameters are forbidden.",
        "provisioner: Forbidden: updates to provisioner are forbidden.",
        "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
        'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable',
    ]


def test_csi_driver_defaults_and_validation(api: GenericStore) -> None:
    d = create(api, "storage.k8s.io", "csidrivers", {"metadata": {"name": "csi.example.com"}, "spec": {}})
    assert d["spec"]["attachRequired"] is True and d["spec"]["volumeLifecycleModes"] == ["Persistent"]
    assert d["spec"]["fsGroupPolicy"] == "ReadWriteOnceWithFSType" and d["metadata"]["generation"] == 1
    assert invalid(
        api,
        "storage.k8s.io",
        "csidrivers",
        {
            "metadata": {"name": "b.example.com"},
            "spec": {
                "fsGroupPolicy": "Some",
                "volumeLifecycleModes": ["Temp"],
                "tokenRequests": [{"audience": "a", "expirationSeconds": 60}],
            },
        },
    ) == [
        'spec.fsGroupPolicy: Unsupported value: "Some": supported values: "File", "None", "ReadWriteOnceWithFSType"',
        'spec.volumeLifecycleModes[0]: Unsupported value: "Temp": supported values: "Ephemeral", "Persistent"',
        "spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes",
    ]
    rv = d["metadata"]["resourceVersion"]
    msgs = update_invalid(
        api,
        "storage.k8s.io",
        "csidrivers",
        "csi.example.com",
        {
            "metadata": {"name": "csi.example.com", "resourceVersion": rv},
            "spec": {"attachRequired": False},
        },
    )
    assert msgs == ["spec.attachedRequired: Invalid value: false: field is immutable"]


# -------------------------------------------------------------------------------- networking


def _backend(port: Any) -> Obj:
    return {"service": {"name": "web", "port": port}}


def test_ingress_validation(api: GenericStore) -> None:
    NET = "networking.k8s.io"
    assert invalid(api, NET, "ingresses", {"metadata": {"name": "i"}, "spec": {}}) == [
        "spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"
    ]
    assert invalid(
        api,
        NET,
        "ingresses",
        {
            "metadata": {"name": "i"},
            "spec": {
                "rules": [
                    {
                        "host": "10.0.0.1",
                        "http": {
                            "paths": [
                                {"path": "rel", "pathType": "Prefix", "backend": _backend({"number": 80})},
                                {"path": "/", "backend": _backend({})},
                                {
                                    "path": "/",
                                    "pathType": "Exact",
                                    "backend": _backend({"name": "http", "number": 80}),
                                },
                            ]
                        },
                    }
                ]
            },
        },
    ) == [
        'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
        'spec.rules[0].http.paths[0].path: Invalid value: "rel": must be an absolute path',
        "spec.rules[0].http.paths[1].pathType: Required value: pathType must be specified",
        "spec.rules[0].http.paths[1].backend: Required value: port name or number is required",
        'spec.rules[0].http.paths[2].backend: Invalid value: "": cannot set both port name & port number',
    ]
    assert invalid(
        api, NET, "ingresses", {"metadata": {"name": "w"}, "spec": {"rules": [{"host": "a.*.com"}]}}
    ) == [
        "spec.rules[0].host: Invalid value: \"a.*.com\": a wildcard DNS-1123 subdomain must start with '*.', followed by a "
        "valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an "
        "alphanumeric character (e.g. '*.example.com', regex used for validation is "
        "'\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    ]
    ok = create(
        api,
        NET,
        "ingresses",
        {
            "metadata": {"name": "ok"},
            "spec": {
                "ingressClassName": "nginx",
                "rules": [
                    {
                        "host": "*.example.com",
                        "http": {
                            "paths": [
                                {"path": "/", "pathType": "Prefix", "backend": _backend({"number": 80})}
                            ]
                        },
                    },
                ],
            },
        },
    )
    assert ok["status"] == {"loadBalancer": {}} and ok["metadata"]["generation"] == 1


def test_ingress_class_and_network_policy(api: GenericStore) -> None:
    NET = "networking.k8s.io"
    ic = create(
        api,
        NET,
        "ingressclasses",
        {
            "metadata": {"name": "nginx"},
            "spec": {"controller": "k8s.io/ingress-nginx", "parameters": {"kind": "Conf", "name": "c"}},
        },
    )
    assert ic["spec"]["parameters"]["scope"] == "Cluster"
    assert invalid(
        api,
        NET,
        "ingressclasses",
        {"metadata": {"name": "x"}, "spec": {"parameters": {"kind": "K", "name": "n", "scope": "Namespace"}}},
    ) == [
        "spec.controller: Required value",
        "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'",
    ]
    np = create(
        api,
        NET,
        "networkpolicies",
        {"metadata": {"name": "np"}, "spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}},
    )
    assert (
        np["spec"]["policyTypes"] == ["Ingress", "Egress"]
        and np["spec"]["egress"][0]["ports"][0]["protocol"] == "TCP"
    )
    assert invalid(
        api,
        NET,
        "networkpolicies",
        {
            "metadata": {"name": "bad"},
            "spec": {
                "podSelector": {},
                "policyTypes": ["Sideways"],
                "ingress": [{"from": [{}], "ports": [{"protocol": "ICMP", "port": 70000}]}],
            },
        },
    ) == [
        'spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
        "spec.ingress[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
        "spec.ingress[0].from[0]: Required value: must specify a peer",
        'spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Egress", "Ingress"',
    ]


# ------------------------------------------------------------------------------- autoscaling


def test_hpa_defaults_and_validation(api: GenericStore) -> None:
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    hpa = create(
        api,
        "autoscaling",
        "horizontalpodautoscalers",
        {
            "metadata": {"name": "web"},
            "spec": {
                "scaleTargetRef": ref,
                "maxReplicas": 5,
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}},
            },
        },
        version="v2",
    )
    assert hpa["spec"]["minReplicas"] == 1
    assert hpa["spec"]["metrics"] == [
        {
            "type": "Resource",
            "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
        }
    ]
    assert hpa["spec"]["behavior"]["scaleUp"]["policies"][0] == {
        "type": "Pods",
        "value": 4,
        "periodSeconds": 15,
    }
    assert hpa["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 60
    assert hpa["status"] == {"desiredReplicas": 0}
    assert invalid(
        api,
        "autoscaling",
        "horizontalpodautoscalers",
        {
            "metadata": {"name": "bad"},
            "spec": {
                "scaleTargetRef": {"kind": "", "name": "web"},
                "minReplicas": 4,
                "maxReplicas": 2,
                "metrics": [
                    {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}},
                    {"type": "Fancy"},
                ],
            },
        },
        version="v2",
    ) == [
        "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`",
        "spec.scaleTargetRef.kind: Required value",
        "spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target value or averageValue",
        'spec.metrics[1].type: Unsupported value: "Fancy": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"',
    ]


# ----------------------------------------------------------------------------- apiregistration


def test_local_api_services_are_listed_and_validated(api: GenericStore) -> None:
    services = {s["metadata"]["name"]: s for s in api.lookup_all("apiregistration.k8s.io", "apiservices")}
    assert {
        "v1.",
        "v1.apps",
        "v1.rbac.authorization.k8s.io",
        "v2.autoscaling",
        "v1beta1.scheduling.k8s.io",
    } <= set(services)
    apps = services["v1.apps"]
    assert apps["spec"] == {
        "group": "apps",
        "version": "v1",
        "groupPriorityMinimum": 17800,
        "versionPriority": 15,
    }
    assert apps["status"]["conditions"][0] | {"lastTransitionTime": ""} == {
        "type": "Available",
        "status": "True",
        "reason": "Local",
        "message": "Local APIServices are always available",
        "lastTransitionTime": "",
    }
    assert invalid(
        api,
        "apiregistration.k8s.io",
        "apiservices",
        {
            "metadata": {"name": "v2.example.com"},
            "spec": {
                "group": "example.com",
                "version": "v1",
                "groupPriorityMinimum": 0,
                "versionPriority": 2000,
                "caBundle": "YWJj",
            },
        },
        ns="",
    ) == [
        'metadata.name: Invalid value: "v2.example.com": must be `spec.version+"."+spec.group`: "v1.example.com"',
        "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
        "spec.versionPriority: Invalid value: 2000: must be positive and less than 1000",
        'spec.caBundle: Invalid value: "4 bytes": local APIServices may not have a caBundle',
    ]


# ------------------------------------------------------------------------------- authorization


def test_access_reviews_are_answered_and_not_stored(api: GenericStore) -> None:
    AUTHZ = "authorization.k8s.io"
    ssar = create(
        api,
        AUTHZ,
        "selfsubjectaccessreviews",
        {"spec": {"resourceAttributes": {"verb": "delete", "resource": "pods"}}},
        ns="",
    )
    # AlwaysAllow (the default mode) allows with no reason, as kube's alwaysAllowAuthorizer does
    assert ssar["status"] == {"allowed": True}
    assert invalid(api, AUTHZ, "selfsubjectaccessreviews", {"spec": {}}, ns="") == [
        "spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified"
    ]
    assert invalid(
        api,
        AUTHZ,
        "subjectaccessreviews",
        {"spec": {"nonResourceAttributes": {"path": "/x", "verb": "get"}}},
        ns="",
    ) == ['spec.user: Invalid value: "": at least one of user or group must be specified']
    ssrr = create(api, AUTHZ, "selfsubjectrulesreviews", {"spec": {"namespace": "default"}}, ns="")
    assert ssrr["status"] == {
        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
        "incomplete": False,
    }
    with pytest.raises(errors.StatusError) as e:
        create(api, AUTHZ, "selfsubjectrulesreviews", {"spec": {}}, ns="")
    assert (e.value.code, e.value.message) == (400, "no namespace on request")
    assert api.store.get((AUTHZ, "selfsubjectaccessreviews"), ("", "")) is None
    rd = api.registry.get(AUTHZ, "v1", "selfsubjectaccessreviews")
    assert rd is not None and rd.verbs == ("create",)


# ------------------------------------------------------------------------------- autoscaling/v1


def test_autoscaling_v1_is_a_view_of_the_stored_v2_hpa(api: GenericStore) -> None:
    v1 = api.registry.get("autoscaling", "v1", "horizontalpodautoscalers")
    v2 = api.registry.get("autoscaling", "v2", "horizontalpodautoscalers")
    assert v1 is not None and v2 is not None
    made = api.create(
        v1,
        "default",
        {
            "apiVersion": "autoscaling/v1",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 4,
                "targetCPUUtilizationPercentage": 70,
            },
        },
    ).obj
    assert made["apiVersion"] == "autoscaling/v1" and made["spec"]["targetCPUUtilizationPercentage"] == 70
    assert made["spec"]["minReplicas"] == 1 and "annotations" not in made["metadata"]
    stored = api.get(v2, "default", "web").obj
    assert stored["spec"]["metrics"] == [
        {
            "type": "Resource",
            "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}},
        }
    ]
    # A v2 HPA with more than v1 can say keeps the rest in kube's autoscaling.alpha annotations.
    api.create(
        v2,
        "default",
        {
            "metadata": {"name": "multi"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 3,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 50},
                        },
                    },
                    {
                        "type": "Pods",
                        "pods": {
                            "metric": {"name": "qps"},
                            "target": {"type": "AverageValue", "averageValue": "10"},
                        },
                    },
                ],
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 30}},
            },
        },
    )
    seen = api.get(v1, "default", "multi").obj
    ann = seen["metadata"]["annotations"]
    assert seen["spec"]["targetCPUUtilizationPercentage"] == 50 and "metrics" not in seen["spec"]
    assert (
        ann["autoscaling.alpha.kubernetes.io/metrics"]
        == '[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]'
    )
    assert '"stabilizationWindowSeconds":30' in ann["autoscaling.alpha.kubernetes.io/behavior"]
    # Writing the v1 rendering back changes nothing in storage.
    before = api.get(v2, "default", "multi").obj
    api.update(v1, "default", "multi", seen)
    after = api.get(v2, "default", "multi").obj
    assert after["spec"] == before["spec"] and "annotations" not in after["metadata"]


def test_autoscaling_v1_conversion_round_trips_every_metric_type() -> None:
    from apiserver.registry.strategies.autoscaling_v1 import hpa_v1_to_v2, hpa_v2_to_v1

    sel = {"matchLabels": {"q": "1"}}
    metrics = [
        {
            "type": "ContainerResource",
            "containerResource": {
                "name": "memory",
                "container": "app",
                "target": {"type": "AverageValue", "averageValue": "1Gi"},
            },
        },
        {
            "type": "Pods",
            "pods": {
                "metric": {"name": "qps", "selector": sel},
                "target": {"type": "AverageValue", "averageValue": "10"},
            },
        },
        {
            "type": "Object",
            "object": {
                "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "s"},
                "metric": {"name": "rps"},
                "target": {"type": "Value", "value": "100"},
            },
        },
        {
            "type": "External",
            "external": {
                "metric": {"name": "queue", "selector": sel},
                "target": {"type": "AverageValue", "averageValue": "30"},
            },
        },
    ]
    current = [
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40}}},
        {"type": "Pods", "pods": {"metric": {"name": "qps"}, "current": {"averageValue": "7"}}},
    ]
    conditions = [
        {
            "type": "AbleToScale",
            "status": "True",
            "reason": "ReadyForNewScale",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
    ]
    stored = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h", "annotations": {"keep": "me"}},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 9,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
                },
                *metrics,
            ],
            "behavior": {
                "scaleUp": {
                    "stabilizationWindowSeconds": 0,
                    "selectPolicy": "Max",
                    "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}],
                }
            },
        },
        "status": {
            "currentReplicas": 2,
            "desiredReplicas": 3,
            "currentMetrics": current,
            "conditions": conditions,
        },
    }
    v1 = hpa_v2_to_v1(stored)
    assert (
        v1["spec"]["targetCPUUtilizationPercentage"] == 60
        and v1["status"]["currentCPUUtilizationPercentage"] == 40
    )
    assert set(v1["metadata"]["annotations"]) == {
        "keep",
        "autoscaling.alpha.kubernetes.io/metrics",
        "autoscaling.alpha.kubernetes.io/behavior",
        "autoscaling.alpha.kubernetes.io/current-metrics",
        "autoscaling.alpha.kubernetes.io/conditions",
    }
    assert hpa_v1_to_v2(v1) == stored
