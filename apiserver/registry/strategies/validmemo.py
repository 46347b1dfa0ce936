"""What the create-time validation memos share: an input's exact text as a key, and a bounded
set of the keys that validated without error.

A memo (:mod:`.pod_spec_memo`, :mod:`.statefulset_spec_memo`, :mod:`.statefulset_scheduling_memo`,
:mod:`.scheduling_memo`) answers a validation from memory when the part of the input it reads
is one seen valid before. Its key holds that part's JSON text: ``orjson``'s under ``EXACT_JSON``
(type-exact: ``true``, ``1`` and ``1.0`` differ; subclasses of builtins are refused). A text
holding ``null`` is not a key, since orjson writes NaN and infinities as ``null`` too, nor is a
text longer than ``MAX_BYTES``. Errors are never remembered: an invalid input always takes the
full validation, which words its errors in kube's order.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Generic, TypeVar

import orjson

from apiserver.patch.fieldpath import EXACT_JSON

#: the most keys a memo holds before it starts afresh
ENTRIES = 1024
#: the longest text a key holds (with ENTRIES: at most 16 MB of keys per memo, typically ~1 MB)
MAX_BYTES = 16 * 1024

K = TypeVar("K", bound=Hashable)


def exact_text(value: Any) -> bytes | None:
    """``value``'s exact JSON text, or None where it cannot be a key (see the module docstring)."""
    try:
        text = orjson.dumps(value, option=EXACT_JSON)
    except TypeError:
        return None
    if len(text) > MAX_BYTES or b"null" in text:
        return None
    return text


class ValidKeys(Generic[K]):
    """The keys of the inputs that validated without error, at most ``ENTRIES`` of them (when
    full it is cleared: a workload's shapes are few, and the next inputs teach it again)."""

    __slots__ = ("_keys",)

    def __init__(self) -> None:
        self._keys: set[K] = set()

    def __contains__(self, key: K) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def add(self, key: K) -> None:
        if len(self._keys) >= ENTRIES:
            self._keys.clear()
        self._keys.add(key)

    def clear(self) -> None:
        self._keys.clear()


__all__ = ["ENTRIES", "MAX_BYTES", "ValidKeys", "exact_text"]
