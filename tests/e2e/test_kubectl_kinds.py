"""Real kubectl (1.35 and 1.37) on the everyday kinds: RBAC, ReplicationController/PodTemplate,
storage and networking kinds, HPAs (``kubectl autoscale``), APIServices and ``kubectl auth can-i``.

Commands are the ones users type; several (``create role|rolebinding|clusterrole|
clusterrolebinding|ingress|priorityclass|pdb|quota``, ``autoscale``, ``auth can-i``) send protobuf.
"""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import Kubectl
from tests.e2e.kubectl_util import delete_namespace, fails, namespace, ok

pytestmark = pytest.mark.e2e


def _rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.strip().splitlines()]


def test_auth_can_i_answers_yes_truthfully(kubectl: Kubectl) -> None:
    assert ok(kubectl, "auth", "can-i", "create", "pods").strip() == "yes"
    assert ok(kubectl, "auth", "can-i", "delete", "nodes", "--all-namespaces").strip() == "yes"
    assert ok(kubectl, "auth", "can-i", "get", "/healthz").strip() == "yes"
    listing = _rows(ok(kubectl, "auth", "can-i", "--list"))
    assert listing[0] == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert ["*.*", "[]", "[]", "[*]"] in listing and ["[*]", "[]", "[*]"] in listing
    review = json.loads(
        ok(
            kubectl,
            "create",
            "--raw",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            "-f",
            "-",
            input=json.dumps(
                {
                    "apiVersion": "authorization.k8s.io/v1",
                    "kind": "SelfSubjectAccessReview",
                    "spec": {"resourceAttributes": {"verb": "get", "resource": "secrets"}},
                }
            ),
        )
    )
    # kube's AlwaysAllow authorizer allows with no reason
    assert review["status"] == {"allowed": True}


def test_rbac_create_get_and_validation(kubectl: Kubectl) -> None:
    ns = namespace(kubectl.server, "rbac")
    suffix = kubectl.version.replace(".", "")
    try:
        ok(
            kubectl,
            "create",
            "role",
            "reader",
            "--verb=get,list",
            "--resource=pods,deployments.apps",
            "-n",
            ns,
        )
        ok(
            kubectl,
            "create",
            "rolebinding",
            "rb",
            "--role=reader",
            "--user=alice",
            "--group=devs",
            f"--serviceaccount={ns}:default",
            "-n",
            ns,
        )
        role = json.loads(ok(kubectl, "get", "role", "reader", "-n", ns, "-o", "json"))
        assert role["rules"] == [
            {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]},
            {"verbs": ["get", "list"], "apiGroups": ["apps"], "resources": ["deployments"]},
        ]
        assert _rows(ok(kubectl, "get", "roles", "-n", ns))[0] == ["NAME", "CREATED", "AT"]
        wide = _rows(ok(kubectl, "get", "rolebinding", "rb", "-n", ns, "-o", "wide"))
        assert wide[0] == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
        assert wide[1][:2] + wide[1][3:] == ["rb", "Role/reader", "alice", "devs", f"{ns}:default"]
        ok(kubectl, "create", "clusterrole", f"logs-{suffix}", "--verb=get", "--non-resource-url=/logs/*")
        ok(kubectl, "create", "clusterrolebinding", f"bob-{suffix}", "--clusterrole=view", "--user=bob")
        names = ok(kubectl, "get", "clusterroles", "-o", "name")
        for want in ("cluster-admin", "admin", "edit", "view", f"logs-{suffix}"):
            assert f"clusterrole.rbac.authorization.k8s.io/{want}\n" in names
        bad = fails(
            kubectl,
            "create",
            "-f",
            "-",
            "-n",
            ns,
            input=json.dumps(
                {
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "RoleBinding",
                    "metadata": {"name": "bad"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Secret", "name": "x"},
                }
            ),
        )
        assert (
            'The RoleBinding "bad" is invalid: roleRef.kind: Unsupported value: "Secret": supported values: "Role", "ClusterRole"'
            in bad.stderr
        )
        ok(kubectl, "delete", "clusterrole", f"logs-{suffix}")
        ok(kubectl, "delete", "clusterrolebinding", f"bob-{suffix}")
    finally:
        delete_namespace(kubectl.server, ns)


RC_AND_FRIENDS = """
apiVersion: v1
kind: ReplicationController
metadata:
  name: web
spec:
  replicas: 0
  template:
    metadata:
      labels: {app: web}
    spec:
      containers: [{name: web, image: nginx}]
---
apiVersion: v1
kind: PodTemplate
metadata:
  name: tpl
template:
  metadata:
    labels: {app: tpl}
  spec:
    containers: [{name: c, image: busybox}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: deny
spec:
  podSelector: {matchLabels: {app: web}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
spec:
  rules:
  - host: web.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
"""


def test_namespaced_kinds_apply_get_scale_explain(kubectl: Kubectl) -> None:
    ns = namespace(kubectl.server, "kinds")
    try:
        out = ok(kubectl, "apply", "-f", "-", "-n", ns, input=RC_AND_FRIENDS)
        assert "replicationcontroller/web created" in out and "ingress.networking.k8s.io/web created" in out
        rc = _rows(ok(kubectl, "get", "rc", "web", "-n", ns, "-o", "wide"))
        assert rc[0] == ["NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
        assert rc[1][:4] == ["web", "0", "0", "0"] and rc[1][5:] == ["web", "nginx", "app=web"]
        ok(kubectl, "scale", "rc", "web", "--replicas=2", "-n", ns)
        assert json.loads(ok(kubectl, "get", "rc", "web", "-n", ns, "-o", "json"))["spec"]["replicas"] == 2
        ok(kubectl, "scale", "rc", "web", "--replicas=0", "--current-replicas=2", "-n", ns)
        assert _rows(ok(kubectl, "get", "podtemplates", "-n", ns)) == [
            ["NAME", "CONTAINERS", "IMAGES", "POD", "LABELS"],
            ["tpl", "c", "busybox", "app=tpl"],
        ]
        assert _rows(ok(kubectl, "get", "netpol", "-n", ns))[1][:2] == ["deny", "app=web"]
        ing = _rows(ok(kubectl, "get", "ingress", "-n", ns))
        assert ing[0] == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"] and ing[1][:4] == [
            "web",
            "<none>",
            "web.example.com",
            "80",
        ]
        ok(
            kubectl,
            "create",
            "ingress",
            "tls",
            "--rule=foo.com/bar=svc1:8080,tls=cert",
            "--class=nginx",
            "-n",
            ns,
        )
        assert _rows(ok(kubectl, "get", "ingress", "tls", "-n", ns))[1][:4] == [
            "tls",
            "nginx",
            "foo.com",
            "80,",
        ]
        explained = ok(kubectl, "explain", "ingress.spec.rules.http.paths.pathType")
        assert "KIND:       Ingress" in explained and "FIELD: pathType <string>" in explained
        bad = fails(
            kubectl,
            "apply",
            "-f",
            "-",
            "-n",
            ns,
            input=RC_AND_FRIENDS.replace("pathType: Prefix", "pathType: Fuzzy"),
        )
        assert (
            'spec.rules[0].http.paths[0].pathType: Unsupported value: "Fuzzy": supported values: '
            '"Exact", "ImplementationSpecific", "Prefix"'
        ) in bad.stderr
        # A Status (RCs) and the object (PodTemplates) are both DELETE replies kubectl accepts.
        assert 'replicationcontroller "web" deleted' in ok(kubectl, "delete", "rc", "web", "-n", ns)
        assert 'podtemplate "tpl" deleted' in ok(kubectl, "delete", "podtemplate", "tpl", "-n", ns)
    finally:
        delete_namespace(kubectl.server, ns)


def test_cluster_kinds_storage_ingressclass_apiservices(kubectl: Kubectl) -> None:
    v = kubectl.version.replace(".", "")
    manifest = f"""
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast-{v}
  annotations: {{storageclass.kubernetes.io/is-default-class: "false"}}
provisioner: example.com/disk
allowVolumeExpansion: true
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata:
  name: csi-{v}.example.com
spec:
  podInfoOnMount: true
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx-{v}
spec:
  controller: k8s.io/ingress-nginx
"""
    ok(kubectl, "apply", "-f", "-", input=manifest)
    try:
        assert _rows(ok(kubectl, "get", "sc", f"fast-{v}"))[1][:5] == [
            f"fast-{v}",
            "example.com/disk",
            "Delete",
            "Immediate",
            "true",
        ]
        assert _rows(ok(kubectl, "get", "csidriver", f"csi-{v}.example.com"))[1][:7] == [
            f"csi-{v}.example.com",
            "true",
            "true",
            "false",
            "<unset>",
            "false",
            "Persistent",
        ]
        assert _rows(ok(kubectl, "get", "ingressclass", f"nginx-{v}"))[1][:3] == [
            f"nginx-{v}",
            "k8s.io/ingress-nginx",
            "<none>",
        ]
        bad = fails(
            kubectl, "patch", "sc", f"fast-{v}", "--type=merge", "-p", '{"provisioner":"example.com/other"}'
        )
        assert "provisioner: Forbidden: updates to provisioner are forbidden." in bad.stderr
        services = _rows(ok(kubectl, "get", "apiservices"))
        assert services[0] == ["NAME", "SERVICE", "AVAILABLE", "AGE"]
        assert services[[r[0] for r in services].index("v1.apps")][:3] == ["v1.apps", "Local", "True"]
        assert "v1.rbac.authorization.k8s.io" in [r[0] for r in services]
        resources = ok(kubectl, "api-resources", "-o", "name")
        for want in (
            "roles.rbac.authorization.k8s.io",
            "replicationcontrollers",
            "podtemplates",
            "storageclasses.storage.k8s.io",
            "ingresses.networking.k8s.io",
            "horizontalpodautoscalers.autoscaling",
            "apiservices.apiregistration.k8s.io",
            "selfsubjectaccessreviews.authorization.k8s.io",
        ):
            assert want in resources.split(), want
    finally:
        ok(kubectl, "delete", "sc", f"fast-{v}")
        ok(kubectl, "delete", "csidriver", f"csi-{v}.example.com")
        ok(kubectl, "delete", "ingressclass", f"nginx-{v}")


def test_kubectl_autoscale_creates_an_hpa(kubectl: Kubectl) -> None:
    ns = namespace(kubectl.server, "hpa")
    try:
        ok(kubectl, "create", "deployment", "web", "--image=nginx", "--replicas=0", "-n", ns)
        out = ok(kubectl, "autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu=60%", "-n", ns)
        assert out.strip() == "horizontalpodautoscaler.autoscaling/web autoscaled"
        rows = _rows(ok(kubectl, "get", "hpa", "-n", ns))
        assert rows[0] == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
        assert rows[1][:7] == ["web", "Deployment/web", "cpu:", "<unknown>/60%", "2", "5", "0"]
        hpa = json.loads(ok(kubectl, "get", "hpa", "web", "-n", ns, "-o", "json"))
        assert hpa["apiVersion"] == "autoscaling/v2"
        assert hpa["spec"]["metrics"] == [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
            }
        ]
        assert "deleted" in ok(kubectl, "delete", "hpa", "web", "-n", ns)
        # Charts that still ship autoscaling/v1 HPAs: the same object, seen through both versions.
        ok(
            kubectl,
            "apply",
            "-n",
            ns,
            "-f",
            "-",
            input=json.dumps(
                {
                    "apiVersion": "autoscaling/v1",
                    "kind": "HorizontalPodAutoscaler",
                    "metadata": {"name": "old"},
                    "spec": {
                        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                        "maxReplicas": 3,
                        "targetCPUUtilizationPercentage": 75,
                    },
                }
            ),
        )
        assert _rows(ok(kubectl, "get", "hpa", "old", "-n", ns))[1][:6] == [
            "old",
            "Deployment/web",
            "cpu:",
            "<unknown>/75%",
            "1",
            "3",
        ]
        v1 = json.loads(
            ok(kubectl, "get", "horizontalpodautoscalers.v1.autoscaling", "old", "-n", ns, "-o", "json")
        )
        assert v1["apiVersion"] == "autoscaling/v1" and v1["spec"]["targetCPUUtilizationPercentage"] == 75
        v2 = json.loads(
            ok(kubectl, "get", "horizontalpodautoscalers.v2.autoscaling", "old", "-n", ns, "-o", "json")
        )
        assert v2["spec"]["metrics"][0]["resource"]["target"] == {
            "type": "Utilization",
            "averageUtilization": 75,
        }
    finally:
        delete_namespace(kubectl.server, ns)


def test_kubectl_create_priorityclass_pdb_and_quota(kubectl: Kubectl) -> None:
    ns = namespace(kubectl.server, "pol")
    v = kubectl.version.replace(".", "")
    try:
        ok(kubectl, "create", "priorityclass", f"batch-{v}", "--value=100", "--description=batch jobs")
        ok(kubectl, "create", "pdb", "web", "--selector=app=web", "--min-available=50%", "-n", ns)
        ok(kubectl, "create", "quota", "q", "--hard=pods=3,cpu=2", "-n", ns)
        pc = json.loads(ok(kubectl, "get", "pc", f"batch-{v}", "-o", "json"))
        assert (pc["value"], pc["description"], pc["preemptionPolicy"]) == (
            100,
            "batch jobs",
            "PreemptLowerPriority",
        )
        pdb = json.loads(ok(kubectl, "get", "pdb", "web", "-n", ns, "-o", "json"))
        assert pdb["spec"] == {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}
        quota = json.loads(ok(kubectl, "get", "quota", "q", "-n", ns, "-o", "json"))
        assert quota["spec"] == {"hard": {"cpu": "2", "pods": "3"}}
    finally:
        ok(kubectl, "delete", "pc", f"batch-{v}")
        delete_namespace(kubectl.server, ns)
