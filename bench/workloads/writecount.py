"""The API writes of a measured phase, by resource and kind of write, read after the phase.

``api_writes_per_set`` says how many writes a StatefulSet costs; to say *which* (and compare them
with what kube's controllers write) the in-process scenarios also report
``api_writes_per_set.<resource>.<write>``. They are read from the store's change history once
the phase is over (every write is one revision there), so counting costs the measured phase
nothing: no extra watch, no hook in the write path.

A write is named by what it changed, as a reader of the history can tell:

* ``create`` / ``delete``;
* ``binding``: a pod's ``spec.nodeName`` set (``pods/binding``);
* ``status``: only ``status`` changed (a ``/status`` write, or an update that touched only it);
* ``update``: anything else (an update or a patch of the object).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from apiserver.storage.interface import ADDED, DELETED

#: metadata fields every write changes, ignored when telling a status write from an update
_VOLATILE = ("resourceVersion", "managedFields", "generation")


def _kind_of_write(resource: str, etype: str, prev: dict[str, Any] | None, cur: dict[str, Any]) -> str:
    if etype == ADDED:
        return "create"
    if etype == DELETED:
        return "delete"
    before, after = prev or {}, cur
    if resource == "pods":
        was = (before.get("spec") or {}).get("nodeName")
        if not was and (after.get("spec") or {}).get("nodeName"):
            return "binding"

    def body(o: dict[str, Any]) -> dict[str, Any]:
        md = {k: v for k, v in (o.get("metadata") or {}).items() if k not in _VOLATILE}
        return {**{k: v for k, v in o.items() if k not in ("status", "metadata")}, "metadata": md}

    return "status" if body(before) == body(after) else "update"


def writes_by_resource(store: Any, since_rv: int, until_rv: int) -> dict[str, int] | None:
    """``{"<resource>.<write>": count}`` of the writes at revisions in ``(since_rv, until_rv]``.

    ``store`` is the in-process API server's store (``ControlPlane.api.store``). None when its
    history no longer reaches back to ``since_rv`` (compacted), rather than a partial count.
    """
    counts: Counter[str] = Counter()
    for skey in store.storage_keys():
        rs = store.resource(skey)
        if rs.compacted_rv > since_rv:
            return None
        resource = skey[1] if isinstance(skey, tuple) else str(skey)
        for ev in reversed(rs.history):
            if ev.rv <= since_rv:
                break
            if ev.rv > until_rv:
                continue
            prev = ev.prev.obj if ev.prev is not None else None
            counts[f"{resource}.{_kind_of_write(resource, ev.type, prev, ev.rec.obj)}"] += 1
    return dict(counts)
