"""Small object/metadata helpers shared by every package (no I/O, no policy)."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from apiserver.api.types import Obj

# apimachinery's util/rand alphabet: no vowels, no confusable characters.
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


class Clock:
    """Wall clock, injectable so logic never reads ``time.time()`` directly."""

    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()


class FakeClock(Clock):
    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self._t = start
        self._m = 0.0

    def now(self) -> float:
        return self._t

    def monotonic(self) -> float:
        return self._m

    def step(self, seconds: float) -> None:
        self._t += seconds
        self._m += seconds


def rfc3339(ts: float) -> str:
    """``metav1.Time`` JSON form: second precision, UTC, ``Z`` suffix."""
    return _rfc3339_seconds(int(ts))


@lru_cache(maxsize=256)
def _rfc3339_seconds(seconds: int) -> str:
    # every write stamps one or two times, nearly always within the same second: format it once
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_micro(ts: float) -> str:
    """``metav1.MicroTime`` JSON form (events.k8s.io eventTime, leases)."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(s: str | None) -> float | None:
    if not s:
        return None
    try:
        if s.endswith("Z"):
            s = s[:-1] + "+00:00"
        return datetime.fromisoformat(s).timestamp()
    except ValueError:
        return None


def new_uid() -> str:
    """A random (version 4) UUID in its canonical text form, as ``str(uuid.uuid4())`` gives.

    Every create draws one; formatting the 16 random bytes directly skips building a
    ``uuid.UUID`` (an int conversion and a checked ``__init__``), a third of the cost.
    """
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40  # version 4
    b[8] = (b[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def random_suffix(n: int = 5, rng: random.Random | None = None) -> str:
    r = rng or random
    return "".join(r.choice(_ALPHANUMS) for _ in range(n))


def meta(obj: Obj) -> Obj:
    m = obj.get("metadata")
    if not isinstance(m, dict):
        m = {}
        obj["metadata"] = m
    return m


def name_of(obj: Obj) -> str:
    return (obj.get("metadata") or {}).get("name", "")


def namespace_of(obj: Obj) -> str:
    return (obj.get("metadata") or {}).get("namespace", "")


def uid_of(obj: Obj) -> str:
    return (obj.get("metadata") or {}).get("uid", "")


def key_of(obj: Obj) -> str:
    """The cache key kube's informers use: ``namespace/name`` or ``name``."""
    m = obj.get("metadata") or {}
    ns = m.get("namespace", "")
    return f"{ns}/{m.get('name', '')}" if ns else m.get("name", "")


def split_key(key: str) -> tuple[str, str]:
    ns, _, name = key.rpartition("/")
    return ns, name


def labels_of(obj: Obj) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def annotations_of(obj: Obj) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def owner_references(obj: Obj) -> list[Obj]:
    return (obj.get("metadata") or {}).get("ownerReferences") or []


def controller_ref(obj: Obj) -> Obj | None:
    for ref in owner_references(obj):
        if ref.get("controller"):
            return ref
    return None


def is_controlled_by(obj: Obj, owner: Obj) -> bool:
    ref = controller_ref(obj)
    return ref is not None and ref.get("uid") == uid_of(owner)


def new_controller_ref(owner: Obj, api_version: str, kind: str) -> Obj:
    """``metav1.NewControllerRef``: controller and blockOwnerDeletion both true."""
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name_of(owner),
        "uid": uid_of(owner),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def is_being_deleted(obj: Obj) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def finalizers_of(obj: Obj) -> list[str]:
    return (obj.get("metadata") or {}).get("finalizers") or []


def resource_version_of(obj: Obj) -> str:
    return (obj.get("metadata") or {}).get("resourceVersion", "")


def get_path(obj: Any, path: str, default: Any = None) -> Any:
    """Read a dotted path (``spec.nodeName``) from nested dicts."""
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return default
        cur = cur.get(part)
        if cur is None:
            return default
    return cur


def condition(obj: Obj, ctype: str) -> Obj | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def set_condition(conditions: list[Obj], new: Obj, now: str) -> bool:
    """``meta.SetStatusCondition``: keep lastTransitionTime when status is unchanged. Returns changed."""
    for i, c in enumerate(conditions):
        if c.get("type") == new.get("type"):
            merged = dict(c)
            changed = False
            if c.get("status") != new.get("status"):
                merged["lastTransitionTime"] = new.get("lastTransitionTime") or now
                changed = True
            for k in ("status", "reason", "message", "observedGeneration"):
                if k in new and merged.get(k) != new[k]:
                    merged[k] = new[k]
                    changed = True
            if changed:
                conditions[i] = merged
            return changed
    c = dict(new)
    c.setdefault("lastTransitionTime", now)
    conditions.append(c)
    return True


Getter = Callable[[Obj], Any]
