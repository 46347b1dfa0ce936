"""kube's ``ValidateKubeSchedulerConfiguration`` and the plugin-args validators, with their messages.

Run on the defaulted configuration, as kube-scheduler does. Each error is a field error whose
path names the offending field (``profiles[0].pluginConfig[1].args.scoringStrategy.type:
Unsupported value: ...``). Checks that are gangplane's own (it has no extenders; a few args
kube accepts have no behaviour in gangplane) say so in their message.
"""

from __future__ import annotations

from typing import Any

from apiserver import field
from apiserver.client.leaderelection import parse_duration
from apiserver.field import ErrorList, Path
from apiserver.validation.meta import validate_label_name

Obj = dict[str, Any]

SCORING_STRATEGIES = ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]
#: kube's ``MaxCustomPriorityScore``: the score scale of RequestedToCapacityRatio's shape
MAX_CUSTOM_PRIORITY_SCORE = 10
#: kube-scheduler plugins removed from v1 (``invalidPluginsByVersion``)
INVALID_IN_V1 = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
API_VERSION = "kubescheduler.config.k8s.io/v1"


def validate_config(cfg: Obj) -> ErrorList:
    """``ValidateKubeSchedulerConfiguration`` over a defaulted configuration."""
    errs: ErrorList = []
    errs += _leader_election(cfg.get("leaderElection") or {}, Path("leaderElection"))
    cc = cfg.get("clientConnection") or {}
    if (cc.get("burst") or 0) < 0:
        errs.append(field.invalid(Path("clientConnection", "burst"), cc.get("burst"), "must be non-negative"))
    if cfg.get("parallelism", 0) <= 0:
        errs.append(
            field.invalid(
                Path("parallelism"), cfg.get("parallelism"), "should be an integer value greater than zero"
            )
        )
    profiles = cfg.get("profiles") or []
    if not profiles:
        errs.append(field.required(Path("profiles")))
    else:
        seen: dict[str, int] = {}
        for i, prof in enumerate(profiles):
            path = Path("profiles").index(i)
            errs += _profile(path, prof)
            name = prof.get("schedulerName") or ""
            if name in seen:
                errs.append(
                    field.duplicate(
                        path.child("schedulerName"),
                        str(Path("profiles").index(seen[name]).child("schedulerName")),
                    )
                )
            seen[name] = i
        errs += _common_queue_sort(profiles)
    errs += _percentage(Path("percentageOfNodesToScore"), cfg.get("percentageOfNodesToScore"))
    initial = cfg.get("podInitialBackoffSeconds", 1)
    if initial <= 0:
        errs.append(field.invalid(Path("podInitialBackoffSeconds"), initial, "must be greater than 0"))
    if cfg.get("podMaxBackoffSeconds", 10) < initial:
        errs.append(
            field.invalid(
                Path("podMaxBackoffSeconds"),
                cfg.get("podMaxBackoffSeconds"),
                "must be greater than or equal to PodInitialBackoffSeconds",
            )
        )
    if cfg.get("extenders"):
        errs.append(field.forbidden(Path("extenders"), "gangplane runs no scheduler extenders"))
    return errs


def _leader_election(le: Obj, path: Path) -> ErrorList:
    """component-base's ``ValidateLeaderElectionConfiguration`` (when leaderElect is on) and the lock kind."""
    errs: ErrorList = []
    if not le.get("leaderElect"):
        return errs
    durations: dict[str, float] = {}
    for k in ("leaseDuration", "renewDeadline", "retryPeriod"):
        try:
            durations[k] = parse_duration(str(le.get(k, "")))
        except ValueError:
            errs.append(field.invalid(path.child(k), le.get(k), "must be a duration such as 15s"))
    if len(durations) == 3:
        if durations["leaseDuration"] <= 0:
            errs.append(
                field.invalid(path.child("leaseDuration"), le["leaseDuration"], "must be greater than zero")
            )
        if durations["renewDeadline"] <= 0:
            errs.append(
                field.invalid(path.child("renewDeadline"), le["renewDeadline"], "must be greater than zero")
            )
        if durations["retryPeriod"] <= 0:
            errs.append(
                field.invalid(path.child("retryPeriod"), le["retryPeriod"], "must be greater than zero")
            )
        if durations["leaseDuration"] <= durations["renewDeadline"]:
            errs.append(
                field.invalid(
                    path.child("leaseDuration"),
                    le["renewDeadline"],
                    "LeaseDuration must be greater than RenewDeadline",
                )
            )
    if not le.get("resourceLock"):
        errs.append(
            field.invalid(path.child("resourceLock"), le.get("resourceLock"), "resourceLock is required")
        )
    if not le.get("resourceName"):
        errs.append(
            field.invalid(path.child("resourceName"), le.get("resourceName"), "resourceName is required")
        )
    if le.get("resourceLock") and le.get("resourceLock") != "leases":
        errs.append(
            field.invalid(
                path.child("resourceLock"), le.get("resourceLock"), 'resourceLock value must be "leases"'
            )
        )
    return errs


def _percentage(path: Path, v: int | None) -> ErrorList:
    if v is not None and not 0 <= v <= 100:
        return [field.invalid(path, v, "not in valid range [0-100]")]
    return []


def _profile(path: Path, prof: Obj) -> ErrorList:
    errs: ErrorList = []
    if not prof.get("schedulerName"):
        errs.append(field.required(path.child("schedulerName")))
    errs += _percentage(path.child("percentageOfNodesToScore"), prof.get("percentageOfNodesToScore"))
    plugins = prof.get("plugins") or {}
    for point, ps in plugins.items():
        for i, p in enumerate((ps or {}).get("enabled") or []):
            p_path = path.child("plugins", point, "enabled").index(i)
            name = p.get("name") or ""
            if name in INVALID_IN_V1:
                errs.append(
                    field.invalid(
                        p_path,
                        name,
                        f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version "{API_VERSION}")',
                    )
                )
            weight = p.get("weight")
            if weight is not None and weight < 0:
                errs.append(
                    field.invalid(
                        p_path.child("weight"),
                        weight,
                        "must not be negative (gangplane's check: a negative weight would turn the plugin's preference around)",
                    )
                )
    seen: set[str] = set()
    for i, pc in enumerate(prof.get("pluginConfig") or []):
        pc_path = path.child("pluginConfig").index(i)
        name = pc.get("name") or ""
        if name in seen:
            errs.append(field.duplicate(pc_path, name))
        seen.add(name)
        if name in INVALID_IN_V1:
            errs.append(
                field.invalid(
                    pc_path,
                    name,
                    f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version "{API_VERSION}")',
                )
            )
            continue
        check = ARGS_VALIDATORS.get(name)
        args = pc.get("args")
        if check is not None and isinstance(args, dict):
            errs += check(pc_path.child("args"), args)
    return errs


def _common_queue_sort(profiles: list[Obj]) -> ErrorList:
    """Every profile must sort the one queue alike (``validateCommonQueueSort``)."""
    errs: ErrorList = []
    first = ((profiles[0].get("plugins") or {}).get("queueSort")) or {}
    enabled = first.get("enabled") or []
    if len(enabled) > 1:
        errs.append(
            field.invalid(
                Path("profiles").index(0).child("plugins", "queueSort", "Enabled"),
                len(enabled),
                "only one queue sort plugin can be enabled",
            )
        )
    for i in range(1, len(profiles)):
        cur = ((profiles[i].get("plugins") or {}).get("queueSort")) or {}
        if cur != first:
            errs.append(
                field.invalid(
                    Path("profiles").index(i).child("plugins", "queueSort"),
                    cur,
                    "must be the same for all profiles",
                )
            )
    return errs


# --- plugin args -----------------------------------------------------------------------------


def _default_preemption(path: Path, a: Obj) -> ErrorList:
    errs: ErrorList = []
    pct, abs_ = a.get("minCandidateNodesPercentage", 10), a.get("minCandidateNodesAbsolute", 100)
    pp, ap = path.child("minCandidateNodesPercentage"), path.child("minCandidateNodesAbsolute")
    if not 0 <= pct <= 100:
        errs.append(field.invalid(pp, pct, "not in valid range [0, 100]"))
    if abs_ < 0:
        errs.append(field.invalid(ap, abs_, "not in valid range [0, inf)"))
    if pct == 0 and abs_ == 0:
        errs.append(field.invalid(pp, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"))
        errs.append(field.invalid(ap, abs_, "cannot be zero at the same time as minCandidateNodesPercentage"))
    return errs


def _inter_pod_affinity(path: Path, a: Obj) -> ErrorList:
    w = a.get("hardPodAffinityWeight", 1)
    if not 0 <= w <= 100:
        return [field.invalid(path.child("hardPodAffinityWeight"), w, "not in valid range [0, 100]")]
    return []


def _pod_topology_spread(path: Path, a: Obj) -> ErrorList:
    errs: ErrorList = []
    dt = a.get("defaultingType")
    constraints = a.get("defaultConstraints") or []
    if dt not in ("System", "List"):
        errs.append(field.not_supported(path.child("defaultingType"), dt, ["System", "List"]))
    elif dt == "System" and constraints:
        errs.append(field.invalid(path.child("defaultingType"), dt, "when .defaultConstraints are not empty"))
    cpath = path.child("defaultConstraints")
    for i, c in enumerate(constraints):
        p = cpath.index(i)
        if (c.get("maxSkew") or 0) <= 0:
            errs.append(field.invalid(p.child("maxSkew"), c.get("maxSkew", 0), "not in valid range (0, inf)"))
        key = c.get("topologyKey") or ""
        if not key:
            errs.append(field.required(p.child("topologyKey"), "can not be empty"))
        else:
            errs += validate_label_name(key, p.child("topologyKey"))
        wu = c.get("whenUnsatisfiable") or ""
        if not wu:
            errs.append(field.required(p.child("whenUnsatisfiable"), "can not be empty"))
        elif wu not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(
                field.not_supported(p.child("whenUnsatisfiable"), wu, ["DoNotSchedule", "ScheduleAnyway"])
            )
        if c.get("labelSelector") is not None:
            errs.append(
                field.forbidden(
                    p.child("labelSelector"),
                    "constraint must not define a selector, as they deduced for each pod",
                )
            )
        for j in range(i):
            o = constraints[j]
            if o.get("topologyKey") == c.get("topologyKey") and o.get("whenUnsatisfiable") == c.get(
                "whenUnsatisfiable"
            ):
                errs.append(
                    field.duplicate(
                        cpath.index(i), f"{{{c.get('topologyKey')}, {c.get('whenUnsatisfiable')}}}"
                    )
                )
                break
    return errs


def _shape(path: Path, shape: list[Obj] | None) -> ErrorList:
    errs: ErrorList = []
    if not shape:
        return [field.required(path, "at least one point must be specified")]
    for i in range(1, len(shape)):
        if shape[i - 1].get("utilization", 0) >= shape[i].get("utilization", 0):
            errs.append(
                field.invalid(
                    path.index(i).child("utilization"),
                    shape[i].get("utilization", 0),
                    "values must be sorted in increasing order",
                )
            )
            break
    for i, pt in enumerate(shape):
        u, s = pt.get("utilization", 0), pt.get("score", 0)
        if not 0 <= u <= 100:
            errs.append(field.invalid(path.index(i).child("utilization"), u, "not in valid range [0, 100]"))
        if not 0 <= s <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(
                field.invalid(
                    path.index(i).child("score"), s, f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"
                )
            )
    return errs


def _resource_weights(path: Path, resources: list[Obj]) -> ErrorList:
    errs: ErrorList = []
    for i, r in enumerate(resources):
        w = r.get("weight", 0)
        if not 0 < w <= 100:
            errs.append(
                field.invalid(
                    path.index(i).child("weight"),
                    w,
                    f"resource weight of {r.get('name', '')} not in valid range (0, 100]",
                )
            )
    return errs


def _node_resources_fit(path: Path, a: Obj) -> ErrorList:
    errs: ErrorList = []
    for i, res in enumerate(a.get("ignoredResources") or []):
        errs += validate_label_name(res, path.child("ignoredResources").index(i))
    for i, group in enumerate(a.get("ignoredResourceGroups") or []):
        gp = path.child("ignoredResourceGroups").index(i)
        if "/" in group:
            errs.append(field.invalid(gp, group, "resource group name can't contain '/'"))
        errs += validate_label_name(group, gp)
    strategy = a.get("scoringStrategy")
    if strategy is not None:
        sp = path.child("scoringStrategy")
        kind = strategy.get("type")
        if kind not in SCORING_STRATEGIES:
            errs.append(field.not_supported(sp.child("type"), kind, SCORING_STRATEGIES))
        errs += _resource_weights(sp.child("resources"), strategy.get("resources") or [])
        rtcr = strategy.get("requestedToCapacityRatio")
        if rtcr is not None:
            errs += _shape(sp.child("shape"), rtcr.get("shape"))
        elif kind == "RequestedToCapacityRatio":
            # kube's plugin would dereference the missing shape; say so instead
            errs.append(
                field.required(
                    sp.child("requestedToCapacityRatio"),
                    "the RequestedToCapacityRatio strategy needs a shape",
                )
            )
    return errs


def _balanced_allocation(path: Path, a: Obj) -> ErrorList:
    errs: ErrorList = []
    seen: set[str] = set()
    for i, r in enumerate(a.get("resources") or []):
        rp = path.child("resources").index(i)
        if r.get("name") in seen:
            errs.append(field.duplicate(rp.child("name"), r.get("name")))
        seen.add(r.get("name", ""))
        if r.get("weight") != 1:
            errs.append(field.invalid(rp.child("weight"), r.get("weight"), "must be 1"))
    return errs


def _node_affinity(path: Path, a: Obj) -> ErrorList:
    if a.get("addedAffinity"):
        return [
            field.forbidden(
                path.child("addedAffinity"),
                "gangplane's NodeAffinity plugin does not apply an added affinity",
            )
        ]
    return []


def _dynamic_resources(path: Path, a: Obj) -> ErrorList:
    return [
        field.forbidden(path.child(k), f"gangplane's DynamicResources plugin has no {k}")
        for k in ("filterTimeout", "bindingTimeout")
        if a.get(k) is not None
    ]


def _volume_binding(path: Path, a: Obj) -> ErrorList:
    if (a.get("bindTimeoutSeconds") or 0) < 0:
        return [
            field.invalid(
                path.child("bindTimeoutSeconds"),
                a["bindTimeoutSeconds"],
                "invalid BindTimeoutSeconds, should not be a negative value",
            )
        ]
    return []


ARGS_VALIDATORS = {
    "DefaultPreemption": _default_preemption,
    "InterPodAffinity": _inter_pod_affinity,
    "NodeAffinity": _node_affinity,
    "NodeResourcesBalancedAllocation": _balanced_allocation,
    "NodeResourcesFit": _node_resources_fit,
    "PodTopologySpread": _pod_topology_spread,
    "VolumeBinding": _volume_binding,
    "DynamicResources": _dynamic_resources,
}
