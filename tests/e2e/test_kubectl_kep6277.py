"""KEP-6277 end to end with real kubectl (1.35 and 1.37) against ``gangplane serve``.

* Each of the KEP's user-story manifests and the "Opting into Workload-Aware Scheduling" example
  applies as written — completed only with the ``selector`` / ``template.metadata.labels`` apps/v1
  requires and the GPU ``limits`` pods require (the KEP's snippets elide them), and, for Story 4
  and the example, the ResourceClaimTemplate they reference — and ``kubectl get
  workloads,podgroups`` shows the Workload and PodGroup the StatefulSet controller compiled.
* ``kubectl scale`` updates minCount on the Workload, then the PodGroup, before any pod changes
  (read off the resourceVersions of three ``kubectl get -w`` streams).
* Each invalid combination the KEP lists is rejected by ``kubectl apply`` with its message.
* ``kubectl delete sts`` removes the Workload, the PodGroup and the pods, straight away or after a
  scale to zero.

Every test cleans up its StatefulSets so the session server's simulated nodes get their
capacity back.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from apiserver.api.types import Obj
from tests.e2e.conftest import Kubectl
from tests.e2e.kubectl_util import Background, fails, ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("k6277")
WAIT = "60s"


def _complete(doc: Obj) -> Obj:
    """Add what the KEP's snippets elide: ``spec.selector``, ``spec.template.metadata.labels`` and,
    for Stories 2 and 3, the ``limits`` an extended resource (``nvidia.com/gpu``) must carry equal
    to its request — without them every pod is rejected ("Limit must be set for non
    overcommitable resources")."""
    name = doc["metadata"]["name"]
    doc["spec"]["selector"] = {"matchLabels": {"app": name}}
    doc["spec"]["template"].setdefault("metadata", {})["labels"] = {"app": name}
    for c in doc["spec"]["template"]["spec"]["containers"]:
        requests = (c.get("resources") or {}).get("requests") or {}
        extended = {k: v for k, v in requests.items() if "/" in k}
        if extended:
            c["resources"].setdefault("limits", {}).update(extended)
    return doc


STORY1 = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: cockroachdb
spec:
  serviceName: cockroachdb
  replicas: 5
  podManagementPolicy: Parallel
  scheduling:
    schedulingPolicy:
      gang: {}          # minCount derived from spec.replicas (5)
  template:
    spec:
      containers:
      - name: cockroachdb
        image: cockroachdb/cockroach:v23.2
        resources:
          requests:
            cpu: "4"
            memory: 8Gi
"""

STORY2 = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: llm-shards
spec:
  serviceName: llm-shards
  replicas: 8
  podManagementPolicy: Parallel
  scheduling:
    schedulingPolicy:
      gang: {}
    disruptionMode:
      all: {}           # the whole StatefulSet is one atomic preemption unit
  template:
    spec:
      containers:
      - name: shard
        image: my-org/llm-inference:latest
        resources:
          requests:
            nvidia.com/gpu: 1
"""

STORY3 = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: training-shards
spec:
  serviceName: training-shards
  replicas: 8
  podManagementPolicy: Parallel
  scheduling:
    schedulingPolicy:
      gang: {}
    schedulingConstraints:
      topology:
      - key: topology.kubernetes.io/rack
  template:
    spec:
      containers:
      - name: trainer
        image: my-org/distributed-trainer:latest
        resources:
          requests:
            nvidia.com/gpu: 1
"""

STORY4_CLAIM_TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: shared-accelerator
spec:
  spec:
    devices:
      requests:
      - name: device
        exactly:
          deviceClassName: shared-accelerator.example.com
"""

STORY4 = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: shard-server
spec:
  serviceName: shard-server
  replicas: 4
  podManagementPolicy: Parallel
  scheduling:
    schedulingPolicy:
      gang: {}
    resourceClaims:
    - name: shared
      resourceClaimTemplateName: shared-accelerator
  template:
    spec:
      containers:
      - name: server
        image: my-org/shard-server:latest
        resources:
          claims:
          - name: shared
      resourceClaims:
      - name: shared
        resourceClaimTemplateName: shared-accelerator
"""

#: "Opting into Workload-Aware Scheduling"; its ResourceClaimTemplate is not in the KEP
OPT_IN_CLAIM_TEMPLATE = STORY4_CLAIM_TEMPLATE.replace(
    "name: shared-accelerator\n", "name: shared-device-template\n"
)

OPT_IN = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: my-db
spec:
  replicas: 3
  podManagementPolicy: Parallel
  scheduling:
    schedulingPolicy:
      gang: {}          # minCount derived from spec.replicas (3)
    schedulingConstraints:
      topology:
      - key: topology.kubernetes.io/zone   # all 3 replicas in one zone
    disruptionMode:
      all: {}           # preempt the whole StatefulSet or none of it
    resourceClaims:     # optional; requires DRAWorkloadResourceClaims gate
    - name: shared-device
      resourceClaimTemplateName: shared-device-template
  template:
    spec:
      containers:
      - name: db
        image: my-db:latest
        resources:
          claims:
          - name: shared-device
      resourceClaims:
      - name: shared-device
        resourceClaimTemplateName: shared-device-template
"""

#: name -> (claim template or None, StatefulSet manifest, expected template fields beyond minCount)
STORIES: dict[str, tuple[str | None, str, Obj]] = {
    "story1-quorum-database": (None, STORY1, {}),
    "story2-disruption-all": (None, STORY2, {"disruptionMode": {"all": {}}}),
    "story3-rack-topology": (
        None,
        STORY3,
        {"schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/rack"}]}},
    ),
    "story4-shared-claim": (
        STORY4_CLAIM_TEMPLATE,
        STORY4,
        {"resourceClaims": [{"name": "shared", "resourceClaimTemplateName": "shared-accelerator"}]},
    ),
    "opting-in-example": (
        OPT_IN_CLAIM_TEMPLATE,
        OPT_IN,
        {
            "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
            "disruptionMode": {"all": {}},
            "resourceClaims": [
                {"name": "shared-device", "resourceClaimTemplateName": "shared-device-template"}
            ],
        },
    ),
}


def manifest(text: str) -> Obj:
    return _complete(yaml.safe_load(text))


def dump(doc: Obj) -> str:
    return yaml.safe_dump(doc, sort_keys=False)


def get_json(kubectl: Kubectl, ns: str, *what: str) -> Obj:
    return json.loads(ok(kubectl, "-n", ns, "get", *what, "-o", "json"))


def wait_replicas(kubectl: Kubectl, ns: str, name: str, n: int) -> None:
    """Until the StatefulSet reports ``n`` pods (a watch inside ``kubectl wait``)."""
    ok(
        kubectl,
        "-n",
        ns,
        "wait",
        f"statefulset/{name}",
        f"--for=jsonpath={{.status.replicas}}={n}",
        f"--timeout={WAIT}",
        timeout=90,
    )


def scale_down_and_delete(kubectl: Kubectl, ns: str, name: str) -> None:
    """Scale to zero (the controller deletes the pods), then delete: the garbage collector takes the
    PodGroup and the Workload."""
    ok(kubectl, "-n", ns, "scale", "statefulset", name, "--replicas=0")
    wait_replicas(kubectl, ns, name, 0)
    ok(kubectl, "-n", ns, "delete", "statefulset", name, f"--timeout={WAIT}", timeout=90)
    for kind in ("podgroups", "workloads"):
        if get_json(kubectl, ns, kind)["items"]:
            ok(kubectl, "-n", ns, "wait", kind, "--all", "--for=delete", f"--timeout={WAIT}", timeout=90)


def min_count(obj: Obj) -> int | None:
    holder = obj["spec"]["podGroupTemplates"][0] if obj["kind"] == "Workload" else obj["spec"]
    return ((holder.get("schedulingPolicy") or {}).get("gang") or {}).get("minCount")


# ---------------------------------------------------------------------------------- stories
@pytest.mark.parametrize("story", list(STORIES))
def test_kep_manifests_apply_and_compile_to_a_workload_and_a_pod_group(
    kubectl: Kubectl, ns: str, story: str
) -> None:
    claim_template, text, fields = STORIES[story]
    if claim_template is not None:
        ok(kubectl, "-n", ns, "apply", "-f", "-", input=claim_template)
    sts = manifest(text)
    name, replicas = sts["metadata"]["name"], sts["spec"]["replicas"]
    assert ok(kubectl, "-n", ns, "apply", "-f", "-", input=dump(sts)) == f"statefulset.apps/{name} created\n"
    wait_replicas(kubectl, ns, name, replicas)  # gang pods exist only once the PodGroup does

    table = ok(kubectl, "-n", ns, "get", "workloads,podgroups")
    assert f"StatefulSet/{name}" in table
    assert "NAME" in table and "CONTROLLER" in table and "TEMPLATES" in table
    header = next(line for line in table.splitlines() if "MIN-COUNT" in line)
    assert header.split() == ["NAME", "POLICY", "MIN-COUNT", "SCHEDULED", "AGE"]
    row = next(line for line in table.splitlines() if line.startswith("podgroup.scheduling.k8s.io/"))
    assert row.split()[1:3] == ["Gang", str(replicas)]

    (wl,) = get_json(kubectl, ns, "workloads")["items"]
    (pg,) = get_json(kubectl, ns, "podgroups")["items"]
    assert wl["spec"]["controllerRef"] == {"apiGroup": "apps", "kind": "StatefulSet", "name": name}
    assert wl["spec"]["podGroupTemplates"] == [
        {"name": name, "schedulingPolicy": {"gang": {"minCount": replicas}}, **fields}
    ]
    assert pg["spec"]["workloadRef"] == {"workloadName": wl["metadata"]["name"], "templateName": name}
    for key, value in fields.items():
        assert pg["spec"][key] == value
    assert pg["metadata"]["annotations"]["scheduling.k8s.io/managed-by"] == "statefulset-controller"
    assert pg["metadata"]["finalizers"] == ["scheduling.k8s.io/podgroup-protection"]
    groups = ok(
        kubectl,
        "-n",
        ns,
        "get",
        "pods",
        "-l",
        f"app={name}",
        "-o",
        "jsonpath={.items[*].spec.schedulingGroup.podGroupName}",
    ).split()
    assert groups == [pg["metadata"]["name"]] * replicas
    # the controller never writes the derived minCount back
    got = get_json(kubectl, ns, "statefulset", name)
    assert got["spec"]["scheduling"]["schedulingPolicy"] == {"gang": {}}
    scale_down_and_delete(kubectl, ns, name)


# ---------------------------------------------------------------------------------- scale
def _watch(kubectl: Kubectl, ns: str, kind: str, template: str, *extra: str) -> Background:
    bg = Background(
        kubectl, "-n", ns, "get", kind, *extra, "-w", "-o", f"jsonpath={template}" + '{"\\n"}', "-v=6"
    )
    bg.wait_request("watch=true")
    return bg


def _first_rv(bg: Background, pred: Any) -> int:
    """resourceVersion of the first streamed line ``name rv value`` satisfying ``pred(name, rv, value)``."""

    def match(line: str) -> bool:
        parts = line.split()
        return len(parts) >= 2 and pred(parts[0], int(parts[1]), parts[2] if len(parts) > 2 else "")

    return int(bg.wait_line(match).split()[1])


@pytest.mark.parametrize(("start", "target"), [(2, 4), (4, 1)], ids=["scale-up", "scale-down"])
def test_kubectl_scale_updates_min_count_on_both_before_pods_change(
    kubectl: Kubectl, ns: str, start: int, target: int
) -> None:
    sts = manifest(STORY1.replace("cockroachdb", "crdb"))
    sts["spec"]["replicas"] = start
    sts["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "100m"}
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=dump(sts))
    wait_replicas(kubectl, ns, "crdb", start)
    pods_before = {
        line.split()[0]: int(line.split()[1])
        for line in ok(
            kubectl,
            "-n",
            ns,
            "get",
            "pods",
            "-l",
            "app=crdb",
            "-o",
            'jsonpath={range .items[*]}{.metadata.name} {.metadata.resourceVersion}{"\\n"}{end}',
        ).splitlines()
    }
    changed = {f"crdb-{i}" for i in range(min(start, target), max(start, target))}
    wl_t = "{.metadata.name} {.metadata.resourceVersion} {.spec.podGroupTemplates[0].schedulingPolicy.gang.minCount}"
    pg_t = "{.metadata.name} {.metadata.resourceVersion} {.spec.schedulingPolicy.gang.minCount}"
    pod_t = "{.metadata.name} {.metadata.resourceVersion}"
    with (
        _watch(kubectl, ns, "workloads", wl_t) as wl_w,
        _watch(kubectl, ns, "podgroups", pg_t) as pg_w,
        _watch(kubectl, ns, "pods", pod_t, "-l", "app=crdb") as pod_w,
    ):
        assert "scaled" in ok(kubectl, "-n", ns, "scale", "statefulset", "crdb", f"--replicas={target}")
        wl_rv = _first_rv(wl_w, lambda n, rv, v: v == str(target))
        pg_rv = _first_rv(pg_w, lambda n, rv, v: v == str(target))
        pod_rv = _first_rv(pod_w, lambda n, rv, v: n in changed and rv > pods_before.get(n, 0))
    assert wl_rv < pg_rv < pod_rv, (wl_rv, pg_rv, pod_rv)
    wait_replicas(kubectl, ns, "crdb", target)
    (wl,) = get_json(kubectl, ns, "workloads")["items"]
    (pg,) = get_json(kubectl, ns, "podgroups")["items"]
    assert min_count(wl) == min_count(pg) == target
    scale_down_and_delete(kubectl, ns, "crdb")


# ---------------------------------------------------------------------------------- admission
BASE = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: bad
spec:
  serviceName: bad
  replicas: 0
  podManagementPolicy: Parallel
  selector:
    matchLabels: {app: bad}
  template:
    metadata:
      labels: {app: bad}
    spec:
      containers:
      - name: c
        image: registry.k8s.io/pause:3.10
"""


def bad(scheduling: Obj | None, **spec: Any) -> Obj:
    doc = yaml.safe_load(BASE)
    if scheduling is not None:
        doc["spec"]["scheduling"] = scheduling
    for key, value in spec.items():
        if value is None:
            doc["spec"].pop(key, None)
        else:
            doc["spec"][key] = value
    return doc


def claims(n: int) -> list[Obj]:
    return [{"name": f"c{i}", "resourceClaimTemplateName": "tmpl"} for i in range(n)]


GANG: Obj = {"schedulingPolicy": {"gang": {}}}
PARTITION = {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}
GANG_NEEDS_PARALLEL = (
    "spec.scheduling.schedulingPolicy.gang: Forbidden: gang scheduling requires podManagementPolicy: Parallel; "
    "OrderedReady creates pods sequentially, which can never satisfy a gang"
)
PARTITION_FORBIDDEN = (
    "spec.updateStrategy.rollingUpdate.partition: Forbidden: partitioned rollouts are not supported for "
    "StatefulSets with spec.scheduling set"
)
ALL_WITH_BASIC = (
    'spec.scheduling.disruptionMode: Invalid value: "": the disruptionMode `all` is not supported with the '
    "Basic scheduling policy"
)
IMMUTABLE = "spec.scheduling: Invalid value: null: field is immutable"

CREATE_CASES: dict[str, tuple[Obj, str]] = {
    "gang-with-ordered-ready": (bad(GANG, podManagementPolicy="OrderedReady"), GANG_NEEDS_PARALLEL),
    "gang-with-policy-unset": (bad(GANG, podManagementPolicy=None), GANG_NEEDS_PARALLEL),
    "partition-on-create": (bad(GANG, updateStrategy=PARTITION), PARTITION_FORBIDDEN),
    "user-min-count": (
        bad({"schedulingPolicy": {"gang": {"minCount": 2}}}),
        "spec.scheduling.schedulingPolicy.gang.minCount: Forbidden: gang minCount is derived from spec.replicas "
        "and may not be set (a user-configurable minCount is planned for Beta)",
    ),
    "all-with-basic": (
        bad({"schedulingPolicy": {"basic": {}}, "disruptionMode": {"all": {}}}),
        ALL_WITH_BASIC,
    ),
    "all-with-policy-omitted": (bad({"disruptionMode": {"all": {}}}), ALL_WITH_BASIC),
    "more-than-four-claims": (
        bad({"resourceClaims": claims(5)}),
        "spec.scheduling.resourceClaims: Too many: 5: must have at most 4 items",
    ),
    "claim-with-both-sources": (
        bad(
            {
                "resourceClaims": [
                    {"name": "c", "resourceClaimName": "one", "resourceClaimTemplateName": "tmpl"}
                ]
            }
        ),
        'spec.scheduling.resourceClaims[0]: Invalid value: "{resourceClaimName, resourceClaimTemplateName}": '
        "must specify exactly one of: `resourceClaimName`, `resourceClaimTemplateName`",
    ),
    "claim-with-neither-source": (
        bad({"resourceClaims": [{"name": "c"}]}),
        'spec.scheduling.resourceClaims[0]: Invalid value: "": must specify one of: `resourceClaimName`, '
        "`resourceClaimTemplateName`",
    ),
}


@pytest.mark.parametrize("case", list(CREATE_CASES))
def test_invalid_combination_is_rejected_on_create(kubectl: Kubectl, ns: str, case: str) -> None:
    doc, message = CREATE_CASES[case]
    proc = fails(kubectl, "-n", ns, "apply", "-f", "-", input=dump(doc))
    assert f'The StatefulSet "bad" is invalid: {message}' in proc.stderr, proc.stderr
    assert "NotFound" in fails(kubectl, "-n", ns, "get", "statefulset", "bad").stderr


def _changed(doc: Obj, path: str) -> Obj:
    out = copy.deepcopy(doc)
    sched = out["spec"]
    if path == "partition":
        sched["updateStrategy"] = PARTITION
    elif path == "remove":
        sched.pop("scheduling")
    elif path == "gang-to-basic":
        sched["scheduling"]["schedulingPolicy"] = {"basic": {}}
    elif path == "add-claim":
        sched["scheduling"]["resourceClaims"] = claims(1)
    elif path == "add-topology":
        sched["scheduling"]["schedulingConstraints"] = {"topology": [{"key": "topology.kubernetes.io/zone"}]}
    return out


UPDATE_CASES: dict[str, str] = {
    "partition-on-update": PARTITION_FORBIDDEN,
    "remove": IMMUTABLE,
    "gang-to-basic": IMMUTABLE,
    "add-claim": IMMUTABLE,
    "add-topology": IMMUTABLE,
}


@pytest.mark.parametrize("case", list(UPDATE_CASES))
def test_invalid_change_is_rejected_on_update(kubectl: Kubectl, ns: str, case: str) -> None:
    doc = bad(GANG)
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=dump(doc))
    key = "partition" if case == "partition-on-update" else case
    proc = fails(kubectl, "-n", ns, "apply", "-f", "-", input=dump(_changed(doc, key)))
    assert f'The StatefulSet "bad" is invalid: {UPDATE_CASES[case]}' in proc.stderr, proc.stderr
    assert get_json(kubectl, ns, "statefulset", "bad")["spec"]["scheduling"] == GANG


def test_adding_scheduling_after_creation_is_rejected(kubectl: Kubectl, ns: str) -> None:
    doc = bad(None)
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=dump(doc))
    proc = fails(kubectl, "-n", ns, "apply", "-f", "-", input=dump(bad(GANG)))
    assert f'The StatefulSet "bad" is invalid: {IMMUTABLE}' in proc.stderr, proc.stderr


# ---------------------------------------------------------------------------------- deletion
def _deploy(kubectl: Kubectl, ns: str, name: str, replicas: int) -> None:
    sts = manifest(STORY1.replace("cockroachdb", name))
    sts["spec"]["replicas"] = replicas
    sts["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "100m"}
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=dump(sts))
    wait_replicas(kubectl, ns, name, replicas)
    assert len(get_json(kubectl, ns, "workloads")["items"]) == 1
    assert len(get_json(kubectl, ns, "podgroups")["items"]) == 1


def _all_gone(kubectl: Kubectl, ns: str, name: str, timeout: str) -> None:
    for kind in ("pods", "podgroups", "workloads"):
        if get_json(kubectl, ns, kind)["items"]:
            ok(kubectl, "-n", ns, "wait", kind, "--all", "--for=delete", f"--timeout={timeout}", timeout=90)
    assert get_json(kubectl, ns, "pods,podgroups,workloads")["items"] == []


def test_kubectl_scale_to_zero_then_delete_removes_workload_pod_group_and_pods(
    kubectl: Kubectl, ns: str
) -> None:
    _deploy(kubectl, ns, "gone", 3)
    (pg,) = get_json(kubectl, ns, "podgroups")["items"]
    ok(kubectl, "-n", ns, "scale", "statefulset", "gone", "--replicas=0")
    wait_replicas(kubectl, ns, "gone", 0)
    (kept,) = get_json(kubectl, ns, "podgroups")["items"]  # scale to zero keeps the PodGroup at minCount 1
    assert kept["metadata"]["uid"] == pg["metadata"]["uid"] and min_count(kept) == 1
    ok(kubectl, "-n", ns, "delete", "statefulset", "gone")
    _all_gone(kubectl, ns, "gone", WAIT)


def test_kubectl_delete_removes_workload_pod_group_and_pods(kubectl: Kubectl, ns: str) -> None:
    _deploy(kubectl, ns, "gone", 2)
    ok(kubectl, "-n", ns, "delete", "statefulset", "gone")  # background, kubectl's default
    try:
        _all_gone(kubectl, ns, "gone", "5s")
    except AssertionError:
        # leave nothing behind for the other tests: release the held pods the way foreground would
        kubectl.run("-n", ns, "delete", "pods", "--all", "--wait=false", check=False)
        raise


def test_kubectl_delete_with_a_user_workload_collects_pods_and_pod_group_and_keeps_the_workload(
    kubectl: Kubectl, ns: str
) -> None:
    """KEP-6277: a user-created Workload is used as-is; the controller's PodGroup gets no
    ownerReference to it, so ``kubectl delete sts`` collects the pods and that PodGroup, and the
    Workload stays."""
    user_wl = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "mine"},
        "spec": {
            "controllerRef": {"apiGroup": "apps", "kind": "StatefulSet", "name": "byo"},
            "podGroupTemplates": [{"name": "byo", "schedulingPolicy": {"gang": {"minCount": 2}}}],
        },
    }
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=dump(user_wl))
    sts = manifest(STORY1.replace("cockroachdb", "byo"))
    sts["spec"]["replicas"] = 2
    sts["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "100m"}
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=dump(sts))
    wait_replicas(kubectl, ns, "byo", 2)
    (pg,) = get_json(kubectl, ns, "podgroups")["items"]
    assert pg["spec"]["workloadRef"] == {"workloadName": "mine", "templateName": "byo"}
    assert [r["kind"] for r in pg["metadata"]["ownerReferences"]] == ["StatefulSet"]
    wl = get_json(kubectl, ns, "workload/mine")
    ok(kubectl, "-n", ns, "delete", "statefulset", "byo")
    for kind in ("pods", "podgroups"):
        if get_json(kubectl, ns, kind)["items"]:
            ok(kubectl, "-n", ns, "wait", kind, "--all", "--for=delete", f"--timeout={WAIT}", timeout=90)
    assert get_json(kubectl, ns, "pods,podgroups")["items"] == []
    kept = get_json(kubectl, ns, "workload/mine")
    assert kept["metadata"]["uid"] == wl["metadata"]["uid"]
    assert kept["metadata"]["resourceVersion"] == wl["metadata"]["resourceVersion"]
