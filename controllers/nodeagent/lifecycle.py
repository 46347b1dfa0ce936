"""The node agent's lifecycle, compiled from data: the shipped ``lifecycle.yaml`` plus user stages.

:mod:`.stagespec` parses a stage; this module turns it into the :class:`.stages.Stage` the agent
evaluates (``match``/``delay``/``anchor``/``apply`` closures built once, so a sync costs a few
dictionary lookups per stage, as the hand-written stages did). The defaults are read with the
very loader users' ``--stages`` files go through (:func:`.userstages.parse_stages`); a user file
with ``replaceDefaults: true`` replaces them, otherwise its stages run beside them (after them in
tie order).
"""

from __future__ import annotations

import operator
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from apiserver.api.types import Obj
from apiserver.meta import rfc3339
from controllers.nodeagent.stages import Action, Event, NodeContext, PodContext, Stage
from controllers.nodeagent.stagespec import REGISTRIES, Expression, LifecycleStage, StageError
from controllers.nodeagent.userstages import UserStages, parse_stages

DEFAULTS_FILE = "lifecycle.yaml"
_MISSING = object()
_LIST_KEYS = {"conditions": "type", "containerStatuses": "name", "initContainerStatuses": "name"}


@dataclass(frozen=True)
class Lifecycle:
    """The compiled stages the agent evaluates, per kind.

    ``pods_live`` / ``pods_deleting``: the pod stages, in order, that can match a pod without /
    with ``metadata.deletionTimestamp`` (a stage whose selector requires the other case is left
    out). A deletion is never undone, so the agent evaluates only the stages of the pod's case:
    the shipped exits for deleting pods are skipped for every live pod, and the lifecycle for
    every deleting one, with the same result as evaluating them all (empty: ``pods``).
    """

    pods: tuple[Stage[PodContext], ...]
    nodes: tuple[Stage[NodeContext], ...]
    leases: tuple[Stage[NodeContext], ...]
    pods_live: tuple[Stage[PodContext], ...] = ()
    pods_deleting: tuple[Stage[PodContext], ...] = ()

    def pod_stages(self, deleting: bool) -> tuple[Stage[PodContext], ...]:
        """The pod stages that can match a pod that is (not) being deleted."""
        return (self.pods_deleting if deleting else self.pods_live) or self.pods


# ============================================================================ selectors


def field_value(obj: Any, path: tuple[tuple[str, str, str], ...]) -> Any:
    """The value at ``path`` (list steps pick the first item whose ``k`` equals ``v``), or _MISSING."""
    cur = obj
    for name, key, want in path:
        if not isinstance(cur, Mapping):
            return _MISSING
        cur = cur.get(name)
        if cur is None:
            return _MISSING
        if key:
            if not isinstance(cur, list):
                return _MISSING
            cur = next((x for x in cur if isinstance(x, Mapping) and _key_is(x.get(key), want)), None)
            if cur is None:
                return _MISSING
    return cur


def _key_is(v: Any, want: str) -> bool:
    """A list item's key matches ``[key=want]`` (non-string keys compared as text)."""
    return v == want or (v is not None and not isinstance(v, str) and _scalar(v) == want)


def _inline_scalar(v: Any) -> str:
    """A field's value as In/NotIn compare it: absent (None) reads as ""."""
    if v is None:
        return ""
    return v if isinstance(v, str) else _scalar(v)


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _getter(path: tuple[tuple[str, str, str], ...]) -> Callable[[Obj], Any]:
    """A reader of ``path``; plain two-field paths (``.metadata.deletionTimestamp``, the common
    case) get a dedicated closure, since every stage evaluation runs them."""
    if len(path) == 2 and not path[0][1] and not path[1][1]:
        a, b = path[0][0], path[1][0]

        def two(o: Obj) -> Any:
            inner = o.get(a)
            if not isinstance(inner, Mapping):
                return _MISSING
            v = inner.get(b)
            return _MISSING if v is None else v

        return two
    if len(path) == 3 and not path[0][1] and path[1][1] and not path[2][1]:
        # .status.conditions[type=Ready].status: the shape of every condition test
        top, lst, key, want, leaf = path[0][0], path[1][0], path[1][1], path[1][2], path[2][0]

        def item_field(o: Obj) -> Any:
            inner = o.get(top)
            items = inner.get(lst) if isinstance(inner, Mapping) else None
            if not isinstance(items, list):
                return _MISSING
            for x in items:
                if isinstance(x, Mapping) and _key_is(x.get(key), want):
                    v = x.get(leaf)
                    return _MISSING if v is None else v
            return _MISSING

        return item_field
    return lambda o: field_value(o, path)


def expression_check(e: Expression) -> Callable[[Obj], bool]:
    get, values = _getter(e.path), frozenset(e.values)
    if e.operator == "Exists":
        return lambda o: get(o) is not _MISSING
    if e.operator == "DoesNotExist":
        return lambda o: get(o) is _MISSING
    inside = e.operator == "In"

    def check(o: Obj) -> bool:
        v = get(o)
        return ((_scalar(v) if v is not _MISSING else "") in values) is inside

    return check


def _meta_match(pairs: tuple[tuple[str, str], ...], field: str) -> Callable[[Obj], bool]:
    def check(o: Obj) -> bool:
        got = (o.get("metadata") or {}).get(field) or {}
        return all(got.get(k) == v for k, v in pairs)

    return check


def _memory(c: Any) -> Any:
    return c.record if isinstance(c, PodContext) else c.state


# ============================================================================ compile


def compile_stage(spec: LifecycleStage) -> Stage[Any]:
    """``spec`` as a :class:`Stage`: object checks (labels, annotations, expressions: cheap field reads)
    first, then the ``when`` conditions in the order written, then the one-shot guard."""
    preds, delays, _anchors, effects = REGISTRIES[spec.kind]
    pod = spec.kind == "Pod"
    match = _compile_match(spec, preds, pod)

    delay = _jittered(spec, _delay(spec, delays), pod)
    timed = bool(spec.duration or spec.delay_from or spec.delay_option or spec.jitter)
    if spec.anchor:
        anchor = _field_anchor(spec.anchor, pod)
    elif timed:
        match, anchor = _since_matched(spec.name, match)
    else:
        anchor = _now_anchor
    apply = _apply(spec, effects.get(spec.effect) if spec.effect else None)
    return Stage(spec.name, match, apply, delay, anchor, scaled=spec.scaled, weight=spec.weight)


#: conditions cheap enough to write inline (reads of the context) rather than call; they are
#: tested first, so a stage that cannot match is usually turned down by attribute reads alone
#: (``PodContext`` reads the pod's phase and containers' state once per evaluation). Each reads
#: exactly as the predicate of the same name in ``stages.POD_PREDICATES``.
_INLINE = {
    ("Pod", "node-known"): "c.node is not None",
    ("Pod", "node-gone"): "c.node is None",
    ("Pod", "admitted"): "c.record.admitted",
    ("Pod", "claims-ready"): "c.claims_ready",
    ("Pod", "container-running"): "c.containers_state == 'running'",
    ("Pod", "container-waiting"): "c.containers_state == 'waiting'",
    ("Pod", "no-container-status"): "not c.containers_state",
    ("Pod", "containers-started"): (
        "c.record.admitted and c.phase not in ('Succeeded', 'Failed')"
        " and c.containers_state in ('running', 'waiting')"
    ),
    ("Pod", "unstarted"): (
        "not c.record.admitted or c.phase in ('Succeeded', 'Failed') or not c.containers_state"
    ),
}


def _compile_match(spec: LifecycleStage, preds: Mapping[str, Any], pod: bool) -> Callable[[Any], bool]:
    """One generated function ``c -> bool`` testing every check of ``spec`` with ``and``: the
    defaults' selectors cost what the hand-written matches did (no closure call per check).

    Order: inline ``when`` conditions, flags and plain-path expressions (attribute and dict
    reads), then other field paths, then the remaining ``when`` conditions as written, then labels/annotations, then the
    one-shot guard. Only names and repr()'d strings
    from the validated spec enter the source."""
    env: dict[str, Any] = {"_E": {}, "_sc": _inline_scalar}
    obj = "c.pod" if pod else "c.node"
    mem = "c.record" if pod else "c.state"
    first: list[str] = []
    inline: list[str] = []
    paths: list[str] = []
    calls: list[str] = []
    for i, e in enumerate(spec.expressions):
        plain = len(e.path) == 2 and not e.path[0][1] and not e.path[1][1]
        if plain and e.operator in ("Exists", "DoesNotExist"):
            a, b = e.path[0][0], e.path[1][0]
            op = "is not" if e.operator == "Exists" else "is"
            inline.append(f"({obj}.get({a!r}) or _E).get({b!r}) {op} None")
        elif plain:
            a, b = e.path[0][0], e.path[1][0]
            env[f"_v{i}"] = frozenset(e.values)
            op = "in" if e.operator == "In" else "not in"
            inline.append(f"_sc(({obj}.get({a!r}) or _E).get({b!r})) {op} _v{i}")
        else:
            env[f"_x{i}"] = expression_check(e)
            paths.append(f"_x{i}({obj})")
    for i, (name, want) in enumerate(spec.when):
        neg = "" if want else "not "
        if name.startswith("flag:"):
            inline.insert(0, f"{name[5:]!r} {neg}in c.record.flags")
        elif (spec.kind, name) in _INLINE:
            first.append(f"{neg}({_INLINE[(spec.kind, name)]})")
        else:
            env[f"_p{i}"] = preds[name]
            calls.append(f"{neg}_p{i}(c)")
    if spec.match_labels:
        env["_labels"] = _meta_match(spec.match_labels, "labels")
        calls.append(f"_labels({obj})")
    if spec.match_annotations:
        env["_annotations"] = _meta_match(spec.match_annotations, "annotations")
        calls.append(f"_annotations({obj})")
    if spec.one_shot:
        calls.append(f"{spec.name!r} not in {mem}.fired")
    terms = first + inline + paths + calls
    body = " and ".join(f"({t})" for t in terms) if terms else "True"
    exec(f"def match(c):\n    return {body}\n", env)  # noqa: S102 - source built from the checked spec above
    return env["match"]  # type: ignore[no-any-return]


def _now_anchor(_c: Any) -> float | None:
    return None


def _field_anchor(field: str, pod: bool) -> Callable[[Any], float | None]:
    return operator.attrgetter(f"record.{field}" if pod else f"state.{field}")


def _since_matched(
    name: str, inner: Callable[[Any], bool]
) -> tuple[Callable[[Any], bool], Callable[[Any], float | None]]:
    """KWOK's reading of a delay: counted from when the stage began to match the object (the
    agent remembers it per object, and forgets it once the stage stops matching)."""

    def match(c: Any) -> bool:
        if inner(c):
            return True
        since = _memory(c).since
        if since:
            since.pop(name, None)
        return False

    def anchor(c: Any) -> float | None:
        mem = _memory(c)
        if mem.since is None:
            mem.since = {}
        return mem.since.setdefault(name, c.mono)  # type: ignore[no-any-return]

    return match, anchor


def _jittered(spec: LifecycleStage, base: Callable[[Any], float], pod: bool) -> Callable[[Any], float]:
    """``base`` plus a fixed fraction of the jitter per object (seeded by its uid): stable across
    re-evaluations, so a waiting stage's deadline does not move each time the object changes."""
    if not spec.jitter:
        return base
    jitter, name = spec.jitter, spec.name

    def delay(c: Any) -> float:
        obj = c.pod if pod else c.node
        seed = f"{name}/{(obj.get('metadata') or {}).get('uid', '')}".encode()
        return base(c) + jitter * (zlib.crc32(seed) / 2**32)

    return delay


def _delay(spec: LifecycleStage, delays: Mapping[str, Any]) -> Callable[[Any], float]:
    if spec.delay_from:
        return delays[spec.delay_from]  # type: ignore[no-any-return]
    if spec.delay_option:
        opt = spec.delay_option
        return lambda c: float(getattr(c.options, opt) or 0.0)
    fixed = spec.duration
    return lambda _c: fixed


def _apply(spec: LifecycleStage, effect: Callable[[Any], Action] | None) -> Callable[[Any], Action]:
    """The effect alone when the stage has no data outcome (the defaults' hot path), else both."""
    data = bool(spec.status_template or spec.events or spec.finalizers_add or spec.finalizers_remove)
    if effect is not None and not data and not spec.delete:
        return effect
    pod = spec.kind == "Pod"

    def apply(c: Any) -> Action:
        action = effect(c) if effect is not None else Action()
        obj = c.pod if pod else c.node
        env = _variables(c, obj, pod)
        if spec.status_template:
            current = action.status if action.status is not None else (obj.get("status") or {})
            action.status = merge_status(current, spec.status_template, env, c.now)
        for ev in spec.events:
            action.events.append(Event(ev.type, ev.reason, _subst(ev.message, env)))
        if spec.finalizers_add or spec.finalizers_remove:
            action.finalizers = (spec.finalizers_add, spec.finalizers_remove)
        if spec.delete:
            action.delete = True
            if pod:
                action.release = True
                action.flags = (*action.flags, "deleted")
        if spec.one_shot:
            action.fired = spec.name
        return action

    return apply


# ============================================================================ templates


def _variables(c: Any, obj: Obj, pod: bool) -> dict[str, str]:
    md = obj.get("metadata") or {}
    env = {"now": rfc3339(c.now), "name": md.get("name", ""), "namespace": md.get("namespace", "")}
    if pod:
        env["nodeName"] = (obj.get("spec") or {}).get("nodeName", "")
        env["podIP"] = c.record.pod_ip or (obj.get("status") or {}).get("podIP", "")
        env["hostIP"] = c.node.internal_ip if c.node is not None else ""
    else:
        env["nodeName"] = md.get("name", "")
        env["hostIP"] = c.state.internal_ip
        env["podIP"] = ""
    return env


def _subst(value: Any, env: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        if "$(" not in value:
            return value
        for k, v in env.items():
            value = value.replace(f"$({k})", v)
        return value
    if isinstance(value, Mapping):
        return {k: _subst(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [_subst(v, env) for v in value]
    return value


def merge_status(status: Obj, template: Mapping[str, Any], env: Mapping[str, str], now: float) -> Obj:
    """``status`` with ``template`` merged in: maps recursively, ``conditions`` by type and container
    statuses by name (kube's strategic-merge keys); a condition whose status changes gets
    ``lastTransitionTime`` now unless the template sets it."""
    out = dict(status)
    for key, raw in template.items():
        value = _subst(raw, env)
        mkey = _LIST_KEYS.get(key)
        if mkey and isinstance(value, list) and isinstance(out.get(key) or [], list):
            items = [dict(x) for x in out.get(key) or []]
            for patch in value:
                if not isinstance(patch, Mapping):
                    continue
                prev = next((x for x in items if x.get(mkey) == patch.get(mkey)), None)
                changed = prev is None or prev.get("status") != patch.get("status")
                if key == "conditions" and "lastTransitionTime" not in patch and changed:
                    patch = {**patch, "lastTransitionTime": rfc3339(now)}
                if prev is None:
                    items.append(dict(patch))
                else:
                    prev.update(patch)
            out[key] = items
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge_status(out[key], value, env, now)
        else:
            out[key] = value
    return out


# ============================================================================ assembly


_DELETION_TIMESTAMP = (("metadata", "", ""), ("deletionTimestamp", "", ""))


def _deletion_case(spec: LifecycleStage) -> bool | None:
    """True: the stage matches deleting pods only; False: live pods only; None: either (its
    selector says nothing of ``.metadata.deletionTimestamp`` but Exists / DoesNotExist)."""
    for e in spec.expressions:
        if e.path == _DELETION_TIMESTAMP and e.operator in ("Exists", "DoesNotExist"):
            return e.operator == "Exists"
    return None


def compile_lifecycle(stages: tuple[LifecycleStage, ...]) -> Lifecycle:
    compiled = [(s, compile_stage(s)) for s in stages]
    pods = [(_deletion_case(s), st) for s, st in compiled if s.kind == "Pod"]
    return Lifecycle(
        tuple(st for _, st in pods),
        tuple(st for s, st in compiled if s.kind == "Node"),
        tuple(st for s, st in compiled if s.kind == "Lease"),
        pods_live=tuple(st for case, st in pods if case is not True),
        pods_deleting=tuple(st for case, st in pods if case is not False),
    )


@cache
def default_stages() -> UserStages:
    """The shipped ``lifecycle.yaml``, read by the loader users' stage files go through."""
    text = resources.files("controllers.nodeagent").joinpath(DEFAULTS_FILE).read_text()
    return parse_stages(yaml.safe_load(text), DEFAULTS_FILE)


@cache
def default_lifecycle() -> Lifecycle:
    return compile_lifecycle(default_stages().lifecycle)


def lifecycle_for(user: UserStages) -> Lifecycle:
    """The defaults, replaced by or followed by the user's lifecycle stages."""
    if not user.lifecycle and not user.replace_defaults:
        return default_lifecycle()
    base = () if user.replace_defaults else default_stages().lifecycle
    shipped = {s.name for s in base}
    for s in user.lifecycle:
        if s.name in shipped:
            raise StageError(
                f"stage {s.name!r}: a shipped stage has this name; rename it, or set replaceDefaults: true"
            )
    return compile_lifecycle((*base, *user.lifecycle))


__all__ = [
    "Lifecycle",
    "compile_lifecycle",
    "compile_stage",
    "default_lifecycle",
    "default_stages",
    "field_value",
    "lifecycle_for",
    "merge_status",
]
