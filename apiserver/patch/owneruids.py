"""Stored ``managedFields`` text with the owners' uids taken out (issue #22).

:mod:`.statusentry` keys a status write by its stored entries' exact text, so that the entries
the write leaves alone are known to be the template's. An owned object's create entry names
its owners' uids (``f:ownerReferences`` > ``k:{"uid":"…"}``): a PodGroup is owned by its own
StatefulSet and Workload, so no two PodGroups' texts are equal, and the scheduler's condition
write of every gang took the general path (~110 µs of managed fields per write).

Here the text is keyed with each ``k:{"uid":"<uid>"}`` *key* written as ``k:{"uid":"~"}``. The
general path is parametric in those uids: it decodes the entries it leaves alone into field
sets and encodes them again, and a uid only decides the order of its element among its
siblings (:meth:`.fieldpath.PathElement.sort_key`). So two texts with one key re-encode alike up
to the uids, provided the uids keep their relative order, which holds where they are taken
only when:

* each uid is *plain* (Go's JSON writes it as it is: the text holds it verbatim), the text
  holds no ``~`` (the mark), and every ``k:{"uid":`` of the text is such a key (not a number,
  an escaped string, a key of two fields that starts with the uid, or a value that looks
  like one);
* the uids, in the text's order, increase strictly (as the encoder orders single-field keys;
  the check is global, stricter than among siblings): then an element sorts against a sibling
  that is not such a key by its field names only, and against one that is by the uids, whose
  order is the same in every text of the key.

The caller still checks, where it learns, that the general path gave the stored entries back
byte for byte; a later write of the key then gets its own stored entries.
"""

from __future__ import annotations

import re
from itertools import pairwise

#: a ``k:{"uid":"<plain uid>"}`` key (followed by ``:``) in ``EXACT_JSON`` text; the uid as
#: :mod:`.ownedentry` takes it
_UID_KEY = re.compile(rb'"k:\{\\"uid\\":\\"([0-9A-Za-z._-]{1,256})\\"\}"(?=:)')
_UID_START = b'k:{\\"uid\\":'
_MARKED = b'"k:{\\"uid\\":\\"~\\"}"'
#: the first byte of a marked text (a JSON text never starts with it)
_PREFIX = b"U"


def without_owner_uids(text: bytes) -> bytes | None:
    """``text`` (stored entries as ``EXACT_JSON``) with its uids taken out, prefixed apart from
    any JSON text; None where it has none, or where they cannot be (see the module docs)."""
    if _UID_START not in text or b"~" in text:
        return None
    parts = _UID_KEY.split(text)
    uids = parts[1::2]
    if len(uids) != text.count(_UID_START) or any(a >= b for a, b in pairwise(uids)):
        return None
    return _PREFIX + _MARKED.join(parts[0::2])


__all__ = ["without_owner_uids"]
