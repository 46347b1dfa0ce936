"""core/v1 strategies: defaults, validation messages, update rules, status separation, QoS, requests."""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apiserver.api.types import Obj
from apiserver.registry.strategies import core, podspec
from apiserver.registry.strategies.core import STRATEGIES
from apiserver.registry.strategies.core.common import all_config_map_keys, is_config_map_key
from apiserver.registry.strategies.core.secret import decode_base64, decode_base64_walk
from apiserver.registry.strategies.podspec import pod_limits, pod_qos_class, pod_requests
from apiserver.rest.strategy import Strategy, StrategyContext
from featuregates import GENERIC_WORKLOAD
from tests.strategy_support import run_create, run_status_update, run_update, strategy_ctx

NOW = "2026-01-01T00:00:00Z"


ctx = strategy_ctx


def strategy(plural: str) -> Strategy:
    return STRATEGIES[("", plural)]


def create(plural: str, obj: Obj, c: StrategyContext | None = None) -> tuple[Obj, list[str]]:
    """default -> prepare_for_create -> validate, like the registry; returns the object and messages."""
    return run_create(strategy(plural), obj, c or ctx())


def update(plural: str, new: Obj, old: Obj, c: StrategyContext | None = None) -> tuple[Obj, list[str]]:
    return run_update(strategy(plural), new, old, c or ctx())


def status_update(plural: str, new: Obj, old: Obj, c: StrategyContext | None = None) -> tuple[Obj, list[str]]:
    return run_status_update(strategy(plural), new, old, c or ctx())


def make_pod(**spec: Any) -> Obj:
    base: Obj = {"containers": [{"name": "app", "image": "nginx:1.27"}]}
    base.update(spec)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": base,
    }


def ctr(
    name: str = "app", req: dict[str, str] | None = None, lim: dict[str, str] | None = None, **extra: Any
) -> Obj:
    c: Obj = {"name": name, "image": "busybox:1.36", **extra}
    res: Obj = {}
    if req is not None:
        res["requests"] = req
    if lim is not None:
        res["limits"] = lim
    if res:
        c["resources"] = res
    return c


# ----------------------------------------------------------------------------- Pod defaults


def test_pod_defaults() -> None:
    obj, errs = create(
        "pods",
        make_pod(containers=[{"name": "app", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}]),
    )
    assert errs == []
    spec = obj["spec"]
    assert {
        k: spec[k]
        for k in (
            "restartPolicy",
            "dnsPolicy",
            "schedulerName",
            "terminationGracePeriodSeconds",
            "securityContext",
            "enableServiceLinks",
        )
    } == {
        "restartPolicy": "Always",
        "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler",
        "terminationGracePeriodSeconds": 30,
        "securityContext": {},
        "enableServiceLinks": True,
    }
    c = spec["containers"][0]
    assert c["terminationMessagePath"] == "/dev/termination-log"
    assert c["terminationMessagePolicy"] == "File"
    assert c["imagePullPolicy"] == "IfNotPresent"
    assert c["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert "preemptionPolicy" not in spec  # set by priority admission, not by defaulting
    assert obj["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.27", "IfNotPresent"),
        ("registry.local:5000/team/app", "Always"),
        ("registry.local:5000/team/app:v2", "IfNotPresent"),
        ("app@sha256:" + "a" * 64, "IfNotPresent"),
        ("app:latest@sha256:" + "a" * 64, "Always"),
    ],
)
def test_image_pull_policy_follows_the_tag(image: str, policy: str) -> None:
    c: Obj = {"name": "c", "image": image}
    podspec.default_container(c)
    assert c["imagePullPolicy"] == policy


def test_requests_default_to_limits_on_pods_only() -> None:
    pod = make_pod(containers=[ctr(lim={"cpu": "500m", "memory": "128Mi"}, req={"cpu": "100m"})])
    obj, _ = create("pods", pod)
    assert obj["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "100m", "memory": "128Mi"}
    template = {"spec": copy.deepcopy(pod["spec"])}
    podspec.default_pod_template(template)
    assert template["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "100m"}


def test_quantities_are_written_canonically() -> None:
    obj, _ = create("pods", make_pod(containers=[ctr(lim={"cpu": "1000m", "memory": "1024Mi"})]))
    assert obj["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "1", "memory": "1Gi"}


def test_host_network_pods_default_host_ports() -> None:
    obj, errs = create("pods", make_pod(hostNetwork=True, containers=[ctr(ports=[{"containerPort": 8080}])]))
    assert errs == []
    assert obj["spec"]["containers"][0]["ports"][0]["hostPort"] == 8080


def test_probe_and_volume_defaults() -> None:
    pod = make_pod(
        containers=[
            ctr(
                livenessProbe={"httpGet": {"port": 8080}},
                volumeMounts=[{"name": "cfg", "mountPath": "/etc/cfg"}],
            )
        ],
        volumes=[{"name": "cfg", "configMap": {"name": "c"}}, {"name": "scratch"}],
    )
    obj, errs = create("pods", pod)
    assert errs == []
    probe = obj["spec"]["containers"][0]["livenessProbe"]
    assert probe == {
        "httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"},
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    assert obj["spec"]["volumes"] == [
        {"name": "cfg", "configMap": {"name": "c", "defaultMode": 420}},
        {"name": "scratch", "emptyDir": {}},
    ]


def test_scheduling_gated_pods_get_the_condition() -> None:
    obj, errs = create("pods", make_pod(schedulingGates=[{"name": "example.com/wait"}]))
    assert errs == []
    assert obj["status"]["conditions"] == [
        {
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": None,
            "lastTransitionTime": None,
            "reason": "SchedulingGated",
            "message": "Scheduling is blocked due to non-empty scheduling gates",
        }
    ]


def test_match_label_keys_are_merged_into_pod_affinity() -> None:
    term = {
        "labelSelector": {"matchLabels": {"app": "db"}},
        "topologyKey": "zone",
        "matchLabelKeys": ["rev"],
        "mismatchLabelKeys": ["team"],
    }
    pod = make_pod(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})
    pod["metadata"]["labels"] = {"rev": "7", "team": "a"}
    obj, errs = create("pods", pod)
    assert errs == []
    sel = obj["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0][
        "labelSelector"
    ]
    assert sel["matchExpressions"] == [
        {"key": "rev", "operator": "In", "values": ["7"]},
        {"key": "team", "operator": "NotIn", "values": ["a"]},
    ]


# ----------------------------------------------------------------------------- Pod validation

RFC1123_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
RFC1123_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def _set(**spec: Any) -> Callable[[Obj], None]:
    def f(pod: Obj) -> None:
        pod["spec"].update(spec)

    return f


POD_CASES: list[tuple[str, Callable[[Obj], None], list[str]]] = [
    ("no containers", _set(containers=[]), ["spec.containers: Required value"]),
    (
        "bad container name",
        _set(containers=[ctr("Web_1")]),
        [f'spec.containers[0].name: Invalid value: "Web_1": {RFC1123_LABEL}'],
    ),
    (
        "missing container name",
        _set(containers=[{"image": "x"}]),
        ["spec.containers[0].name: Required value"],
    ),
    (
        "duplicate names",
        _set(containers=[ctr("a"), ctr("a")]),
        ['spec.containers[1].name: Duplicate value: "a"'],
    ),
    (
        "init name clashes with container",
        _set(containers=[ctr("a")], initContainers=[ctr("a")]),
        ['spec.initContainers[0].name: Duplicate value: "a"'],
    ),
    ("image required", _set(containers=[{"name": "a"}]), ["spec.containers[0].image: Required value"]),
    (
        "image whitespace",
        _set(containers=[{"name": "a", "image": " nginx"}]),
        ['spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing whitespace'],
    ),
    (
        "unparseable quantity",
        _set(containers=[ctr(req={"cpu": "lots"})]),
        [
            'spec.containers[0].resources.requests[cpu]: Invalid value: "lots": quantities must match the regular '
            "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        ],
    ),
    (
        "request above limit",
        _set(containers=[ctr(req={"cpu": "2"}, lim={"cpu": "1"})]),
        [
            'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'
        ],
    ),
    (
        "negative request",
        _set(containers=[ctr(req={"memory": "-1"})]),
        [
            'spec.containers[0].resources.requests[memory]: Invalid value: "-1": must be greater than or equal to 0'
        ],
    ),
    (
        "unknown resource name",
        _set(containers=[ctr(req={"gpus": "1"})]),
        [
            'spec.containers[0].resources.requests[gpus]: Invalid value: "gpus": must be a standard resource type or fully qualified',
            'spec.containers[0].resources.requests[gpus]: Invalid value: "gpus": must be a standard resource for containers',
        ],
    ),
    (
        "extended resource needs a limit",
        _set(containers=[ctr(req={"example.com/gpu": "1"})]),
        [
            "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"
        ],
    ),
    (
        "extended resource request must equal limit",
        _set(containers=[ctr(req={"example.com/gpu": "1"}, lim={"example.com/gpu": "2"})]),
        [
            'spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2'
        ],
    ),
    (
        "bad restart policy",
        _set(restartPolicy="Sometimes"),
        [
            'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'
        ],
    ),
    (
        "bad dns policy",
        _set(dnsPolicy="Google"),
        [
            'spec.dnsPolicy: Unsupported value: "Google": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"'
        ],
    ),
    (
        "container port out of range",
        _set(containers=[ctr(ports=[{"containerPort": 70000}])]),
        [
            "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"
        ],
    ),
    (
        "container port missing",
        _set(containers=[ctr(ports=[{"name": "http"}])]),
        ["spec.containers[0].ports[0].containerPort: Required value"],
    ),
    (
        "bad protocol",
        _set(containers=[ctr(ports=[{"containerPort": 80, "protocol": "HTTP"}])]),
        [
            'spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'
        ],
    ),
    (
        "bad port name",
        _set(containers=[ctr(ports=[{"containerPort": 80, "name": "HTTP"}])]),
        [
            'spec.containers[0].ports[0].name: Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
            'spec.containers[0].ports[0].name: Invalid value: "HTTP": must contain at least one letter (a-z)',
        ],
    ),
    (
        "bad node selector value",
        _set(nodeSelector={"zone": "a b"}),
        [
            'spec.nodeSelector: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
            "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        ],
    ),
    (
        "toleration without key must use Exists",
        _set(tolerations=[{"operator": "Equal", "value": "x"}]),
        [
            'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"'
        ],
    ),
    (
        "toleration effect",
        _set(tolerations=[{"key": "k", "operator": "Exists", "effect": "Never"}]),
        [
            'spec.tolerations[0].effect: Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'
        ],
    ),
    (
        "tolerationSeconds needs NoExecute",
        _set(
            tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]
        ),
        [
            "spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"
        ],
    ),
    (
        "toleration operator",
        _set(tolerations=[{"key": "k", "operator": "Gt"}]),
        ['spec.tolerations[0].operator: Unsupported value: "Gt": supported values: "Equal", "Exists"'],
    ),
    (
        "preferred node affinity weight",
        _set(
            affinity={
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {}}]
                }
            }
        ),
        [
            "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100"
        ],
    ),
    (
        "node selector requirement operator",
        _set(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "Near"}]}]
                    }
                }
            }
        ),
        [
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: "
            'Invalid value: "Near": not a valid selector operator'
        ],
    ),
    (
        "pod affinity topology key",
        _set(
            affinity={
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {}}]}
            }
        ),
        [
            "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value: can not be empty",
            'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: "": name part must be non-empty',
            'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: "": name part must consist '
            "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
            "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ],
    ),
    (
        "scheduling group name",
        _set(schedulingGroup={"podGroupName": "Group_1"}),
        [f'spec.schedulingGroup.podGroupName: Invalid value: "Group_1": {RFC1123_SUBDOMAIN}'],
    ),
    (
        "scheduling group needs a name",
        _set(schedulingGroup={}),
        ["spec.schedulingGroup.podGroupName: Required value"],
    ),
    (
        "resource claim name",
        _set(resourceClaims=[{"name": "GPU", "resourceClaimName": "c"}]),
        [f'spec.resourceClaims[0].name: Invalid value: "GPU": {RFC1123_LABEL}'],
    ),
    (
        "resource claim with both sources",
        _set(resourceClaims=[{"name": "gpu", "resourceClaimName": "c", "resourceClaimTemplateName": "t"}]),
        [
            'spec.resourceClaims[0]: Invalid value: {"name":"gpu","resourceClaimName":"c","resourceClaimTemplateName":"t"}: '
            "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"
        ],
    ),
    (
        "resource claim without source",
        _set(resourceClaims=[{"name": "gpu"}]),
        [
            'spec.resourceClaims[0]: Invalid value: {"name":"gpu"}: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`'
        ],
    ),
    (
        "duplicate resource claim",
        _set(
            resourceClaims=[
                {"name": "gpu", "resourceClaimName": "a"},
                {"name": "gpu", "resourceClaimName": "b"},
            ]
        ),
        ['spec.resourceClaims[1].name: Duplicate value: "gpu"'],
    ),
    (
        "container claim not declared",
        _set(containers=[ctr(resources={"claims": [{"name": "gpu"}]})]),
        [
            'spec.containers[0].resources.claims[0]: Not found: "gpu": must be one of the names in pod.spec.resourceClaims which is empty'
        ],
    ),
    (
        "ephemeral containers on create",
        _set(ephemeralContainers=[{"name": "dbg", "image": "busybox"}]),
        ["spec.ephemeralContainers: Forbidden: cannot be set on create"],
    ),
    (
        "nodeName with scheduling gates",
        _set(nodeName="n1", schedulingGates=[{"name": "g"}]),
        ["spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"],
    ),
    (
        "active deadline",
        _set(activeDeadlineSeconds=0),
        ["spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"],
    ),
    (
        "init container restart policy",
        _set(initContainers=[ctr("init", restartPolicy="Never")]),
        ['spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"'],
    ),
    (
        "probe on plain init container",
        _set(initContainers=[ctr("init", readinessProbe={"exec": {"command": ["true"]}})]),
        [
            "spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always"
        ],
    ),
    (
        "restartPolicy on a regular container",
        _set(containers=[ctr(restartPolicy="Always")]),
        ["spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers"],
    ),
    (
        "volume mount without volume",
        _set(containers=[ctr(volumeMounts=[{"name": "data", "mountPath": "/d"}])]),
        ['spec.containers[0].volumeMounts[0].name: Not found: "data"'],
    ),
    (
        "two volume sources",
        _set(volumes=[{"name": "v", "emptyDir": {}, "configMap": {"name": "c"}}]),
        ["spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type"],
    ),
    (
        "host port must match with hostNetwork",
        _set(hostNetwork=True, containers=[ctr(ports=[{"containerPort": 80, "hostPort": 81}])]),
        [
            "spec.containers[0].ports[0].hostPort: Invalid value: 81: must match `containerPort` when `hostNetwork` is true"
        ],
    ),
    (
        "preemption policy",
        _set(preemptionPolicy="Sometimes"),
        [
            'spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"'
        ],
    ),
    (
        "mirror pod needs a node",
        lambda p: p["metadata"].__setitem__("annotations", {"kubernetes.io/config.mirror": "x"}),
        [
            'metadata.annotations[kubernetes.io/config.mirror]: Invalid value: "x": must set spec.nodeName if mirror pod annotation is set'
        ],
    ),
]


@pytest.mark.parametrize(("name", "mutate", "expected"), POD_CASES, ids=[c[0] for c in POD_CASES])
def test_pod_validation(name: str, mutate: Callable[[Obj], None], expected: list[str]) -> None:
    pod = make_pod()
    mutate(pod)
    _, errs = create("pods", pod)
    assert errs == expected


def test_valid_pod_with_everything_passes() -> None:
    pod = make_pod(
        containers=[
            ctr(
                req={"cpu": "100m"},
                lim={"cpu": "1", "memory": "1Gi"},
                ports=[{"name": "http", "containerPort": 80}],
            )
        ],
        initContainers=[
            ctr("sidecar", restartPolicy="Always", readinessProbe={"tcpSocket": {"port": "http"}})
        ],
        tolerations=[
            {"operator": "Exists"},
            {"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute", "tolerationSeconds": 30},
        ],
        nodeSelector={"kubernetes.io/os": "linux"},
        resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "gpu-tmpl"}],
        schedulingGroup={"podGroupName": "web-0.group"},
        topologySpreadConstraints=[
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
        ],
        priorityClassName="high",
        overhead={"cpu": "10m"},
    )
    _, errs = create("pods", pod)
    assert errs == []


@pytest.mark.parametrize(("enabled", "kept"), [(True, True), (False, False)])
def test_scheduling_group_is_dropped_when_generic_workload_is_off(enabled: bool, kept: bool) -> None:
    obj, errs = create(
        "pods", make_pod(schedulingGroup={"podGroupName": "pg"}), ctx({GENERIC_WORKLOAD: enabled})
    )
    assert errs == []
    assert ("schedulingGroup" in obj["spec"]) is kept


def test_scheduling_group_survives_updates_when_gate_turns_off() -> None:
    old, _ = create("pods", make_pod(schedulingGroup={"podGroupName": "pg"}))
    new, errs = update("pods", old, old, ctx({GENERIC_WORKLOAD: False}))
    assert errs == []
    assert new["spec"]["schedulingGroup"] == {"podGroupName": "pg"}


# ----------------------------------------------------------------------------- Pod updates

FORBIDDEN_PREFIX = (
    "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "
    "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"
)


def _stored_pod(**spec: Any) -> Obj:
    obj, errs = create("pods", make_pod(**spec))
    assert errs == []
    obj["metadata"]["resourceVersion"] = "1"
    return obj


def _mutated(old: Obj, f: Callable[[Obj], None]) -> Obj:
    new = copy.deepcopy(old)
    f(new)
    return new


UPDATE_CASES: list[tuple[str, dict[str, Any], Callable[[Obj], None], list[str]]] = [
    ("image change", {}, lambda p: p["spec"]["containers"][0].__setitem__("image", "nginx:1.28"), []),
    (
        "add a toleration",
        {},
        lambda p: p["spec"].__setitem__("tolerations", [{"key": "k", "operator": "Exists"}]),
        [],
    ),
    (
        "change a toleration",
        {"tolerations": [{"key": "k", "operator": "Exists"}]},
        lambda p: p["spec"].__setitem__("tolerations", [{"key": "k2", "operator": "Exists"}]),
        ["spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"],
    ),
    (
        "remove a scheduling gate",
        {"schedulingGates": [{"name": "a"}, {"name": "b"}]},
        lambda p: p["spec"].__setitem__("schedulingGates", [{"name": "b"}]),
        [],
    ),
    (
        "add a scheduling gate",
        {"schedulingGates": [{"name": "a"}]},
        lambda p: p["spec"].__setitem__("schedulingGates", [{"name": "a"}, {"name": "c"}]),
        [
            "spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'c'"
        ],
    ),
    (
        "raise activeDeadlineSeconds",
        {"activeDeadlineSeconds": 10},
        lambda p: p["spec"].__setitem__("activeDeadlineSeconds", 20),
        ["spec.activeDeadlineSeconds: Invalid value: 20: must be less than or equal to previous value"],
    ),
    (
        "lower activeDeadlineSeconds",
        {"activeDeadlineSeconds": 10},
        lambda p: p["spec"].__setitem__("activeDeadlineSeconds", 5),
        [],
    ),
    (
        "add a container",
        {},
        lambda p: p["spec"]["containers"].append(ctr("b")),
        ["spec.containers: Forbidden: pod updates may not add or remove containers"],
    ),
    (
        "gated pods may gain node selectors",
        {"schedulingGates": [{"name": "a"}]},
        lambda p: p["spec"].__setitem__("nodeSelector", {"zone": "a"}),
        [],
    ),
]


@pytest.mark.parametrize(
    ("name", "spec", "mutate", "expected"), UPDATE_CASES, ids=[c[0] for c in UPDATE_CASES]
)
def test_pod_update_rules(
    name: str, spec: dict[str, Any], mutate: Callable[[Obj], None], expected: list[str]
) -> None:
    old = _stored_pod(**spec)
    _, errs = update("pods", _mutated(old, mutate), old)
    assert errs == expected


@pytest.mark.parametrize(
    ("name", "mutate", "diff_line"),
    [
        ("nodeName via update", lambda p: p["spec"].__setitem__("nodeName", "n1"), '+ \tnodeName: "n1"'),
        (
            "restart policy",
            lambda p: p["spec"].__setitem__("restartPolicy", "Never"),
            '- \trestartPolicy: "Always"',
        ),
        (
            "ports",
            lambda p: p["spec"]["containers"][0].__setitem__("ports", [{"containerPort": 80}]),
            "+ \tcontainers[0].ports:",
        ),
    ],
)
def test_pod_spec_is_otherwise_immutable(name: str, mutate: Callable[[Obj], None], diff_line: str) -> None:
    old = _stored_pod()
    _, errs = update("pods", _mutated(old, mutate), old)
    assert len(errs) == 1
    assert errs[0].startswith(FORBIDDEN_PREFIX)
    assert diff_line in errs[0]


def test_scheduling_group_is_immutable() -> None:
    old = _stored_pod(schedulingGroup={"podGroupName": "a"})
    _, errs = update(
        "pods", _mutated(old, lambda p: p["spec"].__setitem__("schedulingGroup", {"podGroupName": "b"})), old
    )
    assert errs == ['spec.schedulingGroup: Invalid value: {"podGroupName":"b"}: field is immutable']


def test_pod_qos_change_is_reported() -> None:
    old = _stored_pod(containers=[ctr(lim={"cpu": "1", "memory": "1Gi"})])
    new = _mutated(
        old,
        lambda p: p["spec"]["containers"][0]["resources"].__setitem__(
            "requests", {"cpu": "500m", "memory": "1Gi"}
        ),
    )
    _, errs = update("pods", new, old)
    assert errs[0] == 'metadata: Invalid value: "Guaranteed": Pod QoS is immutable'
    assert errs[1].startswith(FORBIDDEN_PREFIX)


def test_pod_update_keeps_status_and_status_update_keeps_spec() -> None:
    old = _stored_pod()
    old["status"]["phase"] = "Running"
    new = _mutated(old, lambda p: p.__setitem__("status", {"phase": "Failed"}))
    new["spec"]["containers"][0]["image"] = "nginx:2"
    got, errs = update("pods", new, old)
    assert errs == []
    assert got["status"]["phase"] == "Running"
    assert got["spec"]["containers"][0]["image"] == "nginx:2"

    new = _mutated(old, lambda p: p["spec"].__setitem__("nodeName", "sneaky"))
    new["status"] = {"phase": "Succeeded"}
    got, errs = status_update("pods", new, old)
    assert errs == []
    assert "nodeName" not in got["spec"]
    assert got["status"] == {"phase": "Succeeded", "qosClass": "BestEffort"}  # qosClass backfilled


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ({"phase": "Running", "nominatedNodeName": "node-1"}, []),
        (
            {"phase": "Sleeping"},
            [
                'status.phase: Unsupported value: "Sleeping": supported values: "Pending", "Running", "Succeeded", "Failed", "Unknown"'
            ],
        ),
        (
            {"phase": "Pending", "nominatedNodeName": "Node_1"},
            [f'status.nominatedNodeName: Invalid value: "Node_1": {RFC1123_SUBDOMAIN}'],
        ),
        (
            {"phase": "Running", "podIPs": [{"ip": "10.0.0.300"}]},
            [
                'status.podIPs[0]: Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'
            ],
        ),
    ],
)
def test_pod_status_validation(status: Obj, expected: list[str]) -> None:
    old = _stored_pod()
    new = _mutated(old, lambda p: p.__setitem__("status", status))
    _, errs = status_update("pods", new, old)
    assert errs == expected


def test_terminated_containers_stay_terminated_without_restart() -> None:
    old = _stored_pod(restartPolicy="Never")
    old["status"]["containerStatuses"] = [{"name": "app", "state": {"terminated": {"exitCode": 0}}}]
    new = _mutated(
        old,
        lambda p: p["status"].__setitem__("containerStatuses", [{"name": "app", "state": {"running": {}}}]),
    )
    _, errs = status_update("pods", new, old)
    assert errs == [
        "status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state"
    ]


# ----------------------------------------------------------------------------- QoS and requests


@pytest.mark.parametrize(
    ("containers", "init", "pod_resources", "qos"),
    [
        ([ctr()], [], None, "BestEffort"),
        ([ctr(req={"cpu": "0"})], [], None, "BestEffort"),
        ([ctr(req={"cpu": "1", "memory": "1Gi"}, lim={"cpu": "1", "memory": "1Gi"})], [], None, "Guaranteed"),
        ([ctr(lim={"cpu": "1", "memory": "1Gi"})], [], None, "Guaranteed"),  # requests default to limits
        ([ctr(req={"cpu": "500m"}, lim={"cpu": "1", "memory": "1Gi"})], [], None, "Burstable"),
        ([ctr(lim={"cpu": "1"})], [], None, "Burstable"),
        ([ctr(lim={"cpu": "1", "memory": "1Gi"}), ctr("b")], [], None, "Burstable"),
        ([ctr(lim={"cpu": "1", "memory": "1Gi"})], [ctr("init", req={"cpu": "100m"})], None, "Burstable"),
        ([ctr(req={"example.com/gpu": "1"}, lim={"example.com/gpu": "1"})], [], None, "BestEffort"),
        (
            [ctr()],
            [],
            {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
            "Guaranteed",
        ),
        ([ctr()], [], {"requests": {"cpu": "1"}}, "Burstable"),
    ],
)
def test_qos_class(containers: list[Obj], init: list[Obj], pod_resources: Obj | None, qos: str) -> None:
    spec: Obj = {"containers": containers, "initContainers": init}
    if pod_resources is not None:
        spec["resources"] = pod_resources
    obj, errs = create("pods", make_pod(**spec))
    assert errs == []
    assert obj["status"]["qosClass"] == qos
    assert pod_qos_class(obj) == qos


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"containers": [ctr(req={"cpu": "100m"}), ctr("b", req={"cpu": "200m", "memory": "1Gi"})]},
            {"cpu": "3/10", "memory": str(2**30)},
        ),
        # an init container larger than the sum of regular containers dominates
        (
            {"containers": [ctr(req={"cpu": "100m"})], "initContainers": [ctr("i", req={"cpu": "2"})]},
            {"cpu": "2"},
        ),
        # sidecars add to the steady state and to every later init container
        (
            {
                "containers": [ctr(req={"cpu": "1"})],
                "initContainers": [
                    ctr("side", req={"cpu": "500m"}, restartPolicy="Always"),
                    ctr("i", req={"cpu": "1200m"}),
                ],
            },
            {"cpu": "17/10"},
        ),
        (
            {
                "containers": [ctr(req={"cpu": "1"})],
                "initContainers": [
                    ctr("i", req={"cpu": "1200m"}),
                    ctr("side", req={"cpu": "500m"}, restartPolicy="Always"),
                ],
            },
            {"cpu": "3/2"},
        ),
        (
            {"containers": [ctr(req={"cpu": "1"})], "overhead": {"cpu": "250m", "memory": "64Mi"}},
            {"cpu": "5/4", "memory": str(64 * 2**20)},
        ),
        (
            {"containers": [ctr(req={"cpu": "1", "memory": "1Gi"})], "resources": {"requests": {"cpu": "3"}}},
            {"cpu": "3", "memory": str(2**30)},
        ),
    ],
)
def test_pod_requests(spec: Obj, expected: dict[str, str]) -> None:
    got = pod_requests({"spec": spec})
    assert got == {k: Fraction(v) for k, v in expected.items()}


def test_pod_requests_can_exclude_overhead_and_limits_add_it_to_nonzero_only() -> None:
    pod = {"spec": {"containers": [ctr(lim={"cpu": "1"})], "overhead": {"cpu": "100m", "memory": "10Mi"}}}
    assert pod_requests(pod, exclude_overhead=True) == {}
    assert pod_limits(pod) == {"cpu": Fraction(11, 10)}


@pytest.mark.parametrize(
    ("status", "terminal", "ready"),
    [
        ({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}, False, True),
        ({"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]}, False, False),
        ({"phase": "Succeeded"}, True, False),
        ({"phase": "Failed"}, True, False),
        ({}, False, False),
    ],
)
def test_pod_terminal_and_ready(status: Obj, terminal: bool, ready: bool) -> None:
    pod = {"status": status}
    assert podspec.is_pod_terminal(pod) is terminal
    assert podspec.is_pod_ready(pod) is ready


# ----------------------------------------------------------------------------- Node


def _node(**spec: Any) -> Obj:
    return {
        "metadata": {"name": "n1"},
        "spec": spec,
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def test_node_create_keeps_status_and_defaults_allocatable() -> None:
    obj, errs = create("nodes", _node(unschedulable=True))
    assert errs == []
    assert obj["status"]["allocatable"] == {"cpu": "4", "memory": "8Gi", "pods": "110"}
    assert obj["spec"] == {"unschedulable": True}


@pytest.mark.parametrize(
    ("taints", "expected"),
    [
        ([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}], []),
        ([{"key": "k", "effect": ""}], ["metadata.taints[0].effect: Required value"]),
        (
            [{"key": "k", "effect": "Sometimes"}],
            [
                'metadata.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'
            ],
        ),
        (
            [{"key": "k", "effect": "NoSchedule"}, {"key": "k", "value": "x", "effect": "NoSchedule"}],
            [
                'metadata.taints[1]: Duplicate value: {"key":"k","value":"x","effect":"NoSchedule"}: taints must be unique by key and effect pair'
            ],
        ),
    ],
)
def test_node_taints(taints: list[Obj], expected: list[str]) -> None:
    _, errs = create("nodes", _node(taints=taints))
    assert errs == expected


def test_node_updates() -> None:
    old, _ = create("nodes", _node(podCIDRs=["10.0.1.0/24"], providerID="p1"))
    new = _mutated(old, lambda n: n["spec"].update(podCIDRs=["10.0.2.0/24"], providerID="p2"))
    new["status"] = {"capacity": {"cpu": "1"}}
    got, errs = update("nodes", new, old)
    assert errs == [
        'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid',
        'spec.providerID: Forbidden: node updates may not change providerID except from "" to valid',
    ]
    assert got["status"] == old["status"]
    new = _mutated(old, lambda n: n["status"].update(conditions=[{"type": "Ready", "status": "True"}]))
    got, errs = status_update("nodes", new, old)
    assert errs == [] and got["status"]["conditions"][0]["type"] == "Ready"


# ----------------------------------------------------------------------------- Namespace


def test_namespace_create_and_update() -> None:
    obj, errs = create(
        "namespaces", {"metadata": {"name": "team-a"}, "spec": {"finalizers": ["example.com/cleanup"]}}
    )
    assert errs == []
    assert obj["status"] == {"phase": "Active"}
    assert obj["spec"]["finalizers"] == ["example.com/cleanup", "kubernetes"]
    assert obj["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team-a"}
    new = _mutated(obj, lambda n: n.update(spec={"finalizers": []}, status={"phase": "Terminating"}))
    new["metadata"]["labels"] = {}
    got, errs = update("namespaces", new, obj)
    assert errs == []
    assert got["spec"]["finalizers"] == ["example.com/cleanup", "kubernetes"]
    assert got["status"] == {"phase": "Active"}
    assert got["metadata"]["labels"]["kubernetes.io/metadata.name"] == "team-a"


def test_namespace_finalizer_names() -> None:
    _, errs = create("namespaces", {"metadata": {"name": "a"}, "spec": {"finalizers": ["custom"]}})
    assert errs == [
        'spec.finalizers: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified'
    ]


@pytest.mark.parametrize(
    ("deleting", "phase", "expected"),
    [
        (False, "Active", []),
        (
            False,
            "Terminating",
            [
                "status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty"
            ],
        ),
        (
            True,
            "Active",
            [
                "status.Phase: Invalid value: \"Active\": may only be 'Terminating' if `deletionTimestamp` is not empty"
            ],
        ),
        (True, "Terminating", []),
    ],
)
def test_namespace_status_phase(deleting: bool, phase: str, expected: list[str]) -> None:
    old, _ = create("namespaces", {"metadata": {"name": "a"}})
    new = _mutated(old, lambda n: n.__setitem__("status", {"phase": phase}))
    if deleting:
        new["metadata"]["deletionTimestamp"] = NOW
    _, errs = status_update("namespaces", new, old)
    assert errs == expected


# ----------------------------------------------------------------------------- Service


def _svc(**spec: Any) -> Obj:
    base: Obj = {"selector": {"app": "web"}, "ports": [{"port": 80}]}
    base.update(spec)
    return {"metadata": {"name": "web", "namespace": "default"}, "spec": base}


def test_service_defaults() -> None:
    obj, errs = create("services", _svc())
    assert errs == []
    assert obj["spec"] == {
        "selector": {"app": "web"},
        "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
        "type": "ClusterIP",
        "sessionAffinity": "None",
        "internalTrafficPolicy": "Cluster",
        "ipFamilyPolicy": "SingleStack",
        "ipFamilies": ["IPv4"],
    }
    lb, errs = create("services", _svc(type="LoadBalancer"))
    assert errs == []
    assert (lb["spec"]["externalTrafficPolicy"], lb["spec"]["allocateLoadBalancerNodePorts"]) == (
        "Cluster",
        True,
    )
    sticky, _ = create("services", _svc(sessionAffinity="ClientIP"))
    assert sticky["spec"]["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"ports": []}, ["spec.ports: Required value"]),
        ({"ports": [], "clusterIP": "None"}, []),
        (
            {"ports": [{"port": 80}, {"port": 81}]},
            ["spec.ports[0].name: Required value", "spec.ports[1].name: Required value"],
        ),
        (
            {"ports": [{"port": 0}]},
            [
                "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                "spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive",
            ],
        ),
        (
            {"ports": [{"port": 80, "nodePort": 30080}]},
            ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"],
        ),
        (
            {"ports": [{"name": "a", "port": 80}, {"name": "b", "port": 80}]},
            ['spec.ports[1]: Duplicate value: {"port":80,"protocol":"TCP"}'],
        ),
        (
            {"type": "Magic"},
            [
                'spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"'
            ],
        ),
        ({"type": "ExternalName", "ports": []}, ["spec.externalName: Required value"]),
        (
            {"internalTrafficPolicy": "Nearby"},
            ['spec.internalTrafficPolicy: Unsupported value: "Nearby": supported values: "Cluster", "Local"'],
        ),
    ],
)
def test_service_validation(spec: Obj, expected: list[str]) -> None:
    _, errs = create("services", _svc(**spec))
    assert errs == expected


def test_service_cluster_ip_is_kept_and_immutable() -> None:
    old, _ = create("services", _svc(clusterIP="10.96.0.10"))
    assert old["spec"]["clusterIPs"] == ["10.96.0.10"]
    new = _mutated(old, lambda s: [s["spec"].pop(k) for k in ("clusterIP", "clusterIPs")])
    got, errs = update("services", new, old)
    assert errs == [] and got["spec"]["clusterIPs"] == ["10.96.0.10"]
    new = _mutated(old, lambda s: s["spec"].update(clusterIP="10.96.0.11", clusterIPs=["10.96.0.11"]))
    _, errs = update("services", new, old)
    assert errs == ['spec.clusterIPs[0]: Invalid value: ["10.96.0.11"]: may not change once set']


# ----------------------------------------------------------------------------- Endpoints, ConfigMap, Secret


def test_endpoints() -> None:
    ep = {
        "metadata": {"name": "web"},
        "subsets": [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "nope"}], "ports": [{"port": 80}]}],
    }
    obj, errs = create("endpoints", ep)
    assert obj["subsets"][0]["ports"] == [{"port": 80, "protocol": "TCP"}]
    assert errs == [
        'subsets[0].addresses[1].ip: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'
    ]


CONFIG_KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or "
    "'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)


@pytest.mark.parametrize(
    ("cm", "expected"),
    [
        ({"data": {"app.yaml": "x", "A_B-c": "y"}}, []),
        ({"data": {"bad key": "x"}}, [f'data[bad key]: Invalid value: "bad key": {CONFIG_KEY_MSG}']),
        ({"data": {"..x": "x"}}, ["data[..x]: Invalid value: \"..x\": must not start with '..'"]),
        (
            {"data": {"k": "x"}, "binaryData": {"k": "eA=="}},
            ['data[k]: Invalid value: "k": duplicate of key present in binaryData'],
        ),
        ({"data": {"big": "x" * (1024 * 1024 + 1)}}, ["Too long: may not be more than 1048576 bytes"]),
    ],
)
def test_config_map_validation(cm: Obj, expected: list[str]) -> None:
    _, errs = create("configmaps", {"metadata": {"name": "c", "namespace": "default"}, **cm})
    assert errs == expected


def test_immutable_config_map() -> None:
    old, _ = create("configmaps", {"metadata": {"name": "c"}, "data": {"a": "1"}, "immutable": True})
    new = _mutated(old, lambda c: c.update(data={"a": "2"}, immutable=False))
    _, errs = update("configmaps", new, old)
    assert errs == [
        "immutable: Forbidden: field is immutable when `immutable` is set",
        "data: Forbidden: field is immutable when `immutable` is set",
    ]


def test_secret_defaults_and_string_data() -> None:
    obj, errs = create(
        "secrets", {"metadata": {"name": "s"}, "data": {"a": "YQ=="}, "stringData": {"b": "hello"}}
    )
    assert errs == []
    assert obj["type"] == "Opaque"
    assert "stringData" not in obj
    assert obj["data"] == {"a": "YQ==", "b": base64.b64encode(b"hello").decode()}


@pytest.mark.parametrize(
    ("value", "offset"),
    [
        ("aGVsbG8=", None),
        ("YWJj", None),
        ("", None),
        ("YW\r\nJj", None),
        ("abc", 0),
        ("YWJj!", 4),
        ("YQ=", 3),
        ("Y===", 1),
        ("YQ==extra", 4),
        ("YQ", 0),
        ("YWJjZ", 4),
        ("é", 0),
    ],
)
def test_base64_offsets_match_go(value: str, offset: int | None) -> None:
    decoded, bad = decode_base64(value)
    assert bad == offset
    if offset is None:
        assert decoded == base64.b64decode(value.replace("\r\n", ""))


_B64_SYMBOLS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet=_B64_SYMBOLS, min_size=1, max_size=4),
            st.sampled_from(["=", "==", "\r\n", "-", " ", "é"]),
        ),
        max_size=8,
    ).map("".join)
)
def test_base64_fast_path_decides_as_the_go_walk_does(value: str) -> None:
    """Whole-quantum input goes through binascii; it must accept and refuse exactly as Go."""
    assert decode_base64(value) == decode_base64_walk(value.encode("utf-8", "surrogatepass"))


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet="ab.-_Z9", max_size=5),
            st.sampled_from([".", "..", "..a", "a..", "a\nb", "é", "x" * 254, "x" * 253, "a b"]),
        ),
        max_size=6,
    )
)
def test_bulk_config_map_key_check_agrees_with_the_per_key_check(keys: list[str]) -> None:
    assert all_config_map_keys(keys) == all(not is_config_map_key(k) for k in keys)


@pytest.mark.parametrize(
    ("secret", "expected"),
    [
        (
            {"data": {"k": "not base64!"}},
            ['data[k]: Invalid value: "<secret contents redacted>": illegal base64 data at input byte 3'],
        ),
        ({"data": {"bad/key": "YQ=="}}, [f'data[bad/key]: Invalid value: "bad/key": {CONFIG_KEY_MSG}']),
        ({"type": "kubernetes.io/tls", "data": {"tls.crt": "YQ=="}}, ["data[tls.key]: Required value"]),
        (
            {"type": "kubernetes.io/service-account-token"},
            ["metadata.annotations[kubernetes.io/service-account.name]: Required value"],
        ),
        ({"type": "kubernetes.io/basic-auth", "data": {"password": "YQ=="}}, []),
    ],
)
def test_secret_validation(secret: Obj, expected: list[str]) -> None:
    _, errs = create("secrets", {"metadata": {"name": "s"}, **secret})
    assert errs == expected


def test_secret_type_is_immutable() -> None:
    old, _ = create("secrets", {"metadata": {"name": "s"}})
    _, errs = update("secrets", _mutated(old, lambda s: s.__setitem__("type", "kubernetes.io/tls")), old)
    assert errs[0] == 'type: Invalid value: "kubernetes.io/tls": field is immutable'


# ----------------------------------------------------------------------------- Event


@pytest.mark.parametrize(
    ("event", "namespace", "expected"),
    [
        (
            {"involvedObject": {"kind": "Pod", "namespace": "default", "name": "p"}, "reason": "Started"},
            "default",
            [],
        ),
        (
            {"involvedObject": {"kind": "Pod", "namespace": "other", "name": "p"}},
            "default",
            ['involvedObject.namespace: Invalid value: "other": does not match event.namespace'],
        ),
        ({"involvedObject": {"kind": "Node", "name": "n"}}, "default", []),
        (
            {
                "involvedObject": {"kind": "Pod", "namespace": "default"},
                "eventTime": "2026-01-01T00:00:00.000000Z",
                "reason": "R",
            },
            "default",
            [
                "reportingComponent: Required value",
                'reportingComponent: Invalid value: "": name part must be non-empty',
                "reportingComponent: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "reportingInstance: Required value",
                "action: Required value",
            ],
        ),
    ],
)
def test_core_event_validation(event: Obj, namespace: str, expected: list[str]) -> None:
    _, errs = create(
        "events", {"metadata": {"name": "e", "namespace": namespace}, **event}, ctx(namespace=namespace)
    )
    assert errs == expected


# ----------------------------------------------------------------------------- PVC / PV


def _pvc(**spec: Any) -> Obj:
    base: Obj = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    base.update(spec)
    return {"metadata": {"name": "data", "namespace": "default"}, "spec": base}


def test_pvc_defaults_and_status() -> None:
    obj, errs = create("persistentvolumeclaims", {**_pvc(), "status": {"phase": "Bound"}})
    assert errs == []
    assert obj["spec"]["volumeMode"] == "Filesystem"
    assert obj["status"] == {"phase": "Pending"}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"accessModes": []}, ["spec.accessModes: Required value: at least 1 access mode is required"]),
        ({"resources": {}}, ["spec.resources[storage]: Required value"]),
        (
            {"resources": {"requests": {"storage": "0"}}},
            ['spec.resources[storage]: Invalid value: "0": must be greater than zero'],
        ),
        (
            {"accessModes": ["ReadWriteSometimes"]},
            [
                'spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'
            ],
        ),
        (
            {"accessModes": ["ReadWriteOncePod", "ReadWriteOnce"]},
            ["spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"],
        ),
        (
            {"volumeMode": "Raw"},
            ['spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"'],
        ),
    ],
)
def test_pvc_validation(spec: Obj, expected: list[str]) -> None:
    _, errs = create("persistentvolumeclaims", _pvc(**spec))
    assert errs == expected


def test_pvc_update_rules() -> None:
    old, _ = create("persistentvolumeclaims", _pvc())
    # binding: volumeName may be set once
    bound = _mutated(old, lambda p: p["spec"].__setitem__("volumeName", "pv-1"))
    got, errs = update("persistentvolumeclaims", bound, old)
    assert errs == []
    # growing an unbound claim is refused, a bound one may grow
    grown = _mutated(got, lambda p: p["spec"]["resources"]["requests"].__setitem__("storage", "2Gi"))
    _, errs = update("persistentvolumeclaims", grown, got)
    assert len(errs) == 1
    assert errs[0].startswith(
        "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
    )
    got["status"] = {"phase": "Bound", "capacity": {"storage": "1Gi"}}
    _, errs = update("persistentvolumeclaims", grown, got)
    assert errs == []
    shrunk = _mutated(got, lambda p: p["spec"]["resources"]["requests"].__setitem__("storage", "512Mi"))
    _, errs = update("persistentvolumeclaims", shrunk, got)
    assert errs == ["spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"]
    # volumeName cannot move once set
    moved = _mutated(got, lambda p: p["spec"].__setitem__("volumeName", "pv-2"))
    _, errs = update("persistentvolumeclaims", moved, got)
    assert errs and errs[0].startswith("spec: Forbidden: spec is immutable after creation")


def test_pv_defaults_and_phase_transition_time() -> None:
    pv = {
        "metadata": {"name": "pv-1"},
        "spec": {
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/data"},
        },
    }
    obj, errs = create("persistentvolumes", pv)
    assert errs == []
    assert (obj["spec"]["persistentVolumeReclaimPolicy"], obj["spec"]["volumeMode"]) == (
        "Retain",
        "Filesystem",
    )
    assert obj["status"] == {"phase": "Pending", "lastPhaseTransitionTime": NOW}
    _, errs = create(
        "persistentvolumes",
        {
            "metadata": {"name": "pv-2"},
            "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}},
        },
    )
    assert errs == ["spec: Required value: must specify a volume type"]


# ----------------------------------------------------------------------------- LimitRange / ResourceQuota


def test_limit_range_defaults_and_validation() -> None:
    lr = {
        "metadata": {"name": "lr"},
        "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}}]},
    }
    obj, errs = create("limitranges", lr)
    assert errs == []
    item = obj["spec"]["limits"][0]
    assert item["default"] == {"cpu": "2"}
    assert item["defaultRequest"] == {"cpu": "2", "memory": "64Mi"}
    bad = {
        "metadata": {"name": "lr"},
        "spec": {"limits": [{"type": "Pod", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]},
    }
    _, errs = create("limitranges", bad)
    assert errs == ['spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1']


@pytest.mark.parametrize(
    ("hard", "expected"),
    [
        ({"pods": "10", "requests.cpu": "4", "count/deployments.apps": "2"}, []),
        (
            {"widgets": "1"},
            [
                'spec.hard[widgets]: Invalid value: "widgets": must be a standard resource type or fully qualified'
            ],
        ),
        ({"pods": "1500m"}, ['spec.hard[pods]: Invalid value: "1500m": must be an integer']),
    ],
)
def test_resource_quota(hard: Obj, expected: list[str]) -> None:
    obj, errs = create(
        "resourcequotas",
        {"metadata": {"name": "q"}, "spec": {"hard": hard}, "status": {"used": {"pods": "1"}}},
    )
    assert errs == expected
    assert "status" not in obj


def test_strategy_table() -> None:
    assert set(STRATEGIES) == {
        ("", p)
        for p in (
            "pods",
            "nodes",
            "namespaces",
            "services",
            "endpoints",
            "configmaps",
            "secrets",
            "serviceaccounts",
            "events",
            "persistentvolumeclaims",
            "persistentvolumes",
            "limitranges",
            "resourcequotas",
        )
    }
    assert {k[1] for k, s in STRATEGIES.items() if s.has_status} == {
        "pods",
        "nodes",
        "namespaces",
        "services",
        "persistentvolumeclaims",
        "persistentvolumes",
        "resourcequotas",
    }
    assert isinstance(STRATEGIES[("", "pods")], core.PodStrategy)


@pytest.mark.parametrize(
    ("plural", "tracked"),
    [
        ("pods", True),
        ("configmaps", False),
        ("secrets", False),
        ("events", False),
        ("services", False),
        ("nodes", False),
    ],
)
def test_generation_tracking_follows_kube(plural: str, tracked: bool) -> None:
    s = strategy(plural)
    a = {"metadata": {"name": "x"}, "spec": {"a": 1}, "data": {"k": "1"}}
    b = {"metadata": {"name": "x"}, "spec": {"a": 2}, "data": {"k": "2"}}
    assert (s.generation_relevant(a) != s.generation_relevant(b)) is tracked
