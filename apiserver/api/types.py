"""The one alias for a Kubernetes object as the API machinery handles it: a JSON-shaped dict."""

from __future__ import annotations

from typing import Any

#: an object, list or sub-document decoded from JSON (``metadata``, ``spec`` …)
Obj = dict[str, Any]
