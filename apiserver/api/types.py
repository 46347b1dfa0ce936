"""The one alias for a Kubernetes object as the API machinery handles it: a JSON-shaped dict."""

from __future__ import annotations

from typing import Any

#: an object, list or sub-document decoded from JSON (``metadata``, ``spec`` …)
Obj = dict[str, Any]


def as_dict(v: Any) -> Obj:
    """A JSON object or ``{}``: schema errors are someone else's report, not a crash here."""
    return v if isinstance(v, dict) else {}


def as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def as_str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def as_int(v: Any) -> int | None:
    """An integer or None (JSON booleans are not integers)."""
    return v if isinstance(v, int) and not isinstance(v, bool) else None
