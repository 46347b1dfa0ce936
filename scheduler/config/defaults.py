"""kube's v1 defaulting of a ``KubeSchedulerConfiguration`` (``SetDefaults_KubeSchedulerConfiguration``).

The default plugin set is gangplane's (:data:`scheduler.defaults.DEFAULT_PLUGINS`): kube's
``getDefaultPlugins`` without the volume and image plugins gangplane has nothing for, with the
KEP-6277 gang and topology plugins. A profile's ``plugins`` is merged into it per extension point
as kube's ``mergePluginSet`` does: a default plugin disabled by name (or by ``*``) is dropped, a
default plugin enabled again is re-configured in place (its weight replaced, its position kept),
other enabled plugins are appended. Every enabled plugin with an args kind then gets its
default args, and explicitly given args are defaulted field by field.
"""

from __future__ import annotations

import copy
from typing import Any

from scheduler.config.decode import POINTS
from scheduler.defaults import DEFAULT_PLUGINS
from scheduler.interfaces import DEFAULT_SCHEDULER_NAME

Obj = dict[str, Any]

#: kube's ``DefaultPercentageOfNodesToScore``: 0 = adaptive
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0
DEFAULT_RESOURCE_SPEC: list[Obj] = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


def default_plugins() -> Obj:
    """gangplane's default ``plugins`` (kube's ``getDefaultPlugins``): one MultiPoint list with Score weights."""
    enabled: list[Obj] = []
    for spec in DEFAULT_PLUGINS:
        entry: Obj = {"name": spec.name}
        if spec.weight:
            entry["weight"] = spec.weight
        enabled.append(entry)
    return {"multiPoint": {"enabled": enabled}}


def merge_plugin_set(default: Obj | None, custom: Obj | None) -> Obj:
    """kube's ``mergePluginSet``: ``custom`` (a profile's set for one extension point) over ``default``."""
    default = default or {}
    custom = custom or {}
    disabled_names: set[str] = set()
    disabled: list[Obj] = []
    for p in [*(custom.get("disabled") or []), *(default.get("disabled") or [])]:
        disabled.append({"name": p.get("name", "")})
        disabled_names.add(p.get("name", ""))
    custom_enabled = list(custom.get("enabled") or [])
    by_name = {p.get("name", ""): (i, p) for i, p in enumerate(custom_enabled)}
    replaced: set[int] = set()
    enabled: list[Obj] = []
    if "*" not in disabled_names:
        for p in default.get("enabled") or []:
            name = p.get("name", "")
            if name in disabled_names:
                continue
            if name in by_name:
                i, p = by_name[name]
                replaced.add(i)
            enabled.append(dict(p))
    enabled.extend(dict(p) for i, p in enumerate(custom_enabled) if i not in replaced)
    out: Obj = {}
    if enabled:
        out["enabled"] = enabled
    if disabled:
        out["disabled"] = disabled
    return out


def merge_plugins(default: Obj, custom: Obj | None) -> Obj:
    if custom is None:
        return default
    out: Obj = {}
    for point in ("multiPoint", *POINTS):
        merged = merge_plugin_set(default.get(point), custom.get(point))
        if merged:
            out[point] = merged
    return out


def plugin_names(plugins: Obj) -> list[str]:
    """Every plugin enabled at some extension point, sorted (kube's ``pluginsNames``)."""
    names = {p.get("name", "") for ps in plugins.values() for p in (ps or {}).get("enabled") or []}
    return sorted(names)


# --- the plugins' args defaults (``SetDefaults_<Plugin>Args``) ----------------------------------


def _default_preemption(a: Obj) -> None:
    if a.get("minCandidateNodesPercentage") is None:
        a["minCandidateNodesPercentage"] = 10
    if a.get("minCandidateNodesAbsolute") is None:
        a["minCandidateNodesAbsolute"] = 100


def _inter_pod_affinity(a: Obj) -> None:
    if a.get("hardPodAffinityWeight") is None:
        a["hardPodAffinityWeight"] = 1


def _resources(resources: list[Obj] | None) -> list[Obj]:
    if not resources:
        return copy.deepcopy(DEFAULT_RESOURCE_SPEC)
    for r in resources:
        if not r.get("weight"):
            r["weight"] = 1
    return resources


def _balanced_allocation(a: Obj) -> None:
    a["resources"] = _resources(a.get("resources"))


def _node_resources_fit(a: Obj) -> None:
    strategy = a.get("scoringStrategy")
    if strategy is None:
        a["scoringStrategy"] = {"type": "LeastAllocated", "resources": copy.deepcopy(DEFAULT_RESOURCE_SPEC)}
        return
    strategy["resources"] = _resources(strategy.get("resources"))


def _pod_topology_spread(a: Obj) -> None:
    if not a.get("defaultingType"):
        a["defaultingType"] = "System"


def _volume_binding(a: Obj) -> None:
    if a.get("bindTimeoutSeconds") is None:
        a["bindTimeoutSeconds"] = 600


ARGS_DEFAULTS = {
    "DefaultPreemption": _default_preemption,
    "InterPodAffinity": _inter_pod_affinity,
    "NodeAffinity": lambda a: None,
    "NodeResourcesBalancedAllocation": _balanced_allocation,
    "NodeResourcesFit": _node_resources_fit,
    "PodTopologySpread": _pod_topology_spread,
    "VolumeBinding": _volume_binding,
    "DynamicResources": lambda a: None,
}


def _args_kind(name: str) -> Obj:
    return {"kind": f"{name}Args", "apiVersion": "kubescheduler.config.k8s.io/v1"}


def default_profile(profile: Obj) -> None:
    """``setDefaults_KubeSchedulerProfile``: merged plugins, then args for every plugin that has a kind."""
    profile["plugins"] = merge_plugins(default_plugins(), profile.get("plugins"))
    configs = profile.get("pluginConfig") or []
    existing: set[str] = set()
    for pc in configs:
        name = pc.get("name", "")
        existing.add(name)
        fill = ARGS_DEFAULTS.get(name)
        if fill is not None:
            args = pc.get("args")
            if args is None:
                args = pc["args"] = {}
            if isinstance(args, dict):
                for k, v in _args_kind(name).items():
                    args.setdefault(k, v)
                fill(args)
    for name in plugin_names(profile["plugins"]):
        if name in existing or name not in ARGS_DEFAULTS:
            continue
        args = _args_kind(name)
        ARGS_DEFAULTS[name](args)
        configs.append({"name": name, "args": args})
    profile["pluginConfig"] = configs


def set_defaults(cfg: Obj) -> Obj:
    """A defaulted deep copy of ``cfg`` (kube's ``SetDefaults_KubeSchedulerConfiguration``)."""
    cfg = copy.deepcopy(cfg)
    if cfg.get("parallelism") is None:
        cfg["parallelism"] = 16
    profiles = cfg.get("profiles") or []
    if not profiles:
        profiles = [{}]
    if len(profiles) == 1 and profiles[0].get("schedulerName") is None:
        profiles[0]["schedulerName"] = DEFAULT_SCHEDULER_NAME
    for p in profiles:
        default_profile(p)
    cfg["profiles"] = profiles
    if cfg.get("percentageOfNodesToScore") is None:
        cfg["percentageOfNodesToScore"] = DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE
    le = cfg.get("leaderElection") or {}
    le.setdefault("leaderElect", True)
    le.setdefault("leaseDuration", "15s")
    le.setdefault("renewDeadline", "10s")
    le.setdefault("retryPeriod", "2s")
    if not le.get("resourceLock"):
        le["resourceLock"] = "leases"
    if not le.get("resourceNamespace"):
        le["resourceNamespace"] = "kube-system"
    if not le.get("resourceName"):
        le["resourceName"] = "kube-scheduler"
    cfg["leaderElection"] = le
    cc = cfg.get("clientConnection") or {}
    if not cc.get("contentType"):
        cc["contentType"] = "application/vnd.kubernetes.protobuf"
    if not cc.get("qps"):
        cc["qps"] = 50
    if not cc.get("burst"):
        cc["burst"] = 100
    cc.setdefault("kubeconfig", "")
    cc.setdefault("acceptContentTypes", "")
    cfg["clientConnection"] = cc
    if cfg.get("podInitialBackoffSeconds") is None:
        cfg["podInitialBackoffSeconds"] = 1
    if cfg.get("podMaxBackoffSeconds") is None:
        cfg["podMaxBackoffSeconds"] = 10
    if cfg.get("enableProfiling") is None:
        cfg["enableProfiling"] = True
    if cfg["enableProfiling"] and cfg.get("enableContentionProfiling") is None:
        cfg["enableContentionProfiling"] = True
    return cfg
