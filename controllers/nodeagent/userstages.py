"""Lifecycles as data: user stages (match → delay → apply) for the node agent, in KWOK's spirit.

A stage file is YAML: a list of stages, or a document with a ``stages`` list (``gangplane serve
--stages FILE``, the fleet file's ``stages:``, the pytest plugin's ``stages=`` marker option)::

    stages:
    - name: slow-web                 # pods labelled app=web: Ready 3 s after start, fail at 20 s
      resourceRef: {kind: Pod}
      selector:
        matchLabels: {app: web}
        matchAnnotations: {}         # optional, like matchLabels
      delay: 3s                      # Go duration, simulated seconds (× the agent's time scale)
      next: {ready: true}
    - name: web-dies
      resourceRef: {kind: Pod}
      selector: {matchLabels: {app: web}}
      delay: 20s
      next: {phase: Failed}          # or Succeeded; {crash: true}; {ready: false} (never Ready)
    - name: rack-2-down              # nodes labelled rack-2 go NotReady 10 s after registration
      resourceRef: {kind: Node}
      selector: {matchLabels: {topology.kubernetes.io/rack: rack-2}}
      delay: 10s
      next: {fault: not-ready}       # or unreachable (see node_annotations)

A pod stage tells the agent what the pod's containers do, exactly as the per-pod annotations of
:mod:`.pod_annotations` would (``ready`` → ``ready-after``; ``phase`` → ``complete-after`` with
``fail``; ``crash``; ``ready: false`` → ``never-ready``); annotations the pod sets itself win,
and among stages the later one wins. A node stage applies a :mod:`.node_annotations` fault once
its delay has passed since the agent first saw the node; the node's own annotation wins.

Stages whose ``next`` *drives* the agent (``effect``, ``statusTemplate``, ``event``, ``finalizers``,
``delete``) are parsed by :mod:`.stagespec` and compiled by :mod:`.lifecycle`; the agent's shipped
lifecycle (``lifecycle.yaml``) is such a file, read by this same :func:`parse_stages`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from controllers.nodeagent import pod_annotations as ann
from controllers.nodeagent.node_annotations import FAULTS
from controllers.nodeagent.pod_annotations import parse_duration
from controllers.nodeagent.stagespec import LIFECYCLE_NEXT, LifecycleStage, StageError, parse_lifecycle_stage
from controllers.nodeagent.stagespec import str_map as _str_map

KINDS = ("Pod", "Node")
LIFECYCLE_KINDS = ("Pod", "Node", "Lease")
_STAGE_KEYS = frozenset({"name", "resourceRef", "selector", "delay", "next", "weight"})
_SELECTOR_KEYS = frozenset({"matchLabels", "matchAnnotations"})
_LIFECYCLE_SELECTOR_KEYS = frozenset({"matchLabels", "matchAnnotations", "matchExpressions", "when"})
#: the switch that makes a stage file's lifecycle stages replace the shipped defaults
REPLACE_KEY = "replaceDefaults"
_POD_NEXT = frozenset({"ready", "phase", "crash"})
_NODE_NEXT = frozenset({"fault"})


@dataclass(frozen=True)
class UserStage:
    name: str
    kind: str
    match_labels: tuple[tuple[str, str], ...] = ()
    match_annotations: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    #: pod stages: the annotations the stage stands for; node stages: the fault
    annotations: tuple[tuple[str, str], ...] = ()
    fault: str = ""

    def matches(self, obj: Mapping[str, Any]) -> bool:
        md = obj.get("metadata") or {}
        labels, annotations = md.get("labels") or {}, md.get("annotations") or {}
        return all(labels.get(k) == v for k, v in self.match_labels) and all(
            annotations.get(k) == v for k, v in self.match_annotations
        )


@dataclass(frozen=True)
class UserStages:
    """Steering stages (``stages``) plus stages that drive the agent (``lifecycle``); with
    ``replace_defaults`` the latter are the whole lifecycle, else they run beside the shipped one."""

    stages: tuple[UserStage, ...] = field(default_factory=tuple)
    lifecycle: tuple[LifecycleStage, ...] = ()
    replace_defaults: bool = False

    def __bool__(self) -> bool:
        """True when steering stages exist (the agent's per-pod annotation merge is skipped otherwise)."""
        return bool(self.stages)

    def pod_annotations(self, pod: Mapping[str, Any]) -> dict[str, str]:
        """The annotations the matching pod stages add (the pod's own are not included)."""
        out: dict[str, str] = {}
        for s in self.stages:
            if s.kind == "Pod" and s.matches(pod):
                out.update(dict(s.annotations))
        return out

    def node_faults(self, node: Mapping[str, Any]) -> list[tuple[float, str]]:
        """(delay, fault) of the matching node stages, in file order."""
        return [(s.delay, s.fault) for s in self.stages if s.kind == "Node" and s.matches(node)]


def with_stage_annotations(pod: dict[str, Any], stages: UserStages) -> dict[str, Any]:
    """``pod`` as the agent should read it: stage annotations under the pod's own."""
    extra = stages.pod_annotations(pod) if stages else {}
    if not extra:
        return pod
    md = dict(pod.get("metadata") or {})
    md["annotations"] = {**extra, **(md.get("annotations") or {})}
    return {**pod, "metadata": md}


def _seconds(value: Any, where: str) -> float:
    if value is None:
        return 0.0
    if isinstance(value, int | float) and not isinstance(value, bool):
        if value < 0:
            raise StageError(f"{where}: must not be negative")
        return float(value)
    try:
        return parse_duration(str(value))
    except ValueError as e:
        raise StageError(f"{where}: {e}") from None


def _pod_next(nxt: Mapping[str, Any], delay: float, where: str) -> tuple[tuple[str, str], ...]:
    unknown = sorted(set(nxt) - _POD_NEXT)
    if unknown or not nxt:
        raise StageError(f"{where}: a Pod stage's next is one of {', '.join(sorted(_POD_NEXT))}")
    out: dict[str, str] = {}
    go = f"{delay}s"
    if "ready" in nxt:
        if nxt["ready"] is True:
            out[ann.READY_AFTER] = go
        elif nxt["ready"] is False:
            out[ann.NEVER_READY] = "true"
        else:
            raise StageError(f"{where}.ready: must be true or false")
    if "phase" in nxt:
        if nxt["phase"] not in ("Succeeded", "Failed"):
            raise StageError(f'{where}.phase: must be "Succeeded" or "Failed"')
        out[ann.COMPLETE_AFTER] = go
        if nxt["phase"] == "Failed":
            out[ann.FAIL] = "true"
    if "crash" in nxt:
        if nxt["crash"] is not True:
            raise StageError(f"{where}.crash: must be true")
        out[ann.CRASH] = "true"
    return tuple(out.items())


def parse_stages(data: Any, source: str = "<memory>") -> UserStages:
    """Read a stage file's content: a list of stages or ``{stages: [...], replaceDefaults: bool}``.

    A list item ``{replaceDefaults: true}`` is the same switch (so it survives being joined into
    a fleet's ``stages:``)."""
    replace = False
    if isinstance(data, Mapping):
        unknown = sorted(set(data) - {"stages", REPLACE_KEY, "apiVersion", "kind"})
        if unknown:
            raise StageError(f"{source}: unknown field(s) {', '.join(unknown)}")
        replace = _flag(data.get(REPLACE_KEY, False), REPLACE_KEY)
        items = data.get("stages")
    else:
        items = data
    if items is None:
        return UserStages(replace_defaults=replace)
    if not isinstance(items, Sequence) or isinstance(items, str):
        raise StageError(f"{source}: stages must be a list")
    out: list[UserStage] = []
    lifecycle: list[LifecycleStage] = []
    names: set[str] = set()
    for i, raw in enumerate(items):
        where = f"stages[{i}]"
        if not isinstance(raw, Mapping):
            raise StageError(f"{where}: must be a mapping")
        if REPLACE_KEY in raw:
            if set(raw) != {REPLACE_KEY}:
                raise StageError(f"{where}: {REPLACE_KEY} stands alone in its list item")
            replace = _flag(raw[REPLACE_KEY], f"{where}.{REPLACE_KEY}") or replace
            continue
        unknown = sorted(set(raw) - _STAGE_KEYS)
        if unknown:
            raise StageError(
                f"{where}: unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_STAGE_KEYS))}"
            )
        name = str(raw.get("name") or f"stage-{i}")
        if name in names:
            raise StageError(f"{where}.name: duplicate stage name {name!r}")
        names.add(name)
        kind = str((raw.get("resourceRef") or {}).get("kind") or "")
        nxt = raw.get("next")
        if isinstance(nxt, Mapping) and nxt and set(nxt) <= LIFECYCLE_NEXT:
            if kind not in LIFECYCLE_KINDS:
                raise StageError(
                    f"{where}.resourceRef.kind: must be one of {', '.join(LIFECYCLE_KINDS)}, got {kind!r}"
                )
            sel = raw.get("selector") or {}
            if not isinstance(sel, Mapping) or set(sel) - _LIFECYCLE_SELECTOR_KEYS:
                raise StageError(
                    f"{where}.selector: allowed fields are {', '.join(sorted(_LIFECYCLE_SELECTOR_KEYS))}"
                )
            lifecycle.append(parse_lifecycle_stage(raw, name, kind, where))
            continue
        if "weight" in raw:
            raise StageError(f"{where}.weight: only stages whose next drives the agent have a weight")
        if kind not in KINDS:
            raise StageError(f"{where}.resourceRef.kind: must be one of {', '.join(KINDS)}, got {kind!r}")
        sel = raw.get("selector") or {}
        if not isinstance(sel, Mapping) or set(sel) - _SELECTOR_KEYS:
            raise StageError(f"{where}.selector: allowed fields are {', '.join(sorted(_SELECTOR_KEYS))}")
        delay = _seconds(raw.get("delay"), f"{where}.delay")
        if not isinstance(nxt, Mapping):
            raise StageError(f"{where}.next: required mapping")
        stage = UserStage(
            name,
            kind,
            _str_map(sel.get("matchLabels"), f"{where}.selector.matchLabels"),
            _str_map(sel.get("matchAnnotations"), f"{where}.selector.matchAnnotations"),
            delay,
        )
        if kind == "Pod":
            stage = UserStage(**{**stage.__dict__, "annotations": _pod_next(nxt, delay, f"{where}.next")})
        else:
            if set(nxt) != _NODE_NEXT or nxt["fault"] not in FAULTS:
                raise StageError(f"{where}.next: a Node stage's next is {{fault: {' | '.join(FAULTS)}}}")
            stage = UserStage(**{**stage.__dict__, "fault": str(nxt["fault"])})
        out.append(stage)
    return UserStages(tuple(out), tuple(lifecycle), replace)


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise StageError(f"{where}: must be true or false")
    return value


def load_stages(path: str | Path) -> UserStages:
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text())
    except yaml.YAMLError as e:
        raise StageError(f"invalid YAML: {e}") from e
    return parse_stages(data, str(p))


__all__ = ["StageError", "UserStage", "UserStages", "load_stages", "parse_stages", "with_stage_annotations"]
