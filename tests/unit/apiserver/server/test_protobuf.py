"""Tests for the Kubernetes protobuf request-body decoder (``apiserver.server.protobuf``).

Two kinds of input are used:

* genuine bodies captured from the real kubectl 1.37 (``tests/fixtures/protobuf/*.bin``, made by
  ``tests/fixtures/protobuf/capture.py``), compared with kubectl's own ``--dry-run=client -o
  json`` rendering of the same object (``*.json`` next to them);
* bodies built here with a tiny test-only protobuf writer, using the field numbers of the upstream
  ``generated.proto`` files (noted next to each field), for cases kubectl cannot produce.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from apiserver.errors import StatusError
from apiserver.server.protobuf import KINDS, SCHEMAS, decode_k8s_protobuf, is_protobuf

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "protobuf"


# --------------------------------------------------------------------------------------------------
# A tiny protobuf writer (test only)


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative numbers are sign-extended to 64 bits, as Go does
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _tag(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def fv(number: int, value: int) -> bytes:
    """A varint field (int32, int64, bool)."""
    return _tag(number, 0) + _varint(value)


def fb(number: int, value: str | bytes) -> bytes:
    """A length-delimited field holding a string or raw bytes."""
    data = value.encode() if isinstance(value, str) else value
    return _tag(number, 2) + _varint(len(data)) + data


def fm(number: int, *parts: bytes) -> bytes:
    """An embedded message field made of the given encoded fields."""
    return fb(number, b"".join(parts))


def fmap(number: int, key: str, value: str | bytes) -> bytes:
    """One map entry (key = 1, value = 2)."""
    return fm(number, fb(1, key), fb(2, value))


def f64(number: int, data: bytes = b"\x01" * 8) -> bytes:
    return _tag(number, 1) + data


def f32(number: int, data: bytes = b"\x02" * 4) -> bytes:
    return _tag(number, 5) + data


def envelope(api_version: str, kind: str, raw: bytes, *, encoding: str = "", content_type: str = "") -> bytes:
    """``k8s\\0`` + runtime.Unknown{typeMeta(1){apiVersion=1, kind=2}, raw=2, contentEncoding=3, contentType=4}."""
    body = fm(1, fb(1, api_version), fb(2, kind)) + fb(2, raw)
    if encoding:
        body += fb(3, encoding)
    if content_type:
        body += fb(4, content_type)
    return b"k8s\x00" + body


def meta(*parts: bytes) -> bytes:
    """Pod.metadata / Deployment.metadata … = field 1 (ObjectMeta)."""
    return fm(1, *parts)


def decode_error(body: bytes) -> StatusError:
    with pytest.raises(StatusError) as info:
        decode_k8s_protobuf(body)
    return info.value


# --------------------------------------------------------------------------------------------------
# Content type


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("application/vnd.kubernetes.protobuf", True),
        ("application/vnd.kubernetes.protobuf; charset=utf-8", True),
        ("Application/VND.Kubernetes.Protobuf", True),
        ("application/vnd.kubernetes.protobuf;stream=watch", True),
        ("application/json", False),
        ("application/vnd.kubernetes.protobuf+json", False),
        ("", False),
        (None, False),
    ],
)
def test_is_protobuf(content_type: str | None, expected: bool) -> None:
    assert is_protobuf(content_type) is expected


# --------------------------------------------------------------------------------------------------
# Genuine kubectl bodies

# Every captured fixture whose kubectl command supports --dry-run=client -o json.
DRY_RUN_FIXTURES = sorted(p.stem for p in FIXTURES.glob("*.json"))

# kubectl's JSON writes the nil slice HorizontalPodAutoscalerStatus.currentMetrics (no omitempty)
# as null; a nil slice is simply absent in protobuf, so the decoder omits it. The server treats
# null and absent alike.
JSON_ONLY_NULLS = {
    "autoscale": [("status", "currentMetrics")],
    "autoscale_cpu": [("status", "currentMetrics")],
    # ClusterRole.rules has no omitempty either: an aggregated role's JSON says "rules": null.
    "clusterrole_aggregated": [("rules",)],
}

NO_DRY_RUN_EXPECTED: dict[str, dict[str, Any]] = {
    "can_i": {
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {},
        "spec": {"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "pods"}},
        "status": {"allowed": False},
    },
    "can_i_sub": {
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {},
        "spec": {
            "resourceAttributes": {
                "namespace": "kube-system",
                "verb": "get",
                "resource": "pods",
                "subresource": "log",
                "name": "web",
            }
        },
        "status": {"allowed": False},
    },
    "can_i_group": {
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {},
        "spec": {"resourceAttributes": {"verb": "list", "group": "apps", "resource": "deployments"}},
        "status": {"allowed": False},
    },
    "can_i_nonresource": {
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {},
        "spec": {"nonResourceAttributes": {"path": "/healthz", "verb": "get"}},
        "status": {"allowed": False},
    },
    "token": {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {},
        "spec": {"audiences": ["aud1"], "expirationSeconds": 3600},
        # TokenRequestStatus fields have no omitempty: Go's JSON is {"token":"","expirationTimestamp":null}.
        "status": {"token": "", "expirationTimestamp": None},
    },
    "token_bound": {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {},
        "spec": {
            "audiences": ["a", "b"],
            "boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "s"},
        },
        "status": {"token": "", "expirationTimestamp": None},
    },
}


def _load_fixture(name: str) -> bytes:
    return (FIXTURES / f"{name}.bin").read_bytes()


@pytest.mark.parametrize("name", DRY_RUN_FIXTURES)
def test_captured_body_decodes_to_kubectl_json(name: str) -> None:
    expected = json.loads((FIXTURES / f"{name}.json").read_text())
    for path in JSON_ONLY_NULLS.get(name, []):
        parent = expected
        for key in path[:-1]:
            parent = parent[key]
        assert parent.pop(path[-1]) is None
    assert decode_k8s_protobuf(_load_fixture(name)) == expected


@pytest.mark.parametrize("name", sorted(NO_DRY_RUN_EXPECTED))
def test_captured_body_without_dry_run(name: str) -> None:
    assert decode_k8s_protobuf(_load_fixture(name)) == NO_DRY_RUN_EXPECTED[name]


def test_every_captured_body_is_checked() -> None:
    captured = {p.stem for p in FIXTURES.glob("*.bin")}
    assert captured == set(DRY_RUN_FIXTURES) | set(NO_DRY_RUN_EXPECTED)
    assert {"namespace", "configmap", "secret", "deployment", "service", "job"} <= captured


def test_captured_kind_and_api_version_come_first() -> None:
    obj = decode_k8s_protobuf(_load_fixture("deployment"))
    assert list(obj)[:2] == ["kind", "apiVersion"]
    assert (obj["kind"], obj["apiVersion"]) == ("Deployment", "apps/v1")


def test_captured_deployment_details() -> None:
    obj = decode_k8s_protobuf(_load_fixture("deployment"))
    assert obj["spec"]["replicas"] == 2
    container = obj["spec"]["template"]["spec"]["containers"][0]
    assert container == {"name": "nginx", "image": "nginx", "ports": [{"containerPort": 80}], "resources": {}}
    assert obj["status"] == {}
    assert "creationTimestamp" not in obj["metadata"]  # zero Time is omitted


def test_captured_secret_data_is_base64() -> None:
    assert decode_k8s_protobuf(_load_fixture("secret"))["data"] == {"k": "dg=="}
    assert decode_k8s_protobuf(_load_fixture("configmap_binary"))["binaryData"] == {"blob": "AP9iaW4="}


def test_captured_rich_job_keeps_explicit_zeroes() -> None:
    """`create job --from=cronjob/rich` carries a full pod template encoded by Go."""
    obj = decode_k8s_protobuf(_load_fixture("job_from_cronjob"))
    spec = obj["spec"]
    assert spec["backoffLimit"] == 0
    assert spec["ttlSecondsAfterFinished"] == 0
    assert spec["suspend"] is False
    pod = spec["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == 0
    assert pod["priority"] == -5
    assert pod["securityContext"]["runAsUser"] == 0
    assert pod["volumes"][1] == {"name": "sec", "secret": {"secretName": "s", "defaultMode": 0}}
    assert spec["template"]["metadata"]["creationTimestamp"] == "2024-01-02T03:04:05Z"
    env = pod["containers"][0]["env"]
    assert env[3] == {
        "name": "PASS",
        "valueFrom": {"secretKeyRef": {"name": "s", "key": "k", "optional": True}},
    }
    assert pod["containers"][0]["livenessProbe"]["httpGet"]["port"] == "http"
    assert pod["containers"][0]["readinessProbe"]["tcpSocket"]["port"] == 8080
    assert obj["metadata"]["ownerReferences"][0]["controller"] is True


# --------------------------------------------------------------------------------------------------
# Hand-encoded bodies


def _deployment_raw() -> bytes:
    template = fm(
        3,  # DeploymentSpec.template = 3 (PodTemplateSpec)
        meta(fmap(11, "app", "web")),  # PodTemplateSpec.metadata = 1, ObjectMeta.labels = 11
        fm(
            2,  # PodTemplateSpec.spec = 2 (PodSpec)
            fm(
                2,  # PodSpec.containers = 2 (Container)
                fb(1, "app"),  # Container.name = 1
                fb(2, "nginx:1.27"),  # Container.image = 2
                fm(
                    8,  # Container.resources = 8 (ResourceRequirements)
                    fm(1, fb(1, "cpu"), fm(2, fb(1, "250m"))),  # limits = 1, Quantity.string = 1
                    fm(2, fb(1, "memory"), fm(2, fb(1, "64Mi"))),  # requests = 2
                ),
                fm(
                    9, fb(1, "data"), fb(3, "/data"), fv(2, 1)
                ),  # volumeMounts = 9: name 1, mountPath 3, readOnly 2
                fb(14, "Always"),  # imagePullPolicy = 14
            ),
            fm(
                1,  # PodSpec.volumes = 1 (Volume: name = 1, volumeSource = 2 inlined)
                fb(1, "data"),
                fm(
                    2, fm(19, fm(1, fb(1, "cfg")), fv(3, 420))
                ),  # configMap = 19: LocalObjectReference 1, defaultMode 3
            ),
            fb(3, "Always"),  # PodSpec.restartPolicy = 3
            fm(7, fb(1, "disk"), fb(2, "ssd")),  # PodSpec.nodeSelector = 7
        ),
    )
    spec = fm(
        2,  # Deployment.spec = 2
        fv(1, 0),  # DeploymentSpec.replicas = 1 (pointer: explicit zero)
        fm(2, fmap(1, "app", "web")),  # selector = 2, LabelSelector.matchLabels = 1
        template,
        fm(
            4,  # strategy = 4
            fb(1, "RollingUpdate"),  # DeploymentStrategy.type = 1
            fm(
                2,  # rollingUpdate = 2
                fm(1, fv(1, 1), fb(3, "25%")),  # maxUnavailable: IntOrString{type=1 (String), strVal=3}
                fm(2, fv(1, 0), fv(2, 2)),  # maxSurge: IntOrString{type=0 (Int), intVal=2}
            ),
        ),
        fv(5, 0),  # minReadySeconds = 5 (value field, omitempty)
        fv(6, 3),  # revisionHistoryLimit = 6
        fv(7, 0),  # paused = 7 (false, omitempty)
    )
    metadata = meta(
        fb(1, "web"),  # name = 1
        fb(3, "prod"),  # namespace = 3
        fb(5, ""),  # uid = 5 (empty string, omitted)
        fm(8, fv(1, 1_700_000_000), fv(2, 123_000_000)),  # creationTimestamp = 8 (Time: seconds 1, nanos 2)
        fv(10, 30),  # deletionGracePeriodSeconds = 10
        fmap(11, "app", "web"),  # labels = 11
        fmap(12, "note", "a=b"),  # annotations = 12
        fm(
            13,  # ownerReferences = 13 (OwnerReference)
            fb(1, "Thing"),  # kind = 1
            fb(3, "owner"),  # name = 3
            fb(4, "uid-1"),  # uid = 4
            fb(5, "example.com/v1"),  # apiVersion = 5
            fv(6, 1),  # controller = 6
            fv(7, 0),  # blockOwnerDeletion = 7 (pointer: explicit false)
        ),
        fb(14, "example.com/cleanup"),  # finalizers = 14
        fm(
            17,  # managedFields = 17 (ManagedFieldsEntry)
            fb(1, "kubectl"),  # manager = 1
            fb(2, "Update"),  # operation = 2
            fb(3, "apps/v1"),  # apiVersion = 3
            fm(4, fv(1, 1_700_000_000)),  # time = 4
            fb(6, "FieldsV1"),  # fieldsType = 6
            fm(7, fb(1, b'{"f:spec":{"f:replicas":{}}}')),  # fieldsV1 = 7 (FieldsV1.Raw = 1)
        ),
    )
    return metadata + spec + fm(3)  # Deployment.status = 3 (empty)


DEPLOYMENT_EXPECTED: dict[str, Any] = {
    "kind": "Deployment",
    "apiVersion": "apps/v1",
    "metadata": {
        "name": "web",
        "namespace": "prod",
        "creationTimestamp": "2023-11-14T22:13:20Z",
        "deletionGracePeriodSeconds": 30,
        "labels": {"app": "web"},
        "annotations": {"note": "a=b"},
        "ownerReferences": [
            {
                "kind": "Thing",
                "name": "owner",
                "uid": "uid-1",
                "apiVersion": "example.com/v1",
                "controller": True,
                "blockOwnerDeletion": False,
            }
        ],
        "finalizers": ["example.com/cleanup"],
        "managedFields": [
            {
                "manager": "kubectl",
                "operation": "Update",
                "apiVersion": "apps/v1",
                "time": "2023-11-14T22:13:20Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {"f:replicas": {}}},
            }
        ],
    },
    "spec": {
        "replicas": 0,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "nginx:1.27",
                        "resources": {"limits": {"cpu": "250m"}, "requests": {"memory": "64Mi"}},
                        "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": True}],
                        "imagePullPolicy": "Always",
                    }
                ],
                "volumes": [{"name": "data", "configMap": {"name": "cfg", "defaultMode": 420}}],
                "restartPolicy": "Always",
                "nodeSelector": {"disk": "ssd"},
            },
        },
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 2}},
        "revisionHistoryLimit": 3,
    },
    "status": {},
}


def test_hand_encoded_deployment() -> None:
    assert decode_k8s_protobuf(envelope("apps/v1", "Deployment", _deployment_raw())) == DEPLOYMENT_EXPECTED


def test_unknown_fields_of_every_wire_type_are_skipped() -> None:
    noise = fv(900, 7) + fb(901, "x") + f64(902) + f32(903)
    raw = _deployment_raw()
    # Top level, inside the envelope, and inside nested messages.
    nested = meta(noise, fb(1, "web")) + fm(2, noise, fv(1, 0))
    body = envelope("apps/v1", "Deployment", noise + raw + nested + noise) + noise
    obj = decode_k8s_protobuf(body)
    assert obj["metadata"]["name"] == "web"
    assert obj["spec"]["replicas"] == 0
    assert obj == DEPLOYMENT_EXPECTED


def test_repeated_embedded_message_occurrences_merge_and_last_scalar_wins() -> None:
    raw = meta(fb(1, "first"), fmap(11, "a", "1")) + meta(fb(1, "second"), fmap(11, "b", "2"))
    obj = decode_k8s_protobuf(envelope("v1", "ConfigMap", raw))
    assert obj["metadata"] == {"name": "second", "labels": {"a": "1", "b": "2"}}


def test_secret_fields() -> None:
    raw = (
        meta(fb(1, "s"), fb(2, "s-"))  # name = 1, generateName = 2
        + fv(5, 1)  # Secret.immutable = 5
        + fmap(2, "bin", b"\x00\x01\xff")  # data = 2 (map<string, bytes>)
        + fmap(2, "empty", b"")
        + fmap(4, "plain", "text")  # stringData = 4
        + fb(3, "kubernetes.io/tls")  # type = 3
    )
    assert decode_k8s_protobuf(envelope("v1", "Secret", raw)) == {
        "kind": "Secret",
        "apiVersion": "v1",
        "metadata": {"name": "s", "generateName": "s-"},
        "immutable": True,
        "data": {"bin": "AAH/", "empty": ""},
        "stringData": {"plain": "text"},
        "type": "kubernetes.io/tls",
    }


def test_configmap_immutable_false_is_kept() -> None:
    raw = meta(fb(1, "c")) + fv(4, 0) + fmap(2, "k", "")  # ConfigMap.immutable = 4, data = 2
    obj = decode_k8s_protobuf(envelope("v1", "ConfigMap", raw))
    assert obj["immutable"] is False
    assert obj["data"] == {"k": ""}


def test_namespace_spec_finalizers() -> None:
    raw = meta(fb(1, "ns")) + fm(2, fb(1, "kubernetes")) + fm(3, fb(1, "Active"))
    assert decode_k8s_protobuf(envelope("v1", "Namespace", raw)) == {
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {"name": "ns"},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def test_service_spec_fields() -> None:
    raw = meta(fb(1, "svc")) + fm(
        2,  # Service.spec = 2
        fm(
            1, fb(1, "http"), fb(2, "TCP"), fv(3, 80), fm(4, fv(1, 1), fb(3, "web")), fb(6, "http")
        ),  # ports = 1
        fm(1, fb(1, "zero"), fv(3, 0), fm(4)),  # port 0 kept (no omitempty), zero IntOrString -> 0
        fmap(2, "app", "web"),  # selector = 2
        fb(3, "10.0.0.10"),  # clusterIP = 3
        fb(18, "10.0.0.10"),  # clusterIPs = 18
        fb(4, "LoadBalancer"),  # type = 4
        fb(7, "ClientIP"),  # sessionAffinity = 7
        fm(14, fm(1, fv(1, 10800))),  # sessionAffinityConfig = 14 -> clientIP = 1 -> timeoutSeconds = 1
        fb(19, "IPv4"),  # ipFamilies = 19
        fb(17, "SingleStack"),  # ipFamilyPolicy = 17
        fv(20, 0),  # allocateLoadBalancerNodePorts = 20 (pointer false)
        fb(11, "Local"),  # externalTrafficPolicy = 11
    )
    spec = decode_k8s_protobuf(envelope("v1", "Service", raw))["spec"]
    assert spec == {
        "ports": [
            {"name": "http", "protocol": "TCP", "port": 80, "targetPort": "web", "appProtocol": "http"},
            {"name": "zero", "port": 0, "targetPort": 0},
        ],
        "selector": {"app": "web"},
        "clusterIP": "10.0.0.10",
        "clusterIPs": ["10.0.0.10"],
        "type": "LoadBalancer",
        "sessionAffinity": "ClientIP",
        "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}},
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "allocateLoadBalancerNodePorts": False,
        "externalTrafficPolicy": "Local",
    }


def test_packed_and_unpacked_repeated_ints_decode_alike() -> None:
    def body(values: bytes) -> bytes:
        # Job.spec = 2 -> podFailurePolicy = 11 -> rules = 1 -> onExitCodes = 2 -> values = 3
        rule = fm(1, fb(1, "FailJob"), fm(2, fb(2, "In"), values))
        return envelope("batch/v1", "Job", fm(2, fm(11, rule)))

    unpacked = decode_k8s_protobuf(body(fv(3, 1) + fv(3, 42)))
    packed = decode_k8s_protobuf(body(fb(3, _varint(1) + _varint(42))))
    assert unpacked == packed
    assert packed["spec"]["podFailurePolicy"]["rules"][0]["onExitCodes"] == {
        "operator": "In",
        "values": [1, 42],
    }


def test_negative_integers() -> None:
    # PodSpec.priority = 25 (int32), activeDeadlineSeconds = 5 (int64), inside Pod.spec = 2.
    raw = fm(2, fv(25, -7), fv(5, -1), fm(2, fb(1, "c")))
    spec = decode_k8s_protobuf(envelope("v1", "Pod", raw))["spec"]
    assert spec["priority"] == -7
    assert spec["activeDeadlineSeconds"] == -1


def test_time_values() -> None:
    # ObjectMeta.creationTimestamp = 8, deletionTimestamp = 9.
    raw = meta(fm(8, fv(1, 0)), fm(9, fv(1, 1_704_164_645), fv(2, 999_999_999)))
    metadata = decode_k8s_protobuf(envelope("v1", "ConfigMap", raw))["metadata"]
    assert metadata == {
        "creationTimestamp": "1970-01-01T00:00:00Z",
        "deletionTimestamp": "2024-01-02T03:04:05Z",
    }


def test_statefulset_fields() -> None:
    raw = meta(fb(1, "db")) + fm(
        2,  # StatefulSet.spec = 2
        fv(1, 3),  # replicas = 1
        fm(2, fmap(1, "app", "db")),  # selector = 2
        fm(3, meta(fmap(11, "app", "db")), fm(2, fm(2, fb(1, "db"), fb(2, "postgres")))),  # template = 3
        fm(
            4,  # volumeClaimTemplates = 4 (PersistentVolumeClaim)
            meta(fb(1, "data")),
            fm(2, fb(1, "ReadWriteOnce"), fm(2, fm(2, fb(1, "storage"), fm(2, fb(1, "1Gi"))))),
        ),
        fb(5, "db-headless"),  # serviceName = 5
        fb(6, "Parallel"),  # podManagementPolicy = 6
        fm(7, fb(1, "RollingUpdate"), fm(2, fv(1, 0))),  # updateStrategy = 7 -> rollingUpdate.partition = 1
        fm(10, fb(1, "Delete"), fb(2, "Retain")),  # persistentVolumeClaimRetentionPolicy = 10
        fm(11, fv(1, 1)),  # ordinals = 11 -> start = 1
    )
    spec = decode_k8s_protobuf(envelope("apps/v1", "StatefulSet", raw))["spec"]
    assert spec == {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "db"}},
        "template": {
            "metadata": {"labels": {"app": "db"}},
            "spec": {"containers": [{"name": "db", "image": "postgres"}]},
        },
        "volumeClaimTemplates": [
            {
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            }
        ],
        "serviceName": "db-headless",
        "podManagementPolicy": "Parallel",
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"},
        "ordinals": {"start": 1},
    }


def test_autoscaling_v1_hpa() -> None:
    raw = meta(fb(1, "h")) + fm(
        2,
        fm(1, fb(1, "Deployment"), fb(2, "web"), fb(3, "apps/v1")),  # scaleTargetRef = 1
        fv(2, 1),  # minReplicas = 2
        fv(3, 4),  # maxReplicas = 3
        fv(4, 80),  # targetCPUUtilizationPercentage = 4
    )
    assert decode_k8s_protobuf(envelope("autoscaling/v1", "HorizontalPodAutoscaler", raw))["spec"] == {
        "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
        "minReplicas": 1,
        "maxReplicas": 4,
        "targetCPUUtilizationPercentage": 80,
    }


def test_subject_access_review_extra_map_of_string_lists() -> None:
    raw = fm(
        2,  # SubjectAccessReview.spec = 2
        fm(1, fb(2, "get"), fb(5, "pods")),  # resourceAttributes = 1: verb 2, resource 5
        fb(3, "alice"),  # user = 3
        fb(4, "devs"),  # groups = 4
        fm(5, fb(1, "scopes"), fm(2, fb(1, "a"), fb(1, "b"))),  # extra = 5: map<string, ExtraValue{items=1}>
        fb(6, "uid-9"),  # uid = 6
    ) + fm(3, fv(1, 1), fb(2, "rbac"))  # status = 3: allowed 1, reason 2
    assert decode_k8s_protobuf(envelope("authorization.k8s.io/v1", "SubjectAccessReview", raw)) == {
        "kind": "SubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "spec": {
            "resourceAttributes": {"verb": "get", "resource": "pods"},
            "user": "alice",
            "groups": ["devs"],
            "extra": {"scopes": ["a", "b"]},
            "uid": "uid-9",
        },
        "status": {"allowed": True, "reason": "rbac"},
    }


def test_container_probe_and_env_inlining() -> None:
    container = fm(
        2,  # PodSpec.containers = 2
        fb(1, "c"),
        fm(
            7, fb(1, "A"), fm(3, fm(3, fm(1, fb(1, "cm")), fb(2, "key")))
        ),  # env -> valueFrom -> configMapKeyRef
        fm(
            19, fb(1, "P_"), fm(3, fm(1, fb(1, "sec")), fv(2, 0))
        ),  # envFrom -> secretRef{name, optional false}
        fm(
            10, fm(1, fm(4, fv(1, 9000), fb(2, "health"))), fv(6, 5)
        ),  # livenessProbe -> handler.grpc, failure 6
        fm(12, fm(1, fm(1, fb(1, "true"))), fm(2, fm(2, fb(1, "/stop"), fm(2, fv(2, 8080))))),  # lifecycle
    )
    spec = decode_k8s_protobuf(envelope("v1", "Pod", fm(2, container)))["spec"]
    assert spec["containers"][0] == {
        "name": "c",
        "env": [{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "key"}}}],
        "envFrom": [{"prefix": "P_", "secretRef": {"name": "sec", "optional": False}}],
        "livenessProbe": {"grpc": {"port": 9000, "service": "health"}, "failureThreshold": 5},
        "lifecycle": {
            "postStart": {"exec": {"command": ["true"]}},
            "preStop": {"httpGet": {"path": "/stop", "port": 8080}},
        },
    }


def test_empty_object() -> None:
    assert decode_k8s_protobuf(envelope("v1", "ConfigMap", b"")) == {"kind": "ConfigMap", "apiVersion": "v1"}


# --------------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        ("v1", "Widget"),
        ("apps/v1beta1", "Deployment"),
        ("example.com/v1", "Thing"),
        ("storage.k8s.io/v1", "StorageClass"),
    ],
)
def test_unknown_kind_is_415(api_version: str, kind: str) -> None:
    err = decode_error(envelope(api_version, kind, b""))
    assert (err.code, err.reason) == (415, "UnsupportedMediaType")
    assert f'"{kind}"' in err.message
    assert api_version in err.message
    assert err.status()["code"] == 415


def test_content_encoding_is_415() -> None:
    err = decode_error(envelope("v1", "ConfigMap", b"", encoding="gzip"))
    assert (err.code, err.reason) == (415, "UnsupportedMediaType")
    assert "gzip" in err.message


def test_foreign_content_type_is_415_but_protobuf_is_fine() -> None:
    assert decode_error(envelope("v1", "ConfigMap", b"", content_type="application/json")).code == 415
    assert decode_k8s_protobuf(
        envelope("v1", "ConfigMap", b"", content_type="application/vnd.kubernetes.protobuf")
    )


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b'{"kind":"ConfigMap"}', id="json"),
        pytest.param(b"k8s", id="short-magic"),
        pytest.param(b"k8s\x00", id="no-envelope-fields"),
        pytest.param(b"k8s\x00\x0a", id="truncated-length"),
        pytest.param(b"k8s\x00\x0a\x05ab", id="length-past-end"),
        pytest.param(b"k8s\x00\x08\xff\xff", id="truncated-varint"),
        pytest.param(b"k8s\x00\x08" + b"\xff" * 11 + b"\x01", id="overlong-varint"),
        pytest.param(b"k8s\x00\x0b", id="group-wire-type"),
        pytest.param(b"k8s\x00\x00\x00", id="field-number-zero"),
        pytest.param(b"k8s\x00" + fv(1, 5), id="typemeta-not-a-message"),
        pytest.param(b"k8s\x00" + fm(1, fb(2, "ConfigMap")), id="no-api-version"),
        pytest.param(envelope("v1", "ConfigMap", fv(1, 3)), id="metadata-as-varint"),
        pytest.param(envelope("v1", "ConfigMap", meta(fb(7, "x"))), id="generation-as-bytes"),
        pytest.param(envelope("v1", "ConfigMap", meta(fv(8, 1))), id="time-as-varint"),
        pytest.param(envelope("v1", "ConfigMap", meta(fm(8, fv(1, 10**15)))), id="time-out-of-range"),
        pytest.param(envelope("v1", "ConfigMap", meta(fm(17, fm(7, fb(1, "{bad"))))), id="bad-fieldsv1-json"),
        pytest.param(envelope("v1", "ConfigMap", fm(2, fv(1, 1))), id="map-key-as-varint"),
        pytest.param(envelope("v1", "ConfigMap", fb(2, b"\x12")), id="truncated-map-entry"),
    ],
)
def test_malformed_body_is_400(body: bytes) -> None:
    err = decode_error(body)
    assert (err.code, err.reason) == (400, "BadRequest")
    assert "protobuf" in err.message


def test_truncated_captured_bodies_never_raise_anything_but_400() -> None:
    body = _load_fixture("job_from_cronjob")
    for cut in range(len(body)):
        try:
            decode_k8s_protobuf(body[:cut])
        except StatusError as e:
            assert e.code == 400, (cut, e)


def test_corrupted_bodies_never_raise_anything_but_status_errors() -> None:
    rng = random.Random(20240102)
    sources = [_load_fixture(name) for name in ("job_from_cronjob", "deployment", "secret", "autoscale_cpu")]
    for _ in range(1500):
        body = bytearray(rng.choice(sources))
        for _ in range(rng.randint(1, 4)):
            body[rng.randrange(4, len(body))] = rng.randrange(256)
        try:
            result = decode_k8s_protobuf(bytes(body))
        except StatusError as e:
            assert e.code in (400, 415), e
        else:
            assert isinstance(result, dict)
            json.dumps(result)  # always JSON-serialisable


# --------------------------------------------------------------------------------------------------
# Schema table integrity


def _referenced(kind: str) -> str | None:
    for prefix in ("message:", "inline:", "map<string,message:"):
        if kind.startswith(prefix):
            return kind[len(prefix) :].rstrip(">")
    return None


SCALAR_KINDS = {"string", "bytes", "int32", "int64", "bool", "quantity", "time", "intorstring", "rawjson"}
MAP_KINDS = {"map<string,string>", "map<string,bytes>", "map<string,quantity>", "map<string,strings>"}


def test_schema_references_resolve() -> None:
    for name, fields in SCHEMAS.items():
        for number, spec in fields.items():
            assert number > 0, name
            target = _referenced(spec.kind)
            if target is not None:
                assert target in SCHEMAS, f"{name}.{spec.json} -> {target}"
            else:
                assert spec.kind in SCALAR_KINDS | MAP_KINDS, f"{name}.{spec.json}: {spec.kind}"
            assert spec.json or spec.kind.startswith("inline:"), f"{name} field {number} has no JSON name"


def test_schema_json_names_are_unique_per_message() -> None:
    for name, fields in SCHEMAS.items():
        names = [spec.json for spec in fields.values() if spec.json]
        for spec in fields.values():
            if spec.kind.startswith("inline:"):
                names += [s.json for s in SCHEMAS[spec.kind[len("inline:") :]].values() if s.json]
        assert len(names) == len(set(names)), name


def test_kinds_point_at_top_level_objects() -> None:
    for (api_version, kind), message in KINDS.items():
        assert message in SCHEMAS, (api_version, kind)
        assert SCHEMAS[message][1].kind == "message:ObjectMeta", message
    required = {
        ("v1", "Namespace"),
        ("v1", "ConfigMap"),
        ("v1", "Secret"),
        ("v1", "Service"),
        ("apps/v1", "Deployment"),
        ("batch/v1", "Job"),
        ("batch/v1", "CronJob"),
        ("authentication.k8s.io/v1", "TokenRequest"),
        ("autoscaling/v1", "HorizontalPodAutoscaler"),
        ("autoscaling/v2", "HorizontalPodAutoscaler"),
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview"),
    }
    assert required <= set(KINDS)
