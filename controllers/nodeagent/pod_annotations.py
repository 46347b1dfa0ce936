"""Per-pod behaviour switches a test or demo sets as annotations under ``gangplane.dev/``.

The node agent runs no real containers, so a pod cannot crash or finish by itself; these
annotations tell the simulated kubelet what the pod's containers "do". They are read when a
stage is evaluated, never cached, so a controller can rely on the pod template alone.

=================================  =========================================================
``gangplane.dev/never-ready``      ``"true"``: containers run but never report Ready.
``gangplane.dev/ready-after``      Go duration (``"2s"``): Ready that long after start.
``gangplane.dev/crash``            ``"true"``: containers exit 1 and are restarted with
                                   CrashLoopBackOff (``restartPolicy: Never`` pods fail).
``gangplane.dev/fail``             ``"true"``: the pod fails (phase Failed, exit code 1) right
                                   after start, or at ``complete-after`` when that is set.
``gangplane.dev/complete-after``   Go duration: containers exit 0 that long after start;
                                   ``Never``/``OnFailure`` pods become Succeeded.
=================================  =========================================================

Durations are scaled by the agent's ``time_scale`` like every other simulated delay.
"""

from __future__ import annotations

import re
from typing import Any

PREFIX = "gangplane.dev/"
NEVER_READY = PREFIX + "never-ready"
READY_AFTER = PREFIX + "ready-after"
CRASH = PREFIX + "crash"
FAIL = PREFIX + "fail"
COMPLETE_AFTER = PREFIX + "complete-after"
#: node label: ``"false"`` leaves the node (and its pods) to someone else
SIMULATED_LABEL = PREFIX + "simulated"

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Go's ``time.ParseDuration`` (``"1m30s"``, ``"250ms"``, ``"1.5h"``) in seconds.

    A bare number is taken as seconds, since annotation authors often write ``"5"``.
    Negative durations and garbage raise ``ValueError``.
    """
    s = text.strip()
    if not s:
        raise ValueError("empty duration")
    if s.startswith("-"):
        raise ValueError(f"negative duration {text!r}")
    s = s.removeprefix("+")
    try:
        return float(s)
    except ValueError:
        pass
    pos = 0
    total = 0.0
    for m in _PART.finditer(s):
        if m.start() != pos:
            raise ValueError(f"invalid duration {text!r}")
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(s) or pos == 0:
        raise ValueError(f"invalid duration {text!r}")
    return total


def _annotations(pod: dict[str, Any]) -> dict[str, str]:
    return (pod.get("metadata") or {}).get("annotations") or {}


def flag(pod: dict[str, Any], key: str) -> bool:
    """A boolean annotation: only ``"true"`` (any case) switches it on."""
    return str(_annotations(pod).get(key, "")).strip().lower() == "true"


def duration(pod: dict[str, Any], key: str) -> float | None:
    """A duration annotation in (unscaled) seconds; None when absent or unparseable.

    An unparseable value is ignored rather than failing the pod: the agent reports it with a
    Warning event (see :func:`invalid_annotations`).
    """
    raw = _annotations(pod).get(key)
    if raw is None:
        return None
    try:
        return parse_duration(str(raw))
    except ValueError:
        return None


def invalid_annotations(pod: dict[str, Any]) -> list[str]:
    """Messages for ``gangplane.dev/`` annotations whose values the agent cannot use."""
    out: list[str] = []
    ann = _annotations(pod)
    for key in (READY_AFTER, COMPLETE_AFTER):
        raw = ann.get(key)
        if raw is None:
            continue
        try:
            parse_duration(str(raw))
        except ValueError:
            out.append(f'annotation {key}="{raw}" is not a duration such as "5s" or "1m30s"; ignored')
    for key in (NEVER_READY, CRASH, FAIL):
        raw = ann.get(key)
        if raw is not None and str(raw).strip().lower() not in ("true", "false"):
            out.append(f'annotation {key}="{raw}" must be "true" or "false"; ignored')
    return out
