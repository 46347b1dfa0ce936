"""Strict decoding of a ``KubeSchedulerConfiguration`` document (kube's ``UniversalDecoder`` with strict mode).

kube-scheduler decodes its file strictly: a field the v1 types do not have is an error
(``strict decoding error: unknown field "profiles[0].foo"``), and so is a value of the wrong
type. The schema below lists the v1 fields; the plugin args kinds list theirs, so a typo in
``pluginConfig[].args`` is caught too (args of a plugin without an args kind are kept as given,
as kube keeps them as ``runtime.Unknown``).
"""

from __future__ import annotations

from typing import Any

from apiserver import field
from apiserver.field import FieldError, Path

GROUP = "kubescheduler.config.k8s.io"
VERSION = "v1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "KubeSchedulerConfiguration"

#: a field's type: a scalar name, a nested object schema, or ("list", element type)
Schema = dict[str, Any]

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

_PLUGIN: Schema = {"name": "string", "weight": "int32"}
_PLUGIN_SET: Schema = {"enabled": ("list", _PLUGIN), "disabled": ("list", _PLUGIN)}

#: kube's extension points, in ``v1.Plugins`` order
KUBE_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)
#: gangplane's PodGroup-cycle extension points (KEP-6277's workload-aware cycle): configured like
#: kube's, but not part of ``v1.Plugins`` upstream
GANGPLANE_POINTS = ("placementGenerate", "placementFeasible", "placementScore", "podGroupPostFilter")
POINTS = (*KUBE_POINTS, *GANGPLANE_POINTS)

_PLUGINS: Schema = {"multiPoint": _PLUGIN_SET, **{p: _PLUGIN_SET for p in POINTS}}

_RESOURCE_SPEC: Schema = {"name": "string", "weight": "int64"}
_SHAPE_POINT: Schema = {"utilization": "int32", "score": "int32"}
_LABEL_SELECTOR: Schema = {"matchLabels": "any", "matchExpressions": "any"}
_SPREAD_CONSTRAINT: Schema = {
    "maxSkew": "int32",
    "topologyKey": "string",
    "whenUnsatisfiable": "string",
    "labelSelector": _LABEL_SELECTOR,
    "minDomains": "int32",
    "nodeAffinityPolicy": "string",
    "nodeTaintsPolicy": "string",
    "matchLabelKeys": ("list", "string"),
}

#: the v1 args kinds, by plugin name (``<Plugin>Args``)
ARGS_SCHEMAS: dict[str, Schema] = {
    "DefaultPreemption": {"minCandidateNodesPercentage": "int32", "minCandidateNodesAbsolute": "int32"},
    "InterPodAffinity": {"hardPodAffinityWeight": "int32", "ignorePreferredTermsOfExistingPods": "bool"},
    "NodeAffinity": {"addedAffinity": "any"},
    "NodeResourcesBalancedAllocation": {"resources": ("list", _RESOURCE_SPEC)},
    "NodeResourcesFit": {
        "ignoredResources": ("list", "string"),
        "ignoredResourceGroups": ("list", "string"),
        "scoringStrategy": {
            "type": "string",
            "resources": ("list", _RESOURCE_SPEC),
            "requestedToCapacityRatio": {"shape": ("list", _SHAPE_POINT)},
        },
    },
    "PodTopologySpread": {"defaultConstraints": ("list", _SPREAD_CONSTRAINT), "defaultingType": "string"},
    "VolumeBinding": {"bindTimeoutSeconds": "int64", "shape": ("list", _SHAPE_POINT)},
    "DynamicResources": {"filterTimeout": "string", "bindingTimeout": "string"},
}

_PLUGIN_CONFIG: Schema = {"name": "string", "args": "args"}
_PROFILE: Schema = {
    "schedulerName": "string",
    "percentageOfNodesToScore": "int32",
    "plugins": _PLUGINS,
    "pluginConfig": ("list", _PLUGIN_CONFIG),
}
_LEADER_ELECTION: Schema = {
    "leaderElect": "bool",
    "leaseDuration": "string",
    "renewDeadline": "string",
    "retryPeriod": "string",
    "resourceLock": "string",
    "resourceName": "string",
    "resourceNamespace": "string",
}
_CLIENT_CONNECTION: Schema = {
    "kubeconfig": "string",
    "acceptContentTypes": "string",
    "contentType": "string",
    "qps": "float",
    "burst": "int32",
}
CONFIG_SCHEMA: Schema = {
    "apiVersion": "string",
    "kind": "string",
    "parallelism": "int32",
    "leaderElection": _LEADER_ELECTION,
    "clientConnection": _CLIENT_CONNECTION,
    "enableProfiling": "bool",
    "enableContentionProfiling": "bool",
    "percentageOfNodesToScore": "int32",
    "podInitialBackoffSeconds": "int64",
    "podMaxBackoffSeconds": "int64",
    "profiles": ("list", _PROFILE),
    "extenders": ("list", "any"),
    "delayCacheUntilActive": "bool",
}


class DecodeError(ValueError):
    """The document is not a v1 ``KubeSchedulerConfiguration`` (kube's decoder refuses it)."""


def check_kind(doc: Any) -> None:
    """The document must be a mapping naming ``kubescheduler.config.k8s.io/v1`` ``KubeSchedulerConfiguration``."""
    if not isinstance(doc, dict):
        raise DecodeError("couldn't decode the configuration: not a YAML or JSON object")
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if not api_version or not kind:
        missing = "apiVersion" if not api_version else "kind"
        raise DecodeError(
            f"Object '{'Kind' if missing == 'kind' else 'apiVersion'}' is missing in the configuration"
        )
    if api_version != API_VERSION or kind != KIND:
        raise DecodeError(
            f'no kind "{kind}" is registered for version "{api_version}" in scheme '
            f'"pkg/scheduler/apis/config/scheme/scheme.go:30" (gangplane reads {API_VERSION} {KIND})'
        )


def strict_errors(doc: dict[str, Any]) -> tuple[list[str], list[FieldError]]:
    """(unknown field paths, type errors) of ``doc`` against the v1 schema."""
    unknown: list[str] = []
    errs: list[FieldError] = []
    _walk(doc, CONFIG_SCHEMA, Path(), unknown, errs, plugin_name="")
    return unknown, errs


def _walk(
    value: Any, spec: Any, path: Path, unknown: list[str], errs: list[FieldError], plugin_name: str
) -> None:
    if value is None:
        return  # an explicit null is "unset", as JSON decoding into a pointer makes it
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            errs.append(field.invalid(path, value, "must be an object"))
            return
        for k, v in value.items():
            sub = spec.get(k)
            child = path.child(str(k)) if str(path) else Path(str(k))
            if sub is None:
                unknown.append(str(child))
                continue
            name = plugin_name
            if sub == "args":
                name = value.get("name") if isinstance(value.get("name"), str) else ""
                args_schema = ARGS_SCHEMAS.get(name or "")
                if args_schema is None:
                    if not isinstance(v, dict):
                        errs.append(field.invalid(child, v, "must be an object"))
                    continue
                sub = {"apiVersion": "string", "kind": "string", **args_schema}
            _walk(v, sub, child, unknown, errs, name)
        return
    if isinstance(spec, tuple):
        if not isinstance(value, list):
            errs.append(field.invalid(path, value, "must be a list"))
            return
        for i, item in enumerate(value):
            _walk(item, spec[1], path.index(i), unknown, errs, plugin_name)
        return
    err = _scalar_error(value, spec)
    if err:
        errs.append(field.invalid(path, value, err))


def _scalar_error(value: Any, kind: str) -> str:
    if kind == "any":
        return ""
    if kind == "string":
        return "" if isinstance(value, str) else "must be a string"
    if kind == "bool":
        return "" if isinstance(value, bool) else "must be a boolean"
    if kind == "float":
        return "" if isinstance(value, (int, float)) and not isinstance(value, bool) else "must be a number"
    if kind in ("int32", "int64"):
        if isinstance(value, bool) or not isinstance(value, int):
            return f"must be an integer ({kind})"
        bound = INT32_MAX if kind == "int32" else INT64_MAX
        if not -bound - 1 <= value <= bound:
            return f"does not fit in an {kind}"
        return ""
    raise AssertionError(f"unknown schema type {kind}")
