"""Small object/metadata helpers shared by every package (no I/O, no policy)."""

from __future__ import annotations

import binascii
import os
import random
import time
import weakref
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


#: Every 16-byte block of a pool's batch with the version (``4``) and RFC 4122 variant
#: (``10``) bits of :func:`new_uid` set: one AND and one OR over the whole batch as an integer.
def _masks(batch: int) -> tuple[int, int]:
    clear = bytearray(b"\xff" * 16)
    clear[6], clear[8] = 0x0F, 0x3F
    set_ = bytearray(16)
    set_[6], set_[8] = 0x40, 0x80
    return int.from_bytes(bytes(clear) * batch, "big"), int.from_bytes(bytes(set_) * batch, "big")


#: One uid's text with its hex digits blank, and where each of its 32 digits goes.
_UID_TEXT = b"00000000-0000-0000-0000-000000000000\n"
_UID_DIGITS = tuple(enumerate(p for p in range(36) if p not in (8, 13, 18, 23)))


def uid_texts(hex_digits: bytes) -> list[str]:
    """The canonical texts (``8-4-4-4-12``) of the uids whose lower-case hex digits, 32 each,
    ``hex_digits`` holds one after another, in that order.

    One f-string of five slices per uid cost more than the rest of a draw (~1.5 µs of ~2 at
    load): here each of the 32 digit positions is copied for the whole batch by one strided
    slice assignment into a block of dashed templates, which is then decoded and split once,
    all in C (~5x cheaper per uid). The texts are the same characters in the same order.
    """
    count = len(hex_digits) // 32
    buf = bytearray(_UID_TEXT * count)
    for digit, at in _UID_DIGITS:
        buf[at::37] = hex_digits[digit::32]
    return buf.decode("ascii").split()


class UidPool:
    """Random (version 4) UUIDs made a batch at a time: :func:`new_uid`'s values at a fraction
    of its cost.

    Every create draws a uid, and :func:`new_uid` pays a system call (``os.urandom(16)``), a
    ``bytearray``, two bit fixes and a format per uid. The pool reads the same kernel source for
    ``batch`` uids at once, sets the version and variant bits of all of them with one integer
    AND and OR, hex-encodes the batch in one call and cuts the texts; a draw is then a
    ``list.pop``. The values are what :func:`new_uid` gives: 122 random bits each, in the
    canonical lower-case text form. One pool belongs to one API server (no state is shared
    between servers); a process forked from one drops every pool's remaining uids in the child
    (as ``random`` reseeds there), so parent and child never hand out the same ones.
    """

    __slots__ = ("__weakref__", "_and", "_batch", "_left", "_or")

    def __init__(self, batch: int = 256) -> None:
        self._batch = batch
        self._and, self._or = _masks(batch)
        self._left: list[str] = []
        if hasattr(os, "register_at_fork"):
            # each pool's own hook, holding it weakly: no registry of pools outlives its server
            ref = weakref.ref(self)
            os.register_at_fork(after_in_child=lambda: _drop(ref))

    def _refill(self) -> list[str]:
        n = 16 * self._batch
        bits = (int.from_bytes(os.urandom(n), "big") & self._and) | self._or
        self._left = left = uid_texts(binascii.hexlify(bits.to_bytes(n, "big")))
        return left

    def __call__(self) -> str:
        left = self._left or self._refill()
        return left.pop()

    def drop(self) -> None:
        """Forget the uids drawn but not handed out (a forked child's copy of them)."""
        self._left = []


def _drop(ref: weakref.ReferenceType[UidPool]) -> None:
    pool = ref()
    if pool is not None:
        pool.drop()


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
