"""Which nodes a pod may use: taints against tolerations, node selector requirements and terms.

kube's ``k8s.io/component-helpers/scheduling/corev1`` (``ToleratesTaint``,
``FindMatchingUntoleratedTaint``, ``nodeaffinity``'s requirement and term matching), as pure
functions over wire-format dicts. The scheduler's plugins (TaintToleration, NodeUnschedulable,
NodeAffinity, PodTopologySpread's node inclusion) and the DaemonSet controller
(``NodeShouldRunDaemonPod``) both apply these rules, as kube's do from one package; they live
here, below both, because neither component may import the other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from apiserver.api.types import Obj

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
OBJECT_NAME_FIELD = "metadata.name"


# --- taints and tolerations ----------------------------------------------------------------------


def tolerates(toleration: Obj, taint: Obj) -> bool:
    """``Toleration.ToleratesTaint``: empty effect/key match any; operator Equal (default) or Exists."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return op == "Exists"


def tolerations_tolerate_taint(tolerations: Iterable[Obj], taint: Obj) -> bool:
    """``TolerationsTolerateTaint``: some toleration tolerates ``taint``."""
    return any(tolerates(t, taint) for t in tolerations)


def do_not_schedule_taints(taint: Obj) -> bool:
    """The taints Filter cares about: NoSchedule and NoExecute (PreferNoSchedule only scores)."""
    return taint.get("effect") in (NO_SCHEDULE, NO_EXECUTE)


def find_untolerated_taint(
    taints: Iterable[Obj],
    tolerations: list[Obj],
    taint_filter: Callable[[Obj], bool] = do_not_schedule_taints,
) -> Obj | None:
    """The first taint passing ``taint_filter`` that no toleration tolerates, or ``None``."""
    for taint in taints:
        if taint_filter(taint) and not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


# --- node selectors and node affinity ------------------------------------------------------------


def _int64(s: str) -> int | None:
    """``strconv.ParseInt(s, 10, 64)``: None when ``s`` is not a base-10 64-bit integer."""
    try:
        v = int(s, 10)
    except (TypeError, ValueError):
        return None
    return v if -(2**63) <= v < 2**63 else None


def requirement_matches(req: Obj, value: str | None) -> bool:
    """One ``NodeSelectorRequirement`` against a label (or field) value; ``None`` = absent."""
    op = req.get("operator")
    values = req.get("values") or []
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt"):
        if value is None or len(values) != 1:
            return False
        have, want = _int64(value), _int64(values[0])
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want
    return False


def is_empty_term(term: Obj) -> bool:
    """A term with neither expressions nor fields (it matches no node)."""
    return not term.get("matchExpressions") and not term.get("matchFields")


def node_selector_term_matches(term: Obj, labels: Mapping[str, str], node_name: str) -> bool:
    """All expressions and all fields of one term (an empty term matches nothing)."""
    if is_empty_term(term):
        return False
    for req in term.get("matchExpressions") or []:
        if not requirement_matches(req, labels.get(req.get("key", ""))):
            return False
    for req in term.get("matchFields") or []:
        if req.get("key") != OBJECT_NAME_FIELD:
            return False
        if not requirement_matches(req, node_name):
            return False
    return True


def node_selector_matches(selector: Obj, labels: Mapping[str, str], node_name: str) -> bool:
    """A ``NodeSelector``: terms are ORed; empty terms are ignored; no usable term matches nothing."""
    return any(
        node_selector_term_matches(t, labels, node_name)
        for t in selector.get("nodeSelectorTerms") or []
        if not is_empty_term(t)
    )
