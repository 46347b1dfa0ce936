"""Readable, deterministic names for the Workload and PodGroup a controller creates.

Same scheme as the Job integration (upstream-facts §3): ``<owner>-<hash>`` for the Workload and
``<workload>-<template>-<hash>`` for the PodGroup, truncated so the result stays a 253-byte DNS
subdomain. Names are for humans only: discovery always goes by reference (controllerRef,
workloadRef), never by recomputing a name, so this scheme may change without breaking anyone.
"""

from __future__ import annotations

DNS1123_SUBDOMAIN_MAX_LENGTH = 253

# k8s.io/apimachinery/pkg/util/rand: vowels and confusable characters removed.
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"

_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def fnv1a_32(data: bytes, h: int = _FNV32_OFFSET) -> int:
    """FNV-1a, 32-bit; ``h`` lets callers continue a running hash (``hasher.Write`` twice)."""
    for b in data:
        h ^= b
        h = (h * _FNV32_PRIME) & 0xFFFFFFFF
    return h


#: ``_ALPHANUMS[b % 27]`` for every byte value: an ASCII string is mapped by one C-level
#: ``bytes.translate`` instead of a Python step per character
_SAFE_BYTES = bytes(ord(_ALPHANUMS[b % len(_ALPHANUMS)]) for b in range(256))


def safe_encode_string(s: str) -> str:
    """``rand.SafeEncodeString``: each character mapped into the 27-letter safe alphabet.

    Every caller encodes a decimal hash (ASCII, where a character is its byte); a name is made
    per Workload, PodGroup and ControllerRevision, so the table lookup is taken there. Any other
    string takes the per-character form.
    """
    if s.isascii():
        return s.encode().translate(_SAFE_BYTES).decode()
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in s)


def _encoded_hash(h: int) -> str:
    return safe_encode_string(str(h))


#: the FNV-1a state after ``(types.UID)``, the start of every hashed UID: hashing continues from it
_UID_PREFIX_STATE = fnv1a_32(b"(types.UID)")


def workload_name(owner_name: str, owner_uid: str) -> str:
    """``<owner-name>-<hash>``; the hash covers the UID as ``DeepHashObject`` renders it.

    ``DeepHashObject`` prints the value with spew's ``%#v``, which for a ``types.UID`` is the
    literal ``(types.UID)<uid>``, so those are the bytes hashed.
    """
    suffix = _encoded_hash(fnv1a_32(owner_uid.encode(), _UID_PREFIX_STATE))
    max_prefix = DNS1123_SUBDOMAIN_MAX_LENGTH - len(suffix) - 1
    return f"{owner_name[:max_prefix]}-{suffix}"


def pod_group_name(workload_name: str, template_name: str) -> str:
    """``<workload>-<template>-<hash>``; the hash is over both names concatenated as raw bytes.

    When both parts do not fit, the shorter one (if it fits in half) is kept whole and the other
    truncated; otherwise both are cut, the template to half the space.
    """
    suffix = _encoded_hash(fnv1a_32(template_name.encode(), fnv1a_32(workload_name.encode())))
    max_available = DNS1123_SUBDOMAIN_MAX_LENGTH - len(suffix) - 2
    wl, tpl = workload_name, template_name
    if len(wl) + len(tpl) > max_available:
        half = max_available // 2
        if len(wl) <= half:
            tpl = tpl[: max_available - len(wl)]
        elif len(tpl) <= half:
            wl = wl[: max_available - len(tpl)]
        else:
            wl = wl[: max_available - half]
            tpl = tpl[:half]
    return f"{wl}-{tpl}-{suffix}"
