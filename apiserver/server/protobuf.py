"""Decode ``application/vnd.kubernetes.protobuf`` request bodies into JSON-shaped dicts.

``kubectl create namespace|configmap|secret|deployment|service|job|cronjob|token``,
``kubectl autoscale`` and ``kubectl auth can-i`` send their bodies as Kubernetes protobuf:
the 4-byte magic ``k8s\\x00`` followed by a ``runtime.Unknown`` message::

    Unknown { TypeMeta typeMeta = 1 {apiVersion = 1, kind = 2}; bytes raw = 2;
              string contentEncoding = 3; string contentType = 4 }

``raw`` is the protobuf encoding of the object itself. The server keeps objects in their JSON
wire form, so :func:`decode_k8s_protobuf` turns ``raw`` into exactly the dict ``kubectl`` would
have sent as JSON (camelCase keys, ``apiVersion``/``kind`` included).

There is no protobuf library: a small wire-format reader (varint, 64-bit, length-delimited and
32-bit fields) walks the bytes, and the declarative table :data:`SCHEMAS` says, per message,
which field number is which JSON field and how its value is encoded. The field numbers are the
ones of the upstream ``generated.proto`` files (core/v1, apps/v1, batch/v1, autoscaling/v1 and
v2, authentication/v1, authorization/v1, rbac/v1, networking/v1, policy/v1, scheduling/v1, meta/v1,
runtime, resource, intstr); they are part of
the Kubernetes API and never change.

Presence rule (how Go's JSON of the same object is reproduced):

* Go's gogo-protobuf marshaller writes every *value* field (non-pointer string, int, bool,
  struct) even when it holds its zero value, while pointer fields and empty slices/maps are
  written only when set. Go's JSON marshaller instead drops zero values of ``omitempty`` fields.
* So a scalar (string, bytes, integer, bool) found in the bytes is emitted unless it holds its
  zero value (``""``, ``0``, ``false``); fields flagged ``keep`` in the table — pointer fields such
  as ``spec.replicas`` or ``immutable`` (where an explicit zero is meaningful) and the few value
  fields whose JSON tag has no ``omitempty`` (``containerPort``, ``port``, ``maxReplicas``,
  ``status.allowed`` …) — are emitted even when zero.
* A nested message found in the bytes is always emitted, ``{}`` when empty: Go's JSON never omits
  a struct value (this is why kubectl's JSON has ``"status": {}`` and ``"resources": {}``).
* A ``Time`` encoded as an empty message is Go's zero time: it is omitted (kubectl 1.37's JSON
  omits the zero ``creationTimestamp``) unless the field is ``keep``, which gives ``null``.
* Absent fields, empty repeated fields and empty maps are never emitted.
* ``Quantity`` strings are passed through as sent (Go clients always send the canonical form).
* Duplicate occurrences follow protobuf: the last scalar wins, repeated fields append and
  embedded messages merge.

Unknown field numbers are skipped, so newer clients never break decoding. An unknown
``(apiVersion, kind)`` is a 415 ``UnsupportedMediaType``; malformed bytes are a 400
``BadRequest``. No other exception leaves :func:`decode_k8s_protobuf`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from apiserver import errors
from apiserver.errors import StatusError

PROTOBUF_CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

# Wire types.
_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5


class Field(NamedTuple):
    """How one protobuf field maps to JSON.

    ``kind`` is one of ``string``, ``bytes`` (base64 in JSON), ``int32``, ``int64``, ``bool``,
    ``quantity`` (``resource.Quantity`` → its string), ``time`` (``metav1.Time`` → RFC 3339 in UTC,
    whole seconds), ``intorstring`` (→ int or str), ``rawjson`` (a message whose field 1
    holds raw JSON, e.g. ``FieldsV1``), ``message:<Name>``, ``inline:<Name>`` (an embedded Go struct
    whose fields are flattened into the parent, e.g. ``LocalObjectReference`` in a key selector)
    or ``map<string,V>`` with ``V`` one of ``string``, ``bytes``, ``quantity``, ``strings`` (a
    message whose repeated field 1 is the list, e.g. ``ExtraValue``) or ``message:<Name>``.
    """

    json: str
    kind: str = "string"
    repeated: bool = False
    keep: bool = False


def _f(json_name: str, kind: str = "string", *, rep: bool = False, keep: bool = False) -> Field:
    return Field(json_name, kind, rep, keep)


def _m(json_name: str, message: str, *, rep: bool = False) -> Field:
    return Field(json_name, f"message:{message}", rep, False)


def _inline(message: str) -> Field:
    return Field("", f"inline:{message}")


S, B, I32, I64, BOOL = "string", "bytes", "int32", "int64", "bool"
Q, T, IOS, RAW = "quantity", "time", "intorstring", "rawjson"
MAP_SS, MAP_SB, MAP_SQ, MAP_SL = (
    "map<string,string>",
    "map<string,bytes>",
    "map<string,quantity>",
    "map<string,strings>",
)

_META: dict[str, dict[int, Field]] = {
    "ObjectMeta": {
        1: _f("name"),
        2: _f("generateName"),
        3: _f("namespace"),
        4: _f("selfLink"),
        5: _f("uid"),
        6: _f("resourceVersion"),
        7: _f("generation", I64),
        8: _f("creationTimestamp", T),
        9: _f("deletionTimestamp", T),
        10: _f("deletionGracePeriodSeconds", I64, keep=True),
        11: _f("labels", MAP_SS),
        12: _f("annotations", MAP_SS),
        13: _m("ownerReferences", "OwnerReference", rep=True),
        14: _f("finalizers", rep=True),
        17: _m("managedFields", "ManagedFieldsEntry", rep=True),
    },
    "OwnerReference": {
        5: _f("apiVersion", keep=True),
        1: _f("kind", keep=True),
        3: _f("name", keep=True),
        4: _f("uid", keep=True),
        6: _f("controller", BOOL, keep=True),
        7: _f("blockOwnerDeletion", BOOL, keep=True),
    },
    "ManagedFieldsEntry": {
        1: _f("manager"),
        2: _f("operation"),
        3: _f("apiVersion"),
        4: _f("time", T),
        6: _f("fieldsType"),
        7: _f("fieldsV1", RAW),
        8: _f("subresource"),
    },
    "LabelSelector": {
        1: _f("matchLabels", MAP_SS),
        2: _m("matchExpressions", "LabelSelectorRequirement", rep=True),
    },
    "LabelSelectorRequirement": {
        1: _f("key", keep=True),
        2: _f("operator", keep=True),
        3: _f("values", rep=True),
    },
    "Condition": {
        1: _f("type", keep=True),
        2: _f("status", keep=True),
        3: _f("observedGeneration", I64),
        4: _f("lastTransitionTime", T, keep=True),
        5: _f("reason", keep=True),
        6: _f("message", keep=True),
    },
}

_CONTAINER: dict[int, Field] = {
    1: _f("name", keep=True),
    2: _f("image"),
    3: _f("command", rep=True),
    4: _f("args", rep=True),
    5: _f("workingDir"),
    6: _m("ports", "ContainerPort", rep=True),
    19: _m("envFrom", "EnvFromSource", rep=True),
    7: _m("env", "EnvVar", rep=True),
    8: _m("resources", "ResourceRequirements"),
    23: _m("resizePolicy", "ContainerResizePolicy", rep=True),
    24: _f("restartPolicy", keep=True),
    25: _m("restartPolicyRules", "ContainerRestartRule", rep=True),
    9: _m("volumeMounts", "VolumeMount", rep=True),
    21: _m("volumeDevices", "VolumeDevice", rep=True),
    10: _m("livenessProbe", "Probe"),
    11: _m("readinessProbe", "Probe"),
    22: _m("startupProbe", "Probe"),
    12: _m("lifecycle", "Lifecycle"),
    13: _f("terminationMessagePath"),
    20: _f("terminationMessagePolicy"),
    14: _f("imagePullPolicy"),
    15: _m("securityContext", "SecurityContext"),
    16: _f("stdin", BOOL),
    17: _f("stdinOnce", BOOL),
    18: _f("tty", BOOL),
}

_CORE: dict[str, dict[int, Field]] = {
    # --- namespaces, config, secrets, service accounts -------------------------------------------
    "Namespace": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "NamespaceSpec"),
        3: _m("status", "NamespaceStatus"),
    },
    "NamespaceSpec": {1: _f("finalizers", rep=True)},
    "NamespaceStatus": {1: _f("phase"), 2: _m("conditions", "NamespaceCondition", rep=True)},
    "NamespaceCondition": {
        1: _f("type", keep=True),
        2: _f("status", keep=True),
        4: _f("lastTransitionTime", T),
        5: _f("reason"),
        6: _f("message"),
    },
    "ConfigMap": {
        1: _m("metadata", "ObjectMeta"),
        4: _f("immutable", BOOL, keep=True),
        2: _f("data", MAP_SS),
        3: _f("binaryData", MAP_SB),
    },
    "Secret": {
        1: _m("metadata", "ObjectMeta"),
        5: _f("immutable", BOOL, keep=True),
        2: _f("data", MAP_SB),
        4: _f("stringData", MAP_SS),
        3: _f("type"),
    },
    "ServiceAccount": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("secrets", "ObjectReference", rep=True),
        3: _m("imagePullSecrets", "LocalObjectReference", rep=True),
        4: _f("automountServiceAccountToken", BOOL, keep=True),
    },
    "ObjectReference": {
        1: _f("kind"),
        2: _f("namespace"),
        3: _f("name"),
        4: _f("uid"),
        5: _f("apiVersion"),
        6: _f("resourceVersion"),
        7: _f("fieldPath"),
    },
    "LocalObjectReference": {1: _f("name")},
    "TypedLocalObjectReference": {
        1: _f("apiGroup", keep=True),
        2: _f("kind", keep=True),
        3: _f("name", keep=True),
    },
    "TypedObjectReference": {
        1: _f("apiGroup", keep=True),
        2: _f("kind", keep=True),
        3: _f("name", keep=True),
        4: _f("namespace", keep=True),
    },
    # --- services ---------------------------------------------------------------------------------
    "Service": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "ServiceSpec"),
        3: _m("status", "ServiceStatus"),
    },
    "ServiceSpec": {
        1: _m("ports", "ServicePort", rep=True),
        2: _f("selector", MAP_SS),
        3: _f("clusterIP"),
        18: _f("clusterIPs", rep=True),
        4: _f("type"),
        5: _f("externalIPs", rep=True),
        7: _f("sessionAffinity"),
        8: _f("loadBalancerIP"),
        9: _f("loadBalancerSourceRanges", rep=True),
        10: _f("externalName"),
        11: _f("externalTrafficPolicy"),
        12: _f("healthCheckNodePort", I32),
        13: _f("publishNotReadyAddresses", BOOL),
        14: _m("sessionAffinityConfig", "SessionAffinityConfig"),
        19: _f("ipFamilies", rep=True),
        17: _f("ipFamilyPolicy", keep=True),
        20: _f("allocateLoadBalancerNodePorts", BOOL, keep=True),
        21: _f("loadBalancerClass", keep=True),
        22: _f("internalTrafficPolicy", keep=True),
        23: _f("trafficDistribution", keep=True),
    },
    "ServicePort": {
        1: _f("name"),
        2: _f("protocol"),
        6: _f("appProtocol", keep=True),
        3: _f("port", I32, keep=True),
        4: _f("targetPort", IOS),
        5: _f("nodePort", I32),
    },
    "SessionAffinityConfig": {1: _m("clientIP", "ClientIPConfig")},
    "ClientIPConfig": {1: _f("timeoutSeconds", I32, keep=True)},
    "ServiceStatus": {
        1: _m("loadBalancer", "LoadBalancerStatus"),
        2: _m("conditions", "Condition", rep=True),
    },
    "LoadBalancerStatus": {1: _m("ingress", "LoadBalancerIngress", rep=True)},
    "LoadBalancerIngress": {
        1: _f("ip"),
        2: _f("hostname"),
        3: _f("ipMode", keep=True),
        4: _m("ports", "PortStatus", rep=True),
    },
    "PortStatus": {1: _f("port", I32, keep=True), 2: _f("protocol", keep=True), 3: _f("error", keep=True)},
    # --- pods -------------------------------------------------------------------------------------
    "Pod": {1: _m("metadata", "ObjectMeta"), 2: _m("spec", "PodSpec"), 3: _m("status", "PodStatus")},
    "PodTemplateSpec": {1: _m("metadata", "ObjectMeta"), 2: _m("spec", "PodSpec")},
    "PodSpec": {
        1: _m("volumes", "Volume", rep=True),
        20: _m("initContainers", "Container", rep=True),
        2: _m("containers", "Container", rep=True),
        34: _m("ephemeralContainers", "EphemeralContainer", rep=True),
        3: _f("restartPolicy"),
        4: _f("terminationGracePeriodSeconds", I64, keep=True),
        5: _f("activeDeadlineSeconds", I64, keep=True),
        6: _f("dnsPolicy"),
        7: _f("nodeSelector", MAP_SS),
        8: _f("serviceAccountName"),
        9: _f("serviceAccount"),
        21: _f("automountServiceAccountToken", BOOL, keep=True),
        10: _f("nodeName"),
        11: _f("hostNetwork", BOOL),
        12: _f("hostPID", BOOL),
        13: _f("hostIPC", BOOL),
        27: _f("shareProcessNamespace", BOOL, keep=True),
        14: _m("securityContext", "PodSecurityContext"),
        15: _m("imagePullSecrets", "LocalObjectReference", rep=True),
        16: _f("hostname"),
        17: _f("subdomain"),
        18: _m("affinity", "Affinity"),
        19: _f("schedulerName"),
        22: _m("tolerations", "Toleration", rep=True),
        23: _m("hostAliases", "HostAlias", rep=True),
        24: _f("priorityClassName"),
        25: _f("priority", I32, keep=True),
        26: _m("dnsConfig", "PodDNSConfig"),
        28: _m("readinessGates", "PodReadinessGate", rep=True),
        29: _f("runtimeClassName", keep=True),
        30: _f("enableServiceLinks", BOOL, keep=True),
        31: _f("preemptionPolicy", keep=True),
        32: _f("overhead", MAP_SQ),
        33: _m("topologySpreadConstraints", "TopologySpreadConstraint", rep=True),
        35: _f("setHostnameAsFQDN", BOOL, keep=True),
        36: _m("os", "PodOS"),
        37: _f("hostUsers", BOOL, keep=True),
        38: _m("schedulingGates", "PodSchedulingGate", rep=True),
        39: _m("resourceClaims", "PodResourceClaim", rep=True),
        40: _m("resources", "ResourceRequirements"),
        41: _f("hostnameOverride", keep=True),
        42: _m("workloadRef", "WorkloadReference"),
    },
    "WorkloadReference": {1: _f("name"), 2: _f("podGroup"), 3: _f("podGroupReplicaKey")},
    "PodOS": {1: _f("name", keep=True)},
    "PodReadinessGate": {1: _f("conditionType", keep=True)},
    "PodSchedulingGate": {1: _f("name", keep=True)},
    "PodResourceClaim": {
        1: _f("name", keep=True),
        3: _f("resourceClaimName", keep=True),
        4: _f("resourceClaimTemplateName", keep=True),
    },
    "HostAlias": {1: _f("ip", keep=True), 2: _f("hostnames", rep=True)},
    "PodDNSConfig": {
        1: _f("nameservers", rep=True),
        2: _f("searches", rep=True),
        3: _m("options", "PodDNSConfigOption", rep=True),
    },
    "PodDNSConfigOption": {1: _f("name"), 2: _f("value", keep=True)},
    "PodSecurityContext": {
        1: _m("seLinuxOptions", "SELinuxOptions"),
        8: _m("windowsOptions", "WindowsSecurityContextOptions"),
        2: _f("runAsUser", I64, keep=True),
        6: _f("runAsGroup", I64, keep=True),
        3: _f("runAsNonRoot", BOOL, keep=True),
        4: _f("supplementalGroups", I64, rep=True),
        12: _f("supplementalGroupsPolicy", keep=True),
        5: _f("fsGroup", I64, keep=True),
        7: _m("sysctls", "Sysctl", rep=True),
        9: _f("fsGroupChangePolicy", keep=True),
        10: _m("seccompProfile", "SeccompProfile"),
        11: _m("appArmorProfile", "AppArmorProfile"),
        13: _f("seLinuxChangePolicy", keep=True),
    },
    "SecurityContext": {
        1: _m("capabilities", "Capabilities"),
        2: _f("privileged", BOOL, keep=True),
        3: _m("seLinuxOptions", "SELinuxOptions"),
        10: _m("windowsOptions", "WindowsSecurityContextOptions"),
        4: _f("runAsUser", I64, keep=True),
        8: _f("runAsGroup", I64, keep=True),
        5: _f("runAsNonRoot", BOOL, keep=True),
        6: _f("readOnlyRootFilesystem", BOOL, keep=True),
        7: _f("allowPrivilegeEscalation", BOOL, keep=True),
        9: _f("procMount", keep=True),
        11: _m("seccompProfile", "SeccompProfile"),
        12: _m("appArmorProfile", "AppArmorProfile"),
        13: _m("ulimits", "Ulimit", rep=True),
    },
    "SELinuxOptions": {1: _f("user"), 2: _f("role"), 3: _f("type"), 4: _f("level")},
    "WindowsSecurityContextOptions": {
        1: _f("gmsaCredentialSpecName", keep=True),
        2: _f("gmsaCredentialSpec", keep=True),
        3: _f("runAsUserName", keep=True),
        4: _f("hostProcess", BOOL, keep=True),
    },
    "Sysctl": {1: _f("name", keep=True), 2: _f("value", keep=True)},
    "SeccompProfile": {1: _f("type", keep=True), 2: _f("localhostProfile", keep=True)},
    "AppArmorProfile": {1: _f("type", keep=True), 2: _f("localhostProfile", keep=True)},
    "Capabilities": {1: _f("add", rep=True), 2: _f("drop", rep=True)},
    "Ulimit": {1: _f("name", keep=True), 2: _f("hard", I64, keep=True), 3: _f("soft", I64, keep=True)},
    "Affinity": {
        1: _m("nodeAffinity", "NodeAffinity"),
        2: _m("podAffinity", "PodAffinity"),
        3: _m("podAntiAffinity", "PodAntiAffinity"),
    },
    "NodeAffinity": {
        1: _m("requiredDuringSchedulingIgnoredDuringExecution", "NodeSelector"),
        2: _m("preferredDuringSchedulingIgnoredDuringExecution", "PreferredSchedulingTerm", rep=True),
    },
    "NodeSelector": {1: _m("nodeSelectorTerms", "NodeSelectorTerm", rep=True)},
    "NodeSelectorTerm": {
        1: _m("matchExpressions", "NodeSelectorRequirement", rep=True),
        2: _m("matchFields", "NodeSelectorRequirement", rep=True),
    },
    "NodeSelectorRequirement": {
        1: _f("key", keep=True),
        2: _f("operator", keep=True),
        3: _f("values", rep=True),
    },
    "PreferredSchedulingTerm": {1: _f("weight", I32, keep=True), 2: _m("preference", "NodeSelectorTerm")},
    "PodAffinity": {
        1: _m("requiredDuringSchedulingIgnoredDuringExecution", "PodAffinityTerm", rep=True),
        2: _m("preferredDuringSchedulingIgnoredDuringExecution", "WeightedPodAffinityTerm", rep=True),
    },
    "PodAntiAffinity": {
        1: _m("requiredDuringSchedulingIgnoredDuringExecution", "PodAffinityTerm", rep=True),
        2: _m("preferredDuringSchedulingIgnoredDuringExecution", "WeightedPodAffinityTerm", rep=True),
    },
    "PodAffinityTerm": {
        1: _m("labelSelector", "LabelSelector"),
        2: _f("namespaces", rep=True),
        3: _f("topologyKey", keep=True),
        4: _m("namespaceSelector", "LabelSelector"),
        5: _f("matchLabelKeys", rep=True),
        6: _f("mismatchLabelKeys", rep=True),
    },
    "WeightedPodAffinityTerm": {1: _f("weight", I32, keep=True), 2: _m("podAffinityTerm", "PodAffinityTerm")},
    "Toleration": {
        1: _f("key"),
        2: _f("operator"),
        3: _f("value"),
        4: _f("effect"),
        5: _f("tolerationSeconds", I64, keep=True),
    },
    "TopologySpreadConstraint": {
        1: _f("maxSkew", I32, keep=True),
        2: _f("topologyKey", keep=True),
        3: _f("whenUnsatisfiable", keep=True),
        4: _m("labelSelector", "LabelSelector"),
        5: _f("minDomains", I32, keep=True),
        6: _f("nodeAffinityPolicy", keep=True),
        7: _f("nodeTaintsPolicy", keep=True),
        8: _f("matchLabelKeys", rep=True),
    },
    "PodStatus": {
        17: _f("observedGeneration", I64),
        1: _f("phase"),
        2: _m("conditions", "PodCondition", rep=True),
        3: _f("message"),
        4: _f("reason"),
        11: _f("nominatedNodeName"),
        5: _f("hostIP"),
        16: _m("hostIPs", "HostIP", rep=True),
        6: _f("podIP"),
        12: _m("podIPs", "PodIP", rep=True),
        7: _f("startTime", T),
        10: _m("initContainerStatuses", "ContainerStatus", rep=True),
        8: _m("containerStatuses", "ContainerStatus", rep=True),
        9: _f("qosClass"),
        13: _m("ephemeralContainerStatuses", "ContainerStatus", rep=True),
        14: _f("resize"),
        15: _m("resourceClaimStatuses", "PodResourceClaimStatus", rep=True),
        19: _f("allocatedResources", MAP_SQ),
        20: _m("resources", "ResourceRequirements"),
    },
    "PodCondition": {
        1: _f("type", keep=True),
        7: _f("observedGeneration", I64),
        2: _f("status", keep=True),
        3: _f("lastProbeTime", T),
        4: _f("lastTransitionTime", T),
        5: _f("reason"),
        6: _f("message"),
    },
    "HostIP": {1: _f("ip", keep=True)},
    "PodIP": {1: _f("ip", keep=True)},
    "PodResourceClaimStatus": {1: _f("name", keep=True), 2: _f("resourceClaimName", keep=True)},
    "ContainerStatus": {
        1: _f("name", keep=True),
        2: _m("state", "ContainerState"),
        3: _m("lastState", "ContainerState"),
        4: _f("ready", BOOL, keep=True),
        5: _f("restartCount", I32, keep=True),
        6: _f("image", keep=True),
        7: _f("imageID", keep=True),
        8: _f("containerID"),
        9: _f("started", BOOL, keep=True),
        10: _f("allocatedResources", MAP_SQ),
        11: _m("resources", "ResourceRequirements"),
        15: _f("stopSignal", keep=True),
    },
    "ContainerState": {
        1: _m("waiting", "ContainerStateWaiting"),
        2: _m("running", "ContainerStateRunning"),
        3: _m("terminated", "ContainerStateTerminated"),
    },
    "ContainerStateWaiting": {1: _f("reason"), 2: _f("message")},
    "ContainerStateRunning": {1: _f("startedAt", T)},
    "ContainerStateTerminated": {
        1: _f("exitCode", I32, keep=True),
        2: _f("signal", I32),
        3: _f("reason"),
        4: _f("message"),
        5: _f("startedAt", T),
        6: _f("finishedAt", T),
        7: _f("containerID"),
    },
    # --- containers -------------------------------------------------------------------------------
    "Container": _CONTAINER,
    "EphemeralContainer": {1: _inline("EphemeralContainerCommon"), 2: _f("targetContainerName")},
    "EphemeralContainerCommon": _CONTAINER,
    "ContainerPort": {
        1: _f("name"),
        2: _f("hostPort", I32),
        3: _f("containerPort", I32, keep=True),
        4: _f("protocol"),
        5: _f("hostIP"),
    },
    "ContainerResizePolicy": {1: _f("resourceName", keep=True), 2: _f("restartPolicy", keep=True)},
    "ContainerRestartRule": {1: _f("action"), 2: _m("exitCodes", "ContainerRestartRuleOnExitCodes")},
    "ContainerRestartRuleOnExitCodes": {1: _f("operator"), 2: _f("values", I32, rep=True)},
    "EnvFromSource": {
        1: _f("prefix"),
        2: _m("configMapRef", "ConfigMapEnvSource"),
        3: _m("secretRef", "SecretEnvSource"),
    },
    "ConfigMapEnvSource": {1: _inline("LocalObjectReference"), 2: _f("optional", BOOL, keep=True)},
    "SecretEnvSource": {1: _inline("LocalObjectReference"), 2: _f("optional", BOOL, keep=True)},
    "EnvVar": {1: _f("name", keep=True), 2: _f("value"), 3: _m("valueFrom", "EnvVarSource")},
    "EnvVarSource": {
        1: _m("fieldRef", "ObjectFieldSelector"),
        2: _m("resourceFieldRef", "ResourceFieldSelector"),
        3: _m("configMapKeyRef", "ConfigMapKeySelector"),
        4: _m("secretKeyRef", "SecretKeySelector"),
        5: _m("fileKeyRef", "FileKeySelector"),
    },
    "ObjectFieldSelector": {1: _f("apiVersion"), 2: _f("fieldPath", keep=True)},
    "ResourceFieldSelector": {1: _f("containerName"), 2: _f("resource", keep=True), 3: _f("divisor", Q)},
    "ConfigMapKeySelector": {
        1: _inline("LocalObjectReference"),
        2: _f("key", keep=True),
        3: _f("optional", BOOL, keep=True),
    },
    "SecretKeySelector": {
        1: _inline("LocalObjectReference"),
        2: _f("key", keep=True),
        3: _f("optional", BOOL, keep=True),
    },
    "FileKeySelector": {
        1: _f("volumeName", keep=True),
        2: _f("path", keep=True),
        3: _f("key", keep=True),
        4: _f("optional", BOOL, keep=True),
    },
    "ResourceRequirements": {
        1: _f("limits", MAP_SQ),
        2: _f("requests", MAP_SQ),
        3: _m("claims", "ResourceClaim", rep=True),
    },
    "ResourceClaim": {1: _f("name", keep=True), 2: _f("request")},
    "VolumeMount": {
        1: _f("name", keep=True),
        2: _f("readOnly", BOOL),
        7: _f("recursiveReadOnly", keep=True),
        3: _f("mountPath", keep=True),
        4: _f("subPath"),
        5: _f("mountPropagation", keep=True),
        6: _f("subPathExpr"),
    },
    "VolumeDevice": {1: _f("name", keep=True), 2: _f("devicePath", keep=True)},
    "Probe": {
        1: _inline("ProbeHandler"),
        2: _f("initialDelaySeconds", I32),
        3: _f("timeoutSeconds", I32),
        4: _f("periodSeconds", I32),
        5: _f("successThreshold", I32),
        6: _f("failureThreshold", I32),
        7: _f("terminationGracePeriodSeconds", I64, keep=True),
    },
    "ProbeHandler": {
        1: _m("exec", "ExecAction"),
        2: _m("httpGet", "HTTPGetAction"),
        3: _m("tcpSocket", "TCPSocketAction"),
        4: _m("grpc", "GRPCAction"),
    },
    "ExecAction": {1: _f("command", rep=True)},
    "HTTPGetAction": {
        1: _f("path"),
        2: _f("port", IOS),
        3: _f("host"),
        4: _f("scheme"),
        5: _m("httpHeaders", "HTTPHeader", rep=True),
    },
    "HTTPHeader": {1: _f("name", keep=True), 2: _f("value", keep=True)},
    "TCPSocketAction": {1: _f("port", IOS), 2: _f("host")},
    "GRPCAction": {1: _f("port", I32, keep=True), 2: _f("service", keep=True)},
    "Lifecycle": {
        1: _m("postStart", "LifecycleHandler"),
        2: _m("preStop", "LifecycleHandler"),
        3: _f("stopSignal", keep=True),
    },
    "LifecycleHandler": {
        1: _m("exec", "ExecAction"),
        2: _m("httpGet", "HTTPGetAction"),
        3: _m("tcpSocket", "TCPSocketAction"),
        4: _m("sleep", "SleepAction"),
    },
    "SleepAction": {1: _f("seconds", I64, keep=True)},
    # --- volumes ----------------------------------------------------------------------------------
    "Volume": {1: _f("name", keep=True), 2: _inline("VolumeSource")},
    "VolumeSource": {
        # Only the common sources; the deprecated in-tree cloud volume types are skipped.
        1: _m("hostPath", "HostPathVolumeSource"),
        2: _m("emptyDir", "EmptyDirVolumeSource"),
        6: _m("secret", "SecretVolumeSource"),
        7: _m("nfs", "NFSVolumeSource"),
        10: _m("persistentVolumeClaim", "PersistentVolumeClaimVolumeSource"),
        16: _m("downwardAPI", "DownwardAPIVolumeSource"),
        19: _m("configMap", "ConfigMapVolumeSource"),
        26: _m("projected", "ProjectedVolumeSource"),
        28: _m("csi", "CSIVolumeSource"),
        29: _m("ephemeral", "EphemeralVolumeSource"),
        30: _m("image", "ImageVolumeSource"),
    },
    "HostPathVolumeSource": {1: _f("path", keep=True), 2: _f("type", keep=True)},
    "EmptyDirVolumeSource": {1: _f("medium"), 2: _f("sizeLimit", Q)},
    "SecretVolumeSource": {
        1: _f("secretName"),
        2: _m("items", "KeyToPath", rep=True),
        3: _f("defaultMode", I32, keep=True),
        4: _f("optional", BOOL, keep=True),
    },
    "KeyToPath": {1: _f("key", keep=True), 2: _f("path", keep=True), 3: _f("mode", I32, keep=True)},
    "NFSVolumeSource": {1: _f("server", keep=True), 2: _f("path", keep=True), 3: _f("readOnly", BOOL)},
    "PersistentVolumeClaimVolumeSource": {1: _f("claimName", keep=True), 2: _f("readOnly", BOOL)},
    "DownwardAPIVolumeSource": {
        1: _m("items", "DownwardAPIVolumeFile", rep=True),
        2: _f("defaultMode", I32, keep=True),
    },
    "DownwardAPIVolumeFile": {
        1: _f("path", keep=True),
        2: _m("fieldRef", "ObjectFieldSelector"),
        3: _m("resourceFieldRef", "ResourceFieldSelector"),
        4: _f("mode", I32, keep=True),
    },
    "ConfigMapVolumeSource": {
        1: _inline("LocalObjectReference"),
        2: _m("items", "KeyToPath", rep=True),
        3: _f("defaultMode", I32, keep=True),
        4: _f("optional", BOOL, keep=True),
    },
    "ProjectedVolumeSource": {
        1: _m("sources", "VolumeProjection", rep=True),
        2: _f("defaultMode", I32, keep=True),
    },
    "VolumeProjection": {
        1: _m("secret", "SecretProjection"),
        2: _m("downwardAPI", "DownwardAPIProjection"),
        3: _m("configMap", "ConfigMapProjection"),
        4: _m("serviceAccountToken", "ServiceAccountTokenProjection"),
        5: _m("clusterTrustBundle", "ClusterTrustBundleProjection"),
        6: _m("podCertificate", "PodCertificateProjection"),
    },
    "SecretProjection": {
        1: _inline("LocalObjectReference"),
        2: _m("items", "KeyToPath", rep=True),
        4: _f("optional", BOOL, keep=True),
    },
    "ConfigMapProjection": {
        1: _inline("LocalObjectReference"),
        2: _m("items", "KeyToPath", rep=True),
        4: _f("optional", BOOL, keep=True),
    },
    "DownwardAPIProjection": {1: _m("items", "DownwardAPIVolumeFile", rep=True)},
    "ServiceAccountTokenProjection": {
        1: _f("audience"),
        2: _f("expirationSeconds", I64, keep=True),
        3: _f("path", keep=True),
    },
    "ClusterTrustBundleProjection": {
        1: _f("name", keep=True),
        2: _f("signerName", keep=True),
        3: _m("labelSelector", "LabelSelector"),
        5: _f("optional", BOOL, keep=True),
        4: _f("path", keep=True),
    },
    "PodCertificateProjection": {
        1: _f("signerName"),
        2: _f("keyType"),
        3: _f("maxExpirationSeconds", I32, keep=True),
        4: _f("credentialBundlePath"),
        5: _f("keyPath"),
        6: _f("certificateChainPath"),
        7: _f("userAnnotations", MAP_SS),
    },
    "CSIVolumeSource": {
        1: _f("driver", keep=True),
        2: _f("readOnly", BOOL, keep=True),
        3: _f("fsType", keep=True),
        4: _f("volumeAttributes", MAP_SS),
        5: _m("nodePublishSecretRef", "LocalObjectReference"),
    },
    "EphemeralVolumeSource": {1: _m("volumeClaimTemplate", "PersistentVolumeClaimTemplate")},
    "ImageVolumeSource": {1: _f("reference"), 2: _f("pullPolicy")},
    # --- persistent volume claims -----------------------------------------------------------------
    "PersistentVolumeClaim": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "PersistentVolumeClaimSpec"),
        3: _m("status", "PersistentVolumeClaimStatus"),
    },
    "PersistentVolumeClaimTemplate": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "PersistentVolumeClaimSpec"),
    },
    "PersistentVolumeClaimSpec": {
        1: _f("accessModes", rep=True),
        4: _m("selector", "LabelSelector"),
        2: _m("resources", "VolumeResourceRequirements"),
        3: _f("volumeName"),
        5: _f("storageClassName", keep=True),
        6: _f("volumeMode", keep=True),
        7: _m("dataSource", "TypedLocalObjectReference"),
        8: _m("dataSourceRef", "TypedObjectReference"),
        9: _f("volumeAttributesClassName", keep=True),
    },
    "VolumeResourceRequirements": {1: _f("limits", MAP_SQ), 2: _f("requests", MAP_SQ)},
    "PersistentVolumeClaimStatus": {
        1: _f("phase"),
        2: _f("accessModes", rep=True),
        3: _f("capacity", MAP_SQ),
        4: _m("conditions", "PersistentVolumeClaimCondition", rep=True),
        5: _f("allocatedResources", MAP_SQ),
        7: _f("allocatedResourceStatuses", MAP_SS),
        8: _f("currentVolumeAttributesClassName", keep=True),
        9: _m("modifyVolumeStatus", "ModifyVolumeStatus"),
    },
    "PersistentVolumeClaimCondition": {
        1: _f("type", keep=True),
        2: _f("status", keep=True),
        3: _f("lastProbeTime", T),
        4: _f("lastTransitionTime", T),
        5: _f("reason"),
        6: _f("message"),
    },
    "ModifyVolumeStatus": {1: _f("targetVolumeAttributesClassName"), 2: _f("status", keep=True)},
}

_WORKLOAD_CONDITION: dict[int, Field] = {
    1: _f("type", keep=True),
    2: _f("status", keep=True),
    3: _f("lastTransitionTime", T),
    4: _f("reason"),
    5: _f("message"),
}

_APPS: dict[str, dict[int, Field]] = {
    "apps.Deployment": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "apps.DeploymentSpec"),
        3: _m("status", "apps.DeploymentStatus"),
    },
    "apps.DeploymentSpec": {
        1: _f("replicas", I32, keep=True),
        2: _m("selector", "LabelSelector"),
        3: _m("template", "PodTemplateSpec"),
        4: _m("strategy", "apps.DeploymentStrategy"),
        5: _f("minReadySeconds", I32),
        6: _f("revisionHistoryLimit", I32, keep=True),
        7: _f("paused", BOOL),
        9: _f("progressDeadlineSeconds", I32, keep=True),
        10: _f("podReplacementPolicy", keep=True),
    },
    "apps.DeploymentStrategy": {1: _f("type"), 2: _m("rollingUpdate", "apps.RollingUpdateDeployment")},
    "apps.RollingUpdateDeployment": {1: _f("maxUnavailable", IOS), 2: _f("maxSurge", IOS)},
    "apps.DeploymentStatus": {
        1: _f("observedGeneration", I64),
        2: _f("replicas", I32),
        3: _f("updatedReplicas", I32),
        7: _f("readyReplicas", I32),
        4: _f("availableReplicas", I32),
        5: _f("unavailableReplicas", I32),
        9: _f("terminatingReplicas", I32, keep=True),
        6: _m("conditions", "apps.DeploymentCondition", rep=True),
        8: _f("collisionCount", I32, keep=True),
    },
    "apps.DeploymentCondition": {
        1: _f("type", keep=True),
        2: _f("status", keep=True),
        6: _f("lastUpdateTime", T),
        7: _f("lastTransitionTime", T),
        4: _f("reason"),
        5: _f("message"),
    },
    "apps.WorkloadCondition": _WORKLOAD_CONDITION,
    "apps.StatefulSet": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "apps.StatefulSetSpec"),
        3: _m("status", "apps.StatefulSetStatus"),
    },
    "apps.StatefulSetSpec": {
        1: _f("replicas", I32, keep=True),
        2: _m("selector", "LabelSelector"),
        3: _m("template", "PodTemplateSpec"),
        4: _m("volumeClaimTemplates", "PersistentVolumeClaim", rep=True),
        5: _f("serviceName"),
        6: _f("podManagementPolicy"),
        7: _m("updateStrategy", "apps.StatefulSetUpdateStrategy"),
        8: _f("revisionHistoryLimit", I32, keep=True),
        9: _f("minReadySeconds", I32),
        10: _m(
            "persistentVolumeClaimRetentionPolicy", "apps.StatefulSetPersistentVolumeClaimRetentionPolicy"
        ),
        11: _m("ordinals", "apps.StatefulSetOrdinals"),
    },
    "apps.StatefulSetUpdateStrategy": {
        1: _f("type"),
        2: _m("rollingUpdate", "apps.RollingUpdateStatefulSetStrategy"),
    },
    "apps.RollingUpdateStatefulSetStrategy": {
        1: _f("partition", I32, keep=True),
        2: _f("maxUnavailable", IOS),
    },
    "apps.StatefulSetPersistentVolumeClaimRetentionPolicy": {1: _f("whenDeleted"), 2: _f("whenScaled")},
    "apps.StatefulSetOrdinals": {1: _f("start", I32)},
    "apps.StatefulSetStatus": {
        1: _f("observedGeneration", I64),
        2: _f("replicas", I32, keep=True),
        3: _f("readyReplicas", I32),
        4: _f("currentReplicas", I32),
        5: _f("updatedReplicas", I32),
        6: _f("currentRevision"),
        7: _f("updateRevision"),
        9: _f("collisionCount", I32, keep=True),
        10: _m("conditions", "apps.WorkloadCondition", rep=True),
        11: _f("availableReplicas", I32, keep=True),
    },
    "apps.ReplicaSet": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "apps.ReplicaSetSpec"),
        3: _m("status", "apps.ReplicaSetStatus"),
    },
    "apps.ReplicaSetSpec": {
        1: _f("replicas", I32, keep=True),
        4: _f("minReadySeconds", I32),
        2: _m("selector", "LabelSelector"),
        3: _m("template", "PodTemplateSpec"),
    },
    "apps.ReplicaSetStatus": {
        1: _f("replicas", I32, keep=True),
        2: _f("fullyLabeledReplicas", I32),
        4: _f("readyReplicas", I32),
        5: _f("availableReplicas", I32),
        7: _f("terminatingReplicas", I32, keep=True),
        3: _f("observedGeneration", I64),
        6: _m("conditions", "apps.WorkloadCondition", rep=True),
    },
    "apps.DaemonSet": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "apps.DaemonSetSpec"),
        3: _m("status", "apps.DaemonSetStatus"),
    },
    "apps.DaemonSetSpec": {
        1: _m("selector", "LabelSelector"),
        2: _m("template", "PodTemplateSpec"),
        3: _m("updateStrategy", "apps.DaemonSetUpdateStrategy"),
        4: _f("minReadySeconds", I32),
        6: _f("revisionHistoryLimit", I32, keep=True),
    },
    "apps.DaemonSetUpdateStrategy": {1: _f("type"), 2: _m("rollingUpdate", "apps.RollingUpdateDaemonSet")},
    "apps.RollingUpdateDaemonSet": {1: _f("maxUnavailable", IOS), 2: _f("maxSurge", IOS)},
    "apps.DaemonSetStatus": {
        1: _f("currentNumberScheduled", I32, keep=True),
        2: _f("numberMisscheduled", I32, keep=True),
        3: _f("desiredNumberScheduled", I32, keep=True),
        4: _f("numberReady", I32, keep=True),
        5: _f("observedGeneration", I64),
        6: _f("updatedNumberScheduled", I32),
        7: _f("numberAvailable", I32),
        8: _f("numberUnavailable", I32),
        9: _f("collisionCount", I32, keep=True),
        10: _m("conditions", "apps.WorkloadCondition", rep=True),
    },
}

_BATCH: dict[str, dict[int, Field]] = {
    "batch.Job": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "batch.JobSpec"),
        3: _m("status", "batch.JobStatus"),
    },
    "batch.JobSpec": {
        1: _f("parallelism", I32, keep=True),
        2: _f("completions", I32, keep=True),
        3: _f("activeDeadlineSeconds", I64, keep=True),
        11: _m("podFailurePolicy", "batch.PodFailurePolicy"),
        16: _m("successPolicy", "batch.SuccessPolicy"),
        7: _f("backoffLimit", I32, keep=True),
        12: _f("backoffLimitPerIndex", I32, keep=True),
        13: _f("maxFailedIndexes", I32, keep=True),
        4: _m("selector", "LabelSelector"),
        5: _f("manualSelector", BOOL, keep=True),
        6: _m("template", "PodTemplateSpec"),
        8: _f("ttlSecondsAfterFinished", I32, keep=True),
        9: _f("completionMode", keep=True),
        10: _f("suspend", BOOL, keep=True),
        14: _f("podReplacementPolicy", keep=True),
        15: _f("managedBy", keep=True),
    },
    "batch.JobStatus": {
        1: _m("conditions", "batch.JobCondition", rep=True),
        2: _f("startTime", T),
        3: _f("completionTime", T),
        4: _f("active", I32),
        5: _f("succeeded", I32),
        6: _f("failed", I32),
        11: _f("terminating", I32, keep=True),
        7: _f("completedIndexes"),
        10: _f("failedIndexes", keep=True),
        8: _m("uncountedTerminatedPods", "batch.UncountedTerminatedPods"),
        9: _f("ready", I32, keep=True),
    },
    "batch.JobCondition": {
        1: _f("type", keep=True),
        2: _f("status", keep=True),
        3: _f("lastProbeTime", T),
        4: _f("lastTransitionTime", T),
        5: _f("reason"),
        6: _f("message"),
    },
    "batch.UncountedTerminatedPods": {1: _f("succeeded", rep=True), 2: _f("failed", rep=True)},
    "batch.PodFailurePolicy": {1: _m("rules", "batch.PodFailurePolicyRule", rep=True)},
    "batch.PodFailurePolicyRule": {
        1: _f("action", keep=True),
        2: _m("onExitCodes", "batch.PodFailurePolicyOnExitCodesRequirement"),
        3: _m("onPodConditions", "batch.PodFailurePolicyOnPodConditionsPattern", rep=True),
    },
    "batch.PodFailurePolicyOnExitCodesRequirement": {
        1: _f("containerName", keep=True),
        2: _f("operator", keep=True),
        3: _f("values", I32, rep=True),
    },
    "batch.PodFailurePolicyOnPodConditionsPattern": {1: _f("type", keep=True), 2: _f("status")},
    "batch.SuccessPolicy": {1: _m("rules", "batch.SuccessPolicyRule", rep=True)},
    "batch.SuccessPolicyRule": {
        1: _f("succeededIndexes", keep=True),
        2: _f("succeededCount", I32, keep=True),
    },
    "batch.CronJob": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "batch.CronJobSpec"),
        3: _m("status", "batch.CronJobStatus"),
    },
    "batch.CronJobSpec": {
        1: _f("schedule", keep=True),
        8: _f("timeZone", keep=True),
        2: _f("startingDeadlineSeconds", I64, keep=True),
        3: _f("concurrencyPolicy"),
        4: _f("suspend", BOOL, keep=True),
        5: _m("jobTemplate", "batch.JobTemplateSpec"),
        6: _f("successfulJobsHistoryLimit", I32, keep=True),
        7: _f("failedJobsHistoryLimit", I32, keep=True),
    },
    "batch.JobTemplateSpec": {1: _m("metadata", "ObjectMeta"), 2: _m("spec", "batch.JobSpec")},
    "batch.CronJobStatus": {
        1: _m("active", "ObjectReference", rep=True),
        4: _f("lastScheduleTime", T),
        5: _f("lastSuccessfulTime", T),
    },
}

_AUTOSCALING: dict[str, dict[int, Field]] = {
    "autoscaling.CrossVersionObjectReference": {
        1: _f("kind", keep=True),
        2: _f("name", keep=True),
        3: _f("apiVersion"),
    },
    # autoscaling/v1
    "autoscaling.v1.HorizontalPodAutoscaler": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "autoscaling.v1.HorizontalPodAutoscalerSpec"),
        3: _m("status", "autoscaling.v1.HorizontalPodAutoscalerStatus"),
    },
    "autoscaling.v1.HorizontalPodAutoscalerSpec": {
        1: _m("scaleTargetRef", "autoscaling.CrossVersionObjectReference"),
        2: _f("minReplicas", I32, keep=True),
        3: _f("maxReplicas", I32, keep=True),
        4: _f("targetCPUUtilizationPercentage", I32, keep=True),
    },
    "autoscaling.v1.HorizontalPodAutoscalerStatus": {
        1: _f("observedGeneration", I64, keep=True),
        2: _f("lastScaleTime", T),
        3: _f("currentReplicas", I32, keep=True),
        4: _f("desiredReplicas", I32, keep=True),
        5: _f("currentCPUUtilizationPercentage", I32, keep=True),
    },
    # autoscaling/v2 (what kubectl 1.37 `autoscale` sends)
    "autoscaling.v2.HorizontalPodAutoscaler": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "autoscaling.v2.HorizontalPodAutoscalerSpec"),
        3: _m("status", "autoscaling.v2.HorizontalPodAutoscalerStatus"),
    },
    "autoscaling.v2.HorizontalPodAutoscalerSpec": {
        1: _m("scaleTargetRef", "autoscaling.CrossVersionObjectReference"),
        2: _f("minReplicas", I32, keep=True),
        3: _f("maxReplicas", I32, keep=True),
        4: _m("metrics", "autoscaling.v2.MetricSpec", rep=True),
        5: _m("behavior", "autoscaling.v2.HorizontalPodAutoscalerBehavior"),
    },
    "autoscaling.v2.HorizontalPodAutoscalerBehavior": {
        1: _m("scaleUp", "autoscaling.v2.HPAScalingRules"),
        2: _m("scaleDown", "autoscaling.v2.HPAScalingRules"),
    },
    "autoscaling.v2.HPAScalingRules": {
        3: _f("stabilizationWindowSeconds", I32, keep=True),
        1: _f("selectPolicy", keep=True),
        2: _m("policies", "autoscaling.v2.HPAScalingPolicy", rep=True),
        4: _f("tolerance", Q),
    },
    "autoscaling.v2.HPAScalingPolicy": {
        1: _f("type", keep=True),
        2: _f("value", I32, keep=True),
        3: _f("periodSeconds", I32, keep=True),
    },
    "autoscaling.v2.MetricSpec": {
        1: _f("type", keep=True),
        2: _m("object", "autoscaling.v2.ObjectMetricSource"),
        3: _m("pods", "autoscaling.v2.PodsMetricSource"),
        4: _m("resource", "autoscaling.v2.ResourceMetricSource"),
        7: _m("containerResource", "autoscaling.v2.ContainerResourceMetricSource"),
        5: _m("external", "autoscaling.v2.ExternalMetricSource"),
    },
    "autoscaling.v2.MetricTarget": {
        1: _f("type", keep=True),
        2: _f("value", Q),
        3: _f("averageValue", Q),
        4: _f("averageUtilization", I32, keep=True),
    },
    "autoscaling.v2.MetricIdentifier": {1: _f("name", keep=True), 2: _m("selector", "LabelSelector")},
    "autoscaling.v2.ObjectMetricSource": {
        1: _m("describedObject", "autoscaling.CrossVersionObjectReference"),
        2: _m("target", "autoscaling.v2.MetricTarget"),
        3: _m("metric", "autoscaling.v2.MetricIdentifier"),
    },
    "autoscaling.v2.PodsMetricSource": {
        1: _m("metric", "autoscaling.v2.MetricIdentifier"),
        2: _m("target", "autoscaling.v2.MetricTarget"),
    },
    "autoscaling.v2.ResourceMetricSource": {
        1: _f("name", keep=True),
        2: _m("target", "autoscaling.v2.MetricTarget"),
    },
    "autoscaling.v2.ContainerResourceMetricSource": {
        1: _f("name", keep=True),
        2: _m("target", "autoscaling.v2.MetricTarget"),
        3: _f("container", keep=True),
    },
    "autoscaling.v2.ExternalMetricSource": {
        1: _m("metric", "autoscaling.v2.MetricIdentifier"),
        2: _m("target", "autoscaling.v2.MetricTarget"),
    },
    "autoscaling.v2.HorizontalPodAutoscalerStatus": {
        1: _f("observedGeneration", I64, keep=True),
        2: _f("lastScaleTime", T),
        3: _f("currentReplicas", I32),
        4: _f("desiredReplicas", I32, keep=True),
        5: _m("currentMetrics", "autoscaling.v2.MetricStatus", rep=True),
        6: _m("conditions", "autoscaling.v2.HorizontalPodAutoscalerCondition", rep=True),
    },
    "autoscaling.v2.MetricStatus": {
        1: _f("type", keep=True),
        2: _m("object", "autoscaling.v2.ObjectMetricStatus"),
        3: _m("pods", "autoscaling.v2.PodsMetricStatus"),
        4: _m("resource", "autoscaling.v2.ResourceMetricStatus"),
        7: _m("containerResource", "autoscaling.v2.ContainerResourceMetricStatus"),
        5: _m("external", "autoscaling.v2.ExternalMetricStatus"),
    },
    "autoscaling.v2.MetricValueStatus": {
        1: _f("value", Q),
        2: _f("averageValue", Q),
        3: _f("averageUtilization", I32, keep=True),
    },
    "autoscaling.v2.ObjectMetricStatus": {
        1: _m("metric", "autoscaling.v2.MetricIdentifier"),
        2: _m("current", "autoscaling.v2.MetricValueStatus"),
        3: _m("describedObject", "autoscaling.CrossVersionObjectReference"),
    },
    "autoscaling.v2.PodsMetricStatus": {
        1: _m("metric", "autoscaling.v2.MetricIdentifier"),
        2: _m("current", "autoscaling.v2.MetricValueStatus"),
    },
    "autoscaling.v2.ResourceMetricStatus": {
        1: _f("name", keep=True),
        2: _m("current", "autoscaling.v2.MetricValueStatus"),
    },
    "autoscaling.v2.ContainerResourceMetricStatus": {
        1: _f("name", keep=True),
        2: _m("current", "autoscaling.v2.MetricValueStatus"),
        3: _f("container", keep=True),
    },
    "autoscaling.v2.ExternalMetricStatus": {
        1: _m("metric", "autoscaling.v2.MetricIdentifier"),
        2: _m("current", "autoscaling.v2.MetricValueStatus"),
    },
    "autoscaling.v2.HorizontalPodAutoscalerCondition": _WORKLOAD_CONDITION,
}

_AUTH: dict[str, dict[int, Field]] = {
    # authentication.k8s.io/v1
    "authentication.TokenRequest": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "authentication.TokenRequestSpec"),
        3: _m("status", "authentication.TokenRequestStatus"),
    },
    "authentication.TokenRequestSpec": {
        1: _f("audiences", rep=True),
        4: _f("expirationSeconds", I64, keep=True),
        3: _m("boundObjectRef", "authentication.BoundObjectReference"),
    },
    "authentication.BoundObjectReference": {1: _f("kind"), 2: _f("apiVersion"), 3: _f("name"), 4: _f("uid")},
    "authentication.TokenRequestStatus": {
        1: _f("token", keep=True),
        2: _f("expirationTimestamp", T, keep=True),
    },
    "authentication.TokenReview": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "authentication.TokenReviewSpec"),
        3: _m("status", "authentication.TokenReviewStatus"),
    },
    "authentication.TokenReviewSpec": {1: _f("token")},
    "authentication.TokenReviewStatus": {
        1: _f("authenticated", BOOL),
        2: _m("user", "authentication.UserInfo"),
        3: _f("error"),
    },
    "authentication.SelfSubjectReview": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("status", "authentication.SelfSubjectReviewStatus"),
    },
    "authentication.SelfSubjectReviewStatus": {
        1: _m("userInfo", "authentication.UserInfo"),
    },
    "authentication.UserInfo": {
        1: _f("username"),
        2: _f("uid"),
        3: _f("groups", rep=True),
        4: _f("extra", MAP_SL),
    },
    # authorization.k8s.io/v1
    "authorization.SelfSubjectAccessReview": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "authorization.SelfSubjectAccessReviewSpec"),
        3: _m("status", "authorization.SubjectAccessReviewStatus"),
    },
    "authorization.SelfSubjectAccessReviewSpec": {
        1: _m("resourceAttributes", "authorization.ResourceAttributes"),
        2: _m("nonResourceAttributes", "authorization.NonResourceAttributes"),
    },
    "authorization.SubjectAccessReview": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "authorization.SubjectAccessReviewSpec"),
        3: _m("status", "authorization.SubjectAccessReviewStatus"),
    },
    "authorization.SubjectAccessReviewSpec": {
        1: _m("resourceAttributes", "authorization.ResourceAttributes"),
        2: _m("nonResourceAttributes", "authorization.NonResourceAttributes"),
        3: _f("user"),
        4: _f("groups", rep=True),
        5: _f("extra", MAP_SL),
        6: _f("uid"),
    },
    "authorization.ResourceAttributes": {
        1: _f("namespace"),
        2: _f("verb"),
        3: _f("group"),
        4: _f("version"),
        5: _f("resource"),
        6: _f("subresource"),
        7: _f("name"),
        8: _m("fieldSelector", "authorization.FieldSelectorAttributes"),
        9: _m("labelSelector", "authorization.LabelSelectorAttributes"),
    },
    "authorization.FieldSelectorAttributes": {
        1: _f("rawSelector"),
        2: _m("requirements", "authorization.FieldSelectorRequirement", rep=True),
    },
    "authorization.FieldSelectorRequirement": {
        1: _f("key", keep=True),
        2: _f("operator", keep=True),
        3: _f("values", rep=True),
    },
    "authorization.LabelSelectorAttributes": {
        1: _f("rawSelector"),
        2: _m("requirements", "LabelSelectorRequirement", rep=True),
    },
    "authorization.NonResourceAttributes": {1: _f("path"), 2: _f("verb")},
    "authorization.SubjectAccessReviewStatus": {
        1: _f("allowed", BOOL, keep=True),
        4: _f("denied", BOOL),
        2: _f("reason"),
        3: _f("evaluationError"),
    },
    "authorization.SelfSubjectRulesReview": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "authorization.SelfSubjectRulesReviewSpec"),
        3: _m("status", "authorization.SubjectRulesReviewStatus"),
    },
    "authorization.SelfSubjectRulesReviewSpec": {1: _f("namespace")},
    "authorization.SubjectRulesReviewStatus": {
        1: _m("resourceRules", "authorization.ResourceRule", rep=True),
        2: _m("nonResourceRules", "authorization.NonResourceRule", rep=True),
        3: _f("incomplete", BOOL, keep=True),
        4: _f("evaluationError"),
    },
    "authorization.ResourceRule": {
        1: _f("verbs", rep=True),
        2: _f("apiGroups", rep=True),
        3: _f("resources", rep=True),
        4: _f("resourceNames", rep=True),
    },
    "authorization.NonResourceRule": {1: _f("verbs", rep=True), 2: _f("nonResourceURLs", rep=True)},
}

# rbac.authorization.k8s.io/v1 (``kubectl create role|rolebinding|clusterrole|clusterrolebinding``).
# Subject.kind/name and every RoleRef field have no ``omitempty`` in Go's JSON.
_RBAC: dict[str, dict[int, Field]] = {
    "rbac.Role": {1: _m("metadata", "ObjectMeta"), 2: _m("rules", "rbac.PolicyRule", rep=True)},
    "rbac.ClusterRole": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("rules", "rbac.PolicyRule", rep=True),
        3: _m("aggregationRule", "rbac.AggregationRule"),
    },
    "rbac.AggregationRule": {1: _m("clusterRoleSelectors", "LabelSelector", rep=True)},
    "rbac.PolicyRule": {
        1: _f("verbs", rep=True),
        2: _f("apiGroups", rep=True),
        3: _f("resources", rep=True),
        4: _f("resourceNames", rep=True),
        5: _f("nonResourceURLs", rep=True),
    },
    "rbac.RoleBinding": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("subjects", "rbac.Subject", rep=True),
        3: _m("roleRef", "rbac.RoleRef"),
    },
    "rbac.Subject": {
        1: _f("kind", keep=True),
        2: _f("apiGroup"),
        3: _f("name", keep=True),
        4: _f("namespace"),
    },
    "rbac.RoleRef": {1: _f("apiGroup", keep=True), 2: _f("kind", keep=True), 3: _f("name", keep=True)},
}

# networking.k8s.io/v1 Ingress (``kubectl create ingress``); IngressRule embeds IngressRuleValue.
_NETWORKING: dict[str, dict[int, Field]] = {
    "networking.Ingress": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "networking.IngressSpec"),
        3: _m("status", "networking.IngressStatus"),
    },
    "networking.IngressSpec": {
        1: _m("defaultBackend", "networking.IngressBackend"),
        2: _m("tls", "networking.IngressTLS", rep=True),
        3: _m("rules", "networking.IngressRule", rep=True),
        4: _f("ingressClassName", keep=True),
    },
    "networking.IngressBackend": {
        3: _m("resource", "TypedLocalObjectReference"),
        4: _m("service", "networking.IngressServiceBackend"),
    },
    "networking.IngressServiceBackend": {
        1: _f("name", keep=True),
        2: _m("port", "networking.ServiceBackendPort"),
    },
    "networking.ServiceBackendPort": {1: _f("name"), 2: _f("number", I32)},
    "networking.IngressTLS": {1: _f("hosts", rep=True), 2: _f("secretName")},
    "networking.IngressRule": {1: _f("host"), 2: _inline("networking.IngressRuleValue")},
    "networking.IngressRuleValue": {1: _m("http", "networking.HTTPIngressRuleValue")},
    "networking.HTTPIngressRuleValue": {1: _m("paths", "networking.HTTPIngressPath", rep=True)},
    "networking.HTTPIngressPath": {
        1: _f("path"),
        2: _m("backend", "networking.IngressBackend"),
        3: _f("pathType", keep=True),
    },
    "networking.IngressStatus": {1: _m("loadBalancer", "networking.IngressLoadBalancerStatus")},
    "networking.IngressLoadBalancerStatus": {
        1: _m("ingress", "networking.IngressLoadBalancerIngress", rep=True)
    },
    "networking.IngressLoadBalancerIngress": {1: _f("ip"), 2: _f("hostname")},
}

# ``kubectl create priorityclass|poddisruptionbudget|quota``.
_POLICY: dict[str, dict[int, Field]] = {
    "scheduling.PriorityClass": {
        1: _m("metadata", "ObjectMeta"),
        2: _f("value", I32, keep=True),
        3: _f("globalDefault", BOOL),
        4: _f("description"),
        5: _f("preemptionPolicy", keep=True),
    },
    "policy.PodDisruptionBudget": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "policy.PodDisruptionBudgetSpec"),
        3: _m("status", "policy.PodDisruptionBudgetStatus"),
    },
    "policy.PodDisruptionBudgetSpec": {
        1: _f("minAvailable", IOS),
        2: _m("selector", "LabelSelector"),
        3: _f("maxUnavailable", IOS),
        4: _f("unhealthyPodEvictionPolicy", keep=True),
    },
    "policy.PodDisruptionBudgetStatus": {
        1: _f("observedGeneration", I64),
        3: _f("disruptionsAllowed", I32, keep=True),
        4: _f("currentHealthy", I32, keep=True),
        5: _f("desiredHealthy", I32, keep=True),
        6: _f("expectedPods", I32, keep=True),
    },
    "ResourceQuota": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "ResourceQuotaSpec"),
        3: _m("status", "ResourceQuotaStatus"),
    },
    "ResourceQuotaSpec": {
        1: _f("hard", MAP_SQ),
        2: _f("scopes", rep=True),
        3: _m("scopeSelector", "ScopeSelector"),
    },
    "ScopeSelector": {1: _m("matchExpressions", "ScopedResourceSelectorRequirement", rep=True)},
    "ScopedResourceSelectorRequirement": {
        1: _f("scopeName", keep=True),
        2: _f("operator", keep=True),
        3: _f("values", rep=True),
    },
    "ResourceQuotaStatus": {1: _f("hard", MAP_SQ), 2: _f("used", MAP_SQ)},
}

# meta/v1 DeleteOptions: client-go (helm's storage driver, kubectl) sends it as the body of DELETE.
# Pointer fields (gracePeriodSeconds, orphanDependents, the preconditions' strings) keep their zero.
_DELETE_OPTIONS: dict[str, dict[int, Field]] = {
    "DeleteOptions": {
        1: _f("gracePeriodSeconds", I64, keep=True),
        2: _m("preconditions", "Preconditions"),
        3: _f("orphanDependents", BOOL, keep=True),
        4: _f("propagationPolicy"),
        5: _f("dryRun", rep=True),
        6: _f("ignoreStoreReadErrorWithClusterBreakingPotential", BOOL, keep=True),
    },
    "Preconditions": {1: _f("uid", keep=True), 2: _f("resourceVersion", keep=True)},
}

#: Message name -> {field number: Field}. Core/v1 and meta/v1 messages have bare names; the other
#: groups are prefixed (``apps.``, ``batch.``, ``autoscaling.v1.``/``autoscaling.v2.``,
#: ``authentication.``, ``authorization.``) because their names collide across versions.
SCHEMAS: dict[str, dict[int, Field]] = {
    **_META,
    **_CORE,
    **_APPS,
    **_BATCH,
    **_AUTOSCALING,
    **_AUTH,
    **_DELETE_OPTIONS,
    **_RBAC,
    **_NETWORKING,
    **_POLICY,
}

#: (apiVersion, kind) of a top-level object -> its message in :data:`SCHEMAS`.
KINDS: dict[tuple[str, str], str] = {
    ("v1", "Namespace"): "Namespace",
    ("v1", "ConfigMap"): "ConfigMap",
    ("v1", "Secret"): "Secret",
    ("v1", "Service"): "Service",
    ("v1", "ServiceAccount"): "ServiceAccount",
    ("v1", "Pod"): "Pod",
    ("v1", "PersistentVolumeClaim"): "PersistentVolumeClaim",
    ("apps/v1", "Deployment"): "apps.Deployment",
    ("apps/v1", "StatefulSet"): "apps.StatefulSet",
    ("apps/v1", "ReplicaSet"): "apps.ReplicaSet",
    ("apps/v1", "DaemonSet"): "apps.DaemonSet",
    ("batch/v1", "Job"): "batch.Job",
    ("batch/v1", "CronJob"): "batch.CronJob",
    ("autoscaling/v1", "HorizontalPodAutoscaler"): "autoscaling.v1.HorizontalPodAutoscaler",
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "autoscaling.v2.HorizontalPodAutoscaler",
    ("authentication.k8s.io/v1", "TokenRequest"): "authentication.TokenRequest",
    ("authentication.k8s.io/v1", "TokenReview"): "authentication.TokenReview",
    ("authentication.k8s.io/v1", "SelfSubjectReview"): "authentication.SelfSubjectReview",
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): "authorization.SelfSubjectAccessReview",
    ("authorization.k8s.io/v1", "SubjectAccessReview"): "authorization.SubjectAccessReview",
    ("authorization.k8s.io/v1", "LocalSubjectAccessReview"): "authorization.SubjectAccessReview",
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): "authorization.SelfSubjectRulesReview",
    ("rbac.authorization.k8s.io/v1", "Role"): "rbac.Role",
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "rbac.ClusterRole",
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): "rbac.RoleBinding",
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "rbac.RoleBinding",
    ("networking.k8s.io/v1", "Ingress"): "networking.Ingress",
    ("scheduling.k8s.io/v1", "PriorityClass"): "scheduling.PriorityClass",
    ("policy/v1", "PodDisruptionBudget"): "policy.PodDisruptionBudget",
    ("v1", "ResourceQuota"): "ResourceQuota",
}


# --------------------------------------------------------------------------------------------------
# Wire-format reader


class _Malformed(Exception):
    """The bytes are not valid protobuf for the expected message (becomes a 400)."""


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= len(data):
            raise _Malformed("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise _Malformed("varint longer than 10 bytes")


def _iter_fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """Yield ``(field number, wire type, value)`` for each field of one encoded message.

    The value is an ``int`` for varints and ``bytes`` for the other wire types (8 bytes for
    64-bit, 4 for 32-bit, the payload for length-delimited). Groups are rejected.
    """
    pos = 0
    end = len(data)
    while pos < end:
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise _Malformed("field number 0")
        if wire == _VARINT:
            value, pos = _read_varint(data, pos)
            yield number, wire, value
        elif wire == _LEN:
            length, pos = _read_varint(data, pos)
            if pos + length > end:
                raise _Malformed(f"field {number}: length {length} runs past the end of the message")
            yield number, wire, data[pos : pos + length]
            pos += length
        elif wire in (_FIXED64, _FIXED32):
            size = 8 if wire == _FIXED64 else 4
            if pos + size > end:
                raise _Malformed(f"field {number}: truncated fixed-size value")
            yield number, wire, data[pos : pos + size]
            pos += size
        else:
            raise _Malformed(f"field {number}: unsupported wire type {wire}")


# --------------------------------------------------------------------------------------------------
# Value conversion


_SCALAR_ZERO: dict[str, Any] = {S: "", B: "", I32: 0, I64: 0, BOOL: False}
_VARINT_KINDS = frozenset({I32, I64, BOOL})
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _expect_bytes(wire: int, value: int | bytes, what: str) -> bytes:
    if wire != _LEN or not isinstance(value, bytes):
        raise _Malformed(f"{what}: expected a length-delimited field, got wire type {wire}")
    return value


def _scalar(kind: str, wire: int, value: int | bytes, what: str) -> Any:
    if kind in _VARINT_KINDS:
        if wire != _VARINT or not isinstance(value, int):
            raise _Malformed(f"{what}: expected a varint, got wire type {wire}")
        if kind == BOOL:
            return value != 0
        return _signed(value, 32 if kind == I32 else 64)
    raw = _expect_bytes(wire, value, what)
    if kind == S:
        # Go keeps arbitrary bytes in strings; its JSON encoder replaces invalid UTF-8 the same way.
        return raw.decode("utf-8", errors="replace")
    if kind == B:
        return base64.b64encode(raw).decode("ascii")
    raise _Malformed(f"{what}: unknown scalar kind {kind!r}")  # pragma: no cover - table error


def _packed_varints(raw: bytes) -> Iterator[int]:
    pos = 0
    while pos < len(raw):
        value, pos = _read_varint(raw, pos)
        yield value


def _format_time(raw: bytes, what: str) -> str | None:
    seconds = 0
    nanos = 0
    empty = True
    for number, wire, value in _iter_fields(raw):
        if number == 1:
            seconds = _signed(_need_int(wire, value, what), 64)
            empty = False
        elif number == 2:
            nanos = _signed(_need_int(wire, value, what), 32)
            empty = False
    if empty:
        return None  # Go's zero time.Time is marshalled as an empty message
    try:
        moment = _EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)
    except OverflowError as e:
        raise _Malformed(f"{what}: timestamp out of range") from e
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}Z"
    )


def _need_int(wire: int, value: int | bytes, what: str) -> int:
    if wire != _VARINT or not isinstance(value, int):
        raise _Malformed(f"{what}: expected a varint, got wire type {wire}")
    return value


def _quantity(raw: bytes, what: str) -> str:
    text = "0"
    for number, wire, value in _iter_fields(raw):
        if number == 1:
            text = _scalar(S, wire, value, what)
    return text


def _int_or_string(raw: bytes, what: str) -> int | str:
    kind = 0
    int_val = 0
    str_val = ""
    for number, wire, value in _iter_fields(raw):
        if number == 1:
            kind = _signed(_need_int(wire, value, what), 64)
        elif number == 2:
            int_val = _signed(_need_int(wire, value, what), 32)
        elif number == 3:
            str_val = _scalar(S, wire, value, what)
    return str_val if kind == 1 else int_val


def _raw_json(raw: bytes, what: str) -> Any:
    payload = b""
    for number, wire, value in _iter_fields(raw):
        if number == 1:
            payload = _expect_bytes(wire, value, what)
    if not payload:
        return None
    try:
        return json.loads(payload)
    except ValueError as e:
        raise _Malformed(f"{what}: embedded JSON is invalid") from e


def _string_list(raw: bytes, what: str) -> list[str]:
    return [_scalar(S, wire, value, what) for number, wire, value in _iter_fields(raw) if number == 1]


def _message_value(kind: str, raw: bytes, what: str) -> Any:
    """Decode a length-delimited value whose kind is a message-like kind."""
    if kind.startswith("message:"):
        return _decode_message(kind[len("message:") :], raw, _where=what)
    if kind == Q:
        return _quantity(raw, what)
    if kind == IOS:
        return _int_or_string(raw, what)
    if kind == T:
        return _format_time(raw, what)
    if kind == RAW:
        return _raw_json(raw, what)
    if kind == "strings":
        return _string_list(raw, what)
    raise _Malformed(f"{what}: unknown kind {kind!r}")  # pragma: no cover - table error


def _is_message_kind(kind: str) -> bool:
    return kind.startswith(("message:", "inline:")) or kind in (Q, IOS, T, RAW, "strings")


def _map_entry(value_kind: str, raw: bytes, what: str) -> tuple[str, Any]:
    key = ""
    val: Any = None
    seen_value = False
    for number, wire, value in _iter_fields(raw):
        if number == 1:
            key = _scalar(S, wire, value, f"{what} key")
        elif number == 2:
            seen_value = True
            if _is_message_kind(value_kind):
                val = _message_value(value_kind, _expect_bytes(wire, value, what), f"{what}[{key}]")
            else:
                val = _scalar(value_kind, wire, value, f"{what}[{key}]")
    if not seen_value:
        if _is_message_kind(value_kind):
            val = _message_value(value_kind, b"", what)
        else:
            val = _SCALAR_ZERO[value_kind]
    return key, val


def _decode_message(name: str, data: bytes, *, _where: str = "") -> dict[str, Any]:
    """Decode one encoded message of schema ``name`` into its JSON-shaped dict.

    Raises ``_Malformed`` on bad bytes; :func:`decode_k8s_protobuf` turns it into a 400.
    """
    schema = SCHEMAS[name]
    where = _where or name
    seen: dict[int, None] = {}  # field numbers in order of first appearance
    scalars: dict[int, Any] = {}
    repeated: dict[int, list[Any]] = {}
    maps: dict[int, dict[str, Any]] = {}
    # A non-repeated embedded message may occur several times; protobuf merges the occurrences,
    # which is the same as decoding the concatenation of their payloads.
    embedded: dict[int, bytearray] = {}

    for number, wire, value in _iter_fields(data):
        spec = schema.get(number)
        if spec is None:
            continue  # unknown field (a newer client): skip it
        seen.setdefault(number)
        what = f"{where}.{spec.json or spec.kind}"
        kind = spec.kind
        if kind.startswith("map<"):
            value_kind = kind[len("map<string,") : -1]
            k, v = _map_entry(value_kind, _expect_bytes(wire, value, what), what)
            maps.setdefault(number, {})[k] = v
        elif spec.repeated:
            items = repeated.setdefault(number, [])
            if _is_message_kind(kind):
                items.append(_message_value(kind, _expect_bytes(wire, value, what), f"{what}[{len(items)}]"))
            elif kind in _VARINT_KINDS and wire == _LEN and isinstance(value, bytes):
                items.extend(_scalar(kind, _VARINT, v, what) for v in _packed_varints(value))  # packed
            else:
                items.append(_scalar(kind, wire, value, what))
        elif _is_message_kind(kind):
            embedded.setdefault(number, bytearray()).extend(_expect_bytes(wire, value, what))
        else:
            scalars[number] = _scalar(kind, wire, value, what)  # the last occurrence wins

    out: dict[str, Any] = {}
    for number in seen:
        spec = schema[number]
        if number in embedded:
            payload = bytes(embedded[number])
            if spec.kind.startswith("inline:"):
                out.update(_decode_message(spec.kind[len("inline:") :], payload, _where=where))
                continue
            decoded = _message_value(spec.kind, payload, f"{where}.{spec.json}")
            if decoded is not None or spec.keep:
                out[spec.json] = decoded  # None only for a zero Time / empty raw JSON
        elif number in scalars:
            val = scalars[number]
            if spec.keep or val != _SCALAR_ZERO[spec.kind]:
                out[spec.json] = val
        elif repeated.get(number):
            out[spec.json] = repeated[number]
        elif maps.get(number):
            out[spec.json] = maps[number]
    return out


# --------------------------------------------------------------------------------------------------
# Public entry points


def is_protobuf(content_type: str | None) -> bool:
    """True if ``content_type`` is ``application/vnd.kubernetes.protobuf`` (parameters ignored)."""
    if not content_type:
        return False
    return content_type.split(";", 1)[0].strip().lower() == PROTOBUF_CONTENT_TYPE


def _bad(detail: str) -> StatusError:
    return errors.bad_request(
        f"the body of the request could not be decoded as {PROTOBUF_CONTENT_TYPE}: {detail}"
    )


def _unsupported(message: str) -> StatusError:
    return StatusError(415, "UnsupportedMediaType", message)


def decode_k8s_protobuf(body: bytes) -> dict[str, Any]:
    """Decode a Kubernetes protobuf request body into the object's JSON-shaped dict.

    The result starts with ``kind`` and ``apiVersion`` taken from the envelope's ``typeMeta``.
    Raises :class:`StatusError` 415 ``UnsupportedMediaType`` for a kind (or content encoding)
    this server cannot decode, and 400 ``BadRequest`` for malformed bytes.
    """
    if not body.startswith(MAGIC):
        raise _bad("the body does not start with the protobuf magic prefix 'k8s\\x00'")
    try:
        api_version = kind = content_encoding = content_type = ""
        raw = b""
        for number, wire, value in _iter_fields(body[len(MAGIC) :]):
            if number == 1:
                for tm_number, tm_wire, tm_value in _iter_fields(_expect_bytes(wire, value, "typeMeta")):
                    if tm_number == 1:
                        api_version = _scalar(S, tm_wire, tm_value, "typeMeta.apiVersion")
                    elif tm_number == 2:
                        kind = _scalar(S, tm_wire, tm_value, "typeMeta.kind")
            elif number == 2:
                raw = _expect_bytes(wire, value, "raw")
            elif number == 3:
                content_encoding = _scalar(S, wire, value, "contentEncoding")
            elif number == 4:
                content_type = _scalar(S, wire, value, "contentType")
        if not kind or not api_version:
            raise _Malformed("the envelope has no apiVersion/kind")
        if content_encoding:
            raise _unsupported(
                f"content encoding {content_encoding!r} of the protobuf body is not supported; send the object as application/json"
            )
        if content_type and not is_protobuf(content_type):
            raise _unsupported(
                f"the protobuf envelope carries {content_type!r} content, which is not supported; send the object as application/json"
            )
        message = KINDS.get((api_version, kind))
        if message is None and kind == "DeleteOptions":
            # metav1.AddToGroupVersion registers DeleteOptions in every group-version; client-go
            # stamps the envelope with its client's group-version (``v1``, ``apps/v1``, …).
            message = "DeleteOptions"
        if message is None:
            raise _unsupported(
                f'the server cannot decode kind "{kind}" (apiVersion "{api_version}") from '
                f"{PROTOBUF_CONTENT_TYPE}; send the object as application/json"
            )
        obj = _decode_message(message, raw)
    except StatusError:
        raise
    except _Malformed as e:
        raise _bad(str(e)) from None
    except (ValueError, OverflowError, IndexError, KeyError, TypeError, RecursionError) as e:
        raise _bad(f"{type(e).__name__}: {e}") from None
    return {"kind": kind, "apiVersion": api_version, **obj}
