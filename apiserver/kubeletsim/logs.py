"""What a simulated container "prints": the lines ``pods/log`` serves, from the stored pod alone.

A container prints, by default, one line when it starts and one when it exits; a pod annotation
replaces the start line with lines of the user's (gangplane's own annotations):

=====================================  ==================================================
``gangplane.dev/log``                  the lines every container of the pod prints
``gangplane.dev/log.<container>``      the lines that container prints (wins over the above)
=====================================  ==================================================

Lines carry the time the container (re)started (``state.running.startedAt``, or the
terminated state's), the exit line its ``finishedAt``; ``previous`` reads the last terminated
instance (``lastState.terminated``). Errors are kube's (the API server's and kubelet's messages).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from apiserver import errors
from apiserver.api.types import Obj, as_dict, as_list
from apiserver.meta import parse_time

LOG_ANNOTATION = "gangplane.dev/log"


@dataclass(frozen=True)
class LogLine:
    ts: float
    text: str


def _names(spec: Obj, key: str) -> list[str]:
    return [str(as_dict(c).get("name") or "") for c in as_list(spec.get(key))]


def choose_container(pod: Obj, container: str) -> str:
    """The container a log request is for (kube's ``LogLocation`` checks)."""
    md, spec = as_dict(pod.get("metadata")), as_dict(pod.get("spec"))
    name = md.get("name", "")
    regular, init, eph = (
        _names(spec, "containers"),
        _names(spec, "initContainers"),
        _names(spec, "ephemeralContainers"),
    )
    if not container:
        if len(regular) == 1:
            return regular[0]
        msg = f"a container name must be specified for pod {name}, choose one of: [{' '.join(regular)}]"
        if init:
            msg += f" or one of the init containers: [{' '.join(init)}]"
        if eph:
            msg += f" or one of the ephemeral containers: [{' '.join(eph)}]"
        raise errors.bad_request(msg)
    if container not in (*regular, *init, *eph):
        raise errors.bad_request(f"container {container} is not valid for pod {name}")
    return container


def container_status(pod: Obj, container: str) -> Obj | None:
    st = as_dict(pod.get("status"))
    for key in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        for cs in as_list(st.get(key)):
            if as_dict(cs).get("name") == container:
                return as_dict(cs)
    return None


def is_running(pod: Obj, container: str) -> bool:
    """Whether a ``follow`` should keep waiting for more of this container's lines."""
    if as_dict(pod.get("metadata")).get("deletionTimestamp") and as_dict(pod.get("status")).get("phase") in (
        "Succeeded",
        "Failed",
    ):
        return False
    cs = container_status(pod, container)
    return cs is not None and "running" in as_dict(cs.get("state"))


def follow_events(current: Obj, events: Iterable[tuple[str, Obj]], container: str) -> tuple[Obj, bool]:
    """Where a ``follow`` stands after a batch of watch events on its pod: the pod's state to
    read the container's last lines from, and whether following ends.

    The batch is read in order up to the first event that ends it (the pod deleted, or its
    container no longer running): a pod whose container stopped and which was then deleted in
    the same batch ends on the stopped state, so the follow still prints the exit line. A
    DELETED event carries the pod's last state."""
    for typ, obj in events:
        current = obj
        if typ == "DELETED" or not is_running(obj, container):
            return current, True
    return current, False


def configured_lines(pod: Obj, container: str) -> list[str] | None:
    ann = as_dict(as_dict(pod.get("metadata")).get("annotations"))
    text = ann.get(f"{LOG_ANNOTATION}.{container}", ann.get(LOG_ANNOTATION))
    if text is None:
        return None
    return str(text).splitlines()


def _instance_lines(pod: Obj, container: str, image: str, state: Obj) -> list[LogLine]:
    running, term = as_dict(state.get("running")), as_dict(state.get("terminated"))
    started = parse_time(running.get("startedAt") or term.get("startedAt")) or 0.0
    lines = configured_lines(pod, container)
    if lines is None:
        lines = [f"gangplane: simulated container {container} ({image}) started"]
    out = [LogLine(started, text) for text in lines]
    if term:
        finished = parse_time(term.get("finishedAt")) or started
        out.append(
            LogLine(
                finished,
                f"gangplane: simulated container {container} exited with code {term.get('exitCode', 0)}",
            )
        )
    return out


def container_lines(pod: Obj, container: str, previous: bool) -> list[LogLine]:
    """Every line the container's current (or ``previous``) instance printed; kubelet's 400s when none."""
    md, spec = as_dict(pod.get("metadata")), as_dict(pod.get("spec"))
    name = md.get("name", "")
    if not spec.get("nodeName"):
        raise errors.bad_request(f"pod {name} does not have a host assigned")
    image = ""
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for c in as_list(spec.get(key)):
            if as_dict(c).get("name") == container:
                image = str(as_dict(c).get("image") or "")
    cs = container_status(pod, container)
    if previous:
        last = as_dict(as_dict((cs or {}).get("lastState")).get("terminated"))
        if not last:
            raise errors.bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
        return _instance_lines(pod, container, image, {"terminated": last})
    state = as_dict((cs or {}).get("state"))
    if cs is None or "waiting" in state or not state:
        reason = as_dict(state.get("waiting")).get("reason") or "ContainerCreating"
        raise errors.bad_request(f'container "{container}" in pod "{name}" is waiting to start: {reason}')
    return _instance_lines(pod, container, image, state)


def rfc3339_nano(ts: float) -> str:
    whole = int(ts)
    nanos = int(round((ts - whole) * 1e9))
    if nanos >= 1_000_000_000:
        whole, nanos = whole + 1, 0
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{nanos:09d}Z"


def render(lines: list[LogLine], *, timestamps: bool = False) -> bytes:
    return b"".join(
        ((rfc3339_nano(line.ts) + " ") if timestamps else "").encode() + line.text.encode() + b"\n"
        for line in lines
    )


def select(lines: list[LogLine], *, tail: int | None, since: float | None) -> list[LogLine]:
    """``sinceSeconds``/``sinceTime`` (a wall time) first, then ``tailLines``, as kubelet applies them."""
    if since is not None:
        lines = [line for line in lines if line.ts >= since]
    if tail is not None:
        lines = lines[-tail:] if tail > 0 else []
    return lines


__all__ = [
    "LOG_ANNOTATION",
    "LogLine",
    "choose_container",
    "container_lines",
    "follow_events",
    "is_running",
    "render",
    "rfc3339_nano",
    "select",
]
