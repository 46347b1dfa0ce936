"""Lifecycle stages as data: the parsed, validated form of one ``match → delay → apply`` stage.

This is the schema both the shipped defaults (``lifecycle.yaml``) and users' ``--stages`` files
use for stages that *drive* the node agent (as opposed to the steering stages of
:mod:`.userstages`, which only say what a pod's containers do)::

    - name: pod-ready
      resourceRef: {kind: Pod}            # Pod, Node or Lease (a node's Lease, renewed by its kubelet)
      selector:
        matchLabels: {app: web}           # optional
        matchAnnotations: {}              # optional
        matchExpressions:                 # fields of the object, as KWOK's (key is a path)
        - {key: .metadata.deletionTimestamp, operator: DoesNotExist}
        - {key: .status.conditions[type=Ready].status, operator: NotIn, values: ["True"]}
        when: [node-known, "!flag:killed"] # the agent's memory / kubelet rules, by name
      delay:                              # or a plain duration: "3s"
        duration: 2s                      # fixed; or from: ready-delay (a kubelet rule) or option: NAME
        jitter: 1s                        # optional: + a fixed fraction of it per object (uid-seeded)
        anchor: started                   # what the delay counts from (default: when the stage began to match)
        scaled: true                      # × the agent's time scale (false: a real rate, heartbeats)
      weight: 0                           # ties between stages due at once: heavier first, then file order
      next:
        effect: ready                     # a kubelet-shaped outcome computed in code (see stages.*_EFFECTS)
        statusTemplate: {...}             # merged into .status (conditions by type, containerStatuses by name)
        event: {type: Normal, reason: Foo, message: "..."}   # or events: [...]
        finalizers: {add: [...], remove: [...]}
        delete: true

A stage with only data outcomes (``statusTemplate``/``event``/``finalizers``/``delete``) runs once per
object (per pod uid, per node); an ``effect`` stage runs whenever it matches and is due, and must
stop matching by what it does (as every default stage does). Strings in ``statusTemplate`` and event
messages may use ``$(now)``, ``$(name)``, ``$(namespace)``, ``$(nodeName)``, ``$(podIP)``, ``$(hostIP)``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from controllers.nodeagent.pod_annotations import parse_duration
from controllers.nodeagent.stages import (
    NODE_ANCHORS,
    NODE_DELAYS,
    NODE_EFFECTS,
    NODE_PREDICATES,
    POD_ANCHORS,
    POD_DELAYS,
    POD_EFFECTS,
    POD_PREDICATES,
    AgentOptions,
)

LIFECYCLE_NEXT = frozenset({"effect", "statusTemplate", "event", "events", "delete", "finalizers"})
_DELAY_KEYS = frozenset({"duration", "from", "option", "jitter", "anchor", "scaled"})
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_OPTIONS = frozenset(
    f for f, v in AgentOptions.__dataclass_fields__.items() if v.type in ("float", "float | None", "int")
)
_SEGMENT = re.compile(r"^([A-Za-z0-9_-]+)(?:\[([A-Za-z0-9_.-]+)=([^\]]*)\])?$")

#: for each kind: (predicates, delays, anchors, effects) a stage may name
REGISTRIES: dict[str, tuple[Mapping[str, Any], Mapping[str, Any], Mapping[str, str], Mapping[str, Any]]] = {
    "Pod": (POD_PREDICATES, POD_DELAYS, POD_ANCHORS, POD_EFFECTS),
    "Node": (NODE_PREDICATES, NODE_DELAYS, NODE_ANCHORS, NODE_EFFECTS),
    "Lease": (NODE_PREDICATES, NODE_DELAYS, NODE_ANCHORS, NODE_EFFECTS),
}


class StageError(ValueError):
    """A stage file gangplane cannot read; the message names the field."""


SpecError = StageError


def str_map(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise StageError(f"{where}: must be a mapping of strings")
    return tuple((str(k), str(v)) for k, v in value.items())


@dataclass(frozen=True)
class Expression:
    """``key`` as a path of (field, list-filter) steps; absent fields read as ``""`` for In/NotIn."""

    path: tuple[tuple[str, str, str], ...]
    operator: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class EventSpec:
    type: str
    reason: str
    message: str


@dataclass(frozen=True)
class LifecycleStage:
    name: str
    kind: str
    match_labels: tuple[tuple[str, str], ...] = ()
    match_annotations: tuple[tuple[str, str], ...] = ()
    expressions: tuple[Expression, ...] = ()
    #: (name, wanted truth) of the named predicates / ``flag:X``
    when: tuple[tuple[str, bool], ...] = ()
    duration: float = 0.0
    delay_from: str = ""
    delay_option: str = ""
    jitter: float = 0.0
    #: a record field name, or "" for "since the stage began to match"
    anchor: str = ""
    scaled: bool = True
    weight: int = 0
    effect: str = ""
    status_template: Mapping[str, Any] | None = None
    events: tuple[EventSpec, ...] = ()
    finalizers_add: tuple[str, ...] = ()
    finalizers_remove: tuple[str, ...] = ()
    delete: bool = False

    @property
    def one_shot(self) -> bool:
        """Data-only stages cannot tell by themselves that they already ran: they run once."""
        return not self.effect


def _seconds(value: Any, where: str) -> float:
    if value is None:
        return 0.0
    if isinstance(value, int | float) and not isinstance(value, bool):
        if value < 0:
            raise SpecError(f"{where}: must not be negative")
        return float(value)
    try:
        return parse_duration(str(value))
    except ValueError as e:
        raise SpecError(f"{where}: {e}") from None


def parse_path(key: Any, where: str) -> tuple[tuple[str, str, str], ...]:
    """``.status.conditions[type=Ready].status`` → (("status","",""), ("conditions","type","Ready"), ...)."""
    if not isinstance(key, str) or not key.startswith(".") or len(key) < 2:
        raise SpecError(f'{where}: must be a field path such as ".status.phase"')
    out = []
    # split on dots outside brackets
    for seg in re.findall(r"[^.\[]+(?:\[[^\]]*\])?", key[1:]):
        m = _SEGMENT.match(seg)
        if m is None:
            raise SpecError(f"{where}: cannot read path segment {seg!r}")
        out.append((m.group(1), m.group(2) or "", m.group(3) or ""))
    return tuple(out)


def _expressions(raw: Any, where: str) -> tuple[Expression, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise SpecError(f"{where}: must be a list")
    out = []
    for i, e in enumerate(raw):
        w = f"{where}[{i}]"
        if not isinstance(e, Mapping) or set(e) - {"key", "operator", "values"}:
            raise SpecError(f"{w}: allowed fields are key, operator, values")
        op = e.get("operator")
        if op not in _OPERATORS:
            raise SpecError(f"{w}.operator: must be one of {', '.join(_OPERATORS)}, got {op!r}")
        values = e.get("values") or []
        if not isinstance(values, list):
            raise SpecError(f"{w}.values: must be a list of strings")
        if op in ("In", "NotIn") and not values:
            raise SpecError(f"{w}.values: required for {op}")
        if op in ("Exists", "DoesNotExist") and values:
            raise SpecError(f"{w}.values: must be empty for {op}")
        out.append(Expression(parse_path(e.get("key"), f"{w}.key"), op, tuple(str(v) for v in values)))
    return tuple(out)


def _when(raw: Any, kind: str, where: str) -> tuple[tuple[str, bool], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise SpecError(f"{where}: must be a list of names")
    preds = REGISTRIES[kind][0]
    out = []
    for i, name in enumerate(raw):
        want = not name.startswith("!")
        bare = name.lstrip("!")
        if not (bare in preds or (kind == "Pod" and bare.startswith("flag:") and len(bare) > 5)):
            raise SpecError(f"{where}[{i}]: unknown condition {bare!r}; known: {', '.join(sorted(preds))}")
        out.append((bare, want))
    return tuple(out)


def _event(raw: Any, where: str) -> EventSpec:
    if not isinstance(raw, Mapping) or set(raw) - {"type", "reason", "message"} or not raw.get("reason"):
        raise SpecError(f"{where}: must be {{type: Normal|Warning, reason, message}}")
    etype = raw.get("type", "Normal")
    if etype not in ("Normal", "Warning"):
        raise SpecError(f'{where}.type: must be "Normal" or "Warning"')
    return EventSpec(etype, str(raw["reason"]), str(raw.get("message", "")))


def _names(raw: Any, where: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(x, str) and x for x in raw):
        raise SpecError(f"{where}: must be a list of finalizer names")
    return tuple(raw)


def parse_lifecycle_stage(raw: Mapping[str, Any], name: str, kind: str, where: str) -> LifecycleStage:
    """One stage whose ``next`` drives the agent (``effect``, ``statusTemplate``, ``event``…)."""
    preds, delays, anchors, effects = REGISTRIES[kind]
    sel = raw.get("selector") or {}
    delay = raw.get("delay")
    fields: dict[str, Any] = {}
    if isinstance(delay, Mapping):
        unknown = sorted(set(delay) - _DELAY_KEYS)
        if unknown:
            raise SpecError(f"{where}.delay: unknown field(s) {', '.join(unknown)}")
        if sum(k in delay for k in ("duration", "from", "option")) > 1:
            raise SpecError(f"{where}.delay: give one of duration, from, option")
        fields["duration"] = _seconds(delay.get("duration"), f"{where}.delay.duration")
        frm = delay.get("from")
        if frm is not None and frm not in delays:
            raise SpecError(f"{where}.delay.from: unknown {frm!r}; known: {', '.join(sorted(delays))}")
        fields["delay_from"] = frm or ""
        opt = delay.get("option")
        if opt is not None and opt not in _OPTIONS:
            raise SpecError(f"{where}.delay.option: unknown {opt!r}; known: {', '.join(sorted(_OPTIONS))}")
        fields["delay_option"] = opt or ""
        fields["jitter"] = _seconds(delay.get("jitter"), f"{where}.delay.jitter")
        anchor = delay.get("anchor")
        if anchor is not None and anchor not in anchors and anchor != "matched":
            raise SpecError(
                f"{where}.delay.anchor: unknown {anchor!r}; known: matched, {', '.join(sorted(anchors))}"
            )
        fields["anchor"] = "" if anchor in (None, "matched") else anchors[anchor]
        scaled = delay.get("scaled", True)
        if not isinstance(scaled, bool):
            raise SpecError(f"{where}.delay.scaled: must be true or false")
        fields["scaled"] = scaled
    else:
        fields["duration"] = _seconds(delay, f"{where}.delay")
    weight = raw.get("weight", 0)
    if not isinstance(weight, int) or isinstance(weight, bool):
        raise SpecError(f"{where}.weight: must be an integer")
    nxt = raw["next"]
    unknown = sorted(set(nxt) - LIFECYCLE_NEXT)
    if unknown:
        raise SpecError(f"{where}.next: unknown field(s) {', '.join(unknown)}")
    effect = nxt.get("effect")
    if effect is not None and effect not in effects:
        raise SpecError(f"{where}.next.effect: unknown {effect!r}; known: {', '.join(sorted(effects))}")
    template = nxt.get("statusTemplate")
    if template is not None and not isinstance(template, Mapping):
        raise SpecError(f"{where}.next.statusTemplate: must be a mapping (the status fields to set)")
    events_raw = nxt.get("events") or ([nxt["event"]] if "event" in nxt else [])
    if not isinstance(events_raw, list):
        raise SpecError(f"{where}.next.events: must be a list")
    events = tuple(_event(e, f"{where}.next.events[{i}]") for i, e in enumerate(events_raw))
    fin = nxt.get("finalizers") or {}
    if not isinstance(fin, Mapping) or set(fin) - {"add", "remove"}:
        raise SpecError(f"{where}.next.finalizers: must be {{add: [...], remove: [...]}}")
    delete = nxt.get("delete", False)
    if not isinstance(delete, bool):
        raise SpecError(f"{where}.next.delete: must be true or false")
    if kind == "Lease" and (template or events or fin or delete):
        raise SpecError(f"{where}.next: a Lease stage's next is an effect")
    if effect is None and not (template or events or fin or delete):
        raise SpecError(f"{where}.next: nothing to do")
    return LifecycleStage(
        name=name,
        kind=kind,
        match_labels=str_map(sel.get("matchLabels"), f"{where}.selector.matchLabels"),
        match_annotations=str_map(sel.get("matchAnnotations"), f"{where}.selector.matchAnnotations"),
        expressions=_expressions(sel.get("matchExpressions"), f"{where}.selector.matchExpressions"),
        when=_when(sel.get("when"), kind, f"{where}.selector.when"),
        weight=weight,
        effect=effect or "",
        status_template=template,
        events=events,
        finalizers_add=_names(fin.get("add"), f"{where}.next.finalizers.add"),
        finalizers_remove=_names(fin.get("remove"), f"{where}.next.finalizers.remove"),
        delete=delete,
        **fields,
    )


__all__ = [
    "LIFECYCLE_NEXT",
    "EventSpec",
    "Expression",
    "LifecycleStage",
    "SpecError",
    "StageError",
    "parse_lifecycle_stage",
    "str_map",
]
