"""Content negotiation: the one parser of ``Accept`` and ``Content-Type`` headers.

kube-apiserver negotiates every response through ``runtime/serializer`` and
``endpoints/handlers/negotiation``; gangplane's HTTP handlers, discovery and Tables ask this
module the three questions they have: which discovery document (aggregated ``v2``/``v2beta1`` or
legacy), whether a ``meta.k8s.io`` Table is wanted (and which version), and whether the client
accepts JSON at all. The client's most preferred acceptable entry decides, as in kube.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

TABLE_GROUP = "meta.k8s.io"
TABLE_VERSIONS = ("v1", "v1beta1")
AGGREGATED_GROUP = "apidiscovery.k8s.io"
AGGREGATED_DISCOVERY_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
AGGREGATED_DISCOVERY_V2BETA1_CONTENT_TYPE = (
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
)
AGGREGATED_VERSIONS = {
    "v2": AGGREGATED_DISCOVERY_CONTENT_TYPE,
    "v2beta1": AGGREGATED_DISCOVERY_V2BETA1_CONTENT_TYPE,
}
_JSON_RANGES = ("application/json", "application/*", "*/*")


@dataclass(frozen=True)
class MediaRange:
    """One entry of an Accept header: ``type/subtype`` with lower-cased parameter names."""

    mime: str
    params: dict[str, str]
    q: float


def media_type(content_type: str | None) -> str:
    """``type/subtype`` of a ``Content-Type`` header, lower-cased, parameters dropped."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def parse_accept(accept_header: str) -> list[MediaRange]:
    """Accept entries in preference order (q descending, header order among equals); q=0 dropped."""
    out: list[MediaRange] = []
    for raw in (accept_header or "").split(","):
        parts = [p.strip() for p in raw.split(";")]
        mime = parts[0].lower()
        if not mime:
            continue
        params: dict[str, str] = {}
        q = 1.0
        for p in parts[1:]:
            key, _, value = p.partition("=")
            key, value = key.strip().lower(), value.strip().strip('"')
            if key == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
            elif key:
                params[key] = value
        if q > 0:
            out.append(MediaRange(mime, params, q))
    out.sort(key=lambda m: -m.q)
    return out


@functools.lru_cache(maxsize=256)
def table_version(accept_header: str) -> str | None:
    """The ``meta.k8s.io`` Table version to answer with (``v1``/``v1beta1``), None if not asked.

    Only JSON Tables are served; a protobuf Table entry is skipped so the JSON one behind it wins.
    A pure function of the header, asked on every response, and a client sends the same few
    Accept headers again and again: the answers are kept.
    """
    for m in parse_accept(accept_header):
        if m.mime not in ("application/json", "application/yaml"):
            continue
        if (
            m.params.get("as") == "Table"
            and m.params.get("g") == TABLE_GROUP
            and m.params.get("v") in TABLE_VERSIONS
        ):
            return m.params["v"]
    return None


def table_accept(accept_header: str) -> bool:
    """Whether the client asked for a server-side Table (``as=Table;v=v1|v1beta1;g=meta.k8s.io``)."""
    return table_version(accept_header) is not None


def wants_aggregated(accept: str) -> str | None:
    """The aggregated-discovery content type to answer ``accept`` with, or None for legacy JSON.

    An ``as=APIGroupDiscoveryList;g=apidiscovery.k8s.io`` entry with ``v=v2`` (or ``v2beta1``)
    selects that version; a plain JSON entry (``application/json``, ``*/*``) before it selects
    legacy. kubectl lists v2, then v2beta1, then plain JSON, so it gets v2.
    """
    for m in parse_accept(accept):
        if m.mime not in _JSON_RANGES:
            continue
        if "as" not in m.params:
            return None
        if m.params.get("as") == "APIGroupDiscoveryList" and m.params.get("g") == AGGREGATED_GROUP:
            content_type = AGGREGATED_VERSIONS.get(m.params.get("v", ""))
            if content_type is not None:
                return content_type
    return None


def accepts_json(accept: str) -> bool:
    """Whether a JSON answer is acceptable: no Accept at all, or an entry JSON satisfies.

    kubectl asks for the OpenAPI v2 document as protobuf only; answering it 404 (not JSON) makes
    it fall back silently, as it does against servers without the protobuf form.
    """
    if not accept:
        return True
    return any(m.mime in _JSON_RANGES or m.mime.endswith("+json") for m in parse_accept(accept))
