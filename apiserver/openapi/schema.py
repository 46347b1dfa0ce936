"""Access to the served schemas, keyed by definition name and by GVK.

The Kubernetes 1.37 definitions come as data from the ``kubernetes-validate`` package
(``$defs`` with the ``x-kubernetes-patch-*`` and list-map extensions). gangplane's additions
(e.g. StatefulSet ``spec.scheduling``) are merged in by :mod:`apiserver.openapi.additions`.
Everything schema-driven (OpenAPI documents, strategic merge patch, server-side apply,
field validation) reads the schema through this module.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

import orjson

from apiserver.openapi.additions import apply_additions

K8S_SCHEMA_VERSION = "v1.37.0"

Node = dict[str, Any]


@functools.lru_cache(maxsize=1)
def _raw_definitions() -> dict[str, Node]:
    # The package is located, not imported: its __init__ imports jsonschema (about 90 ms of
    # start-up), and only its data file is needed here.
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the kubernetes-validate package (the served schemas) is not installed")
    pkg = Path(next(iter(spec.submodule_search_locations)))
    path = pkg / "kubernetes-json-schema" / f"{K8S_SCHEMA_VERSION}-local" / "_definitions.json"
    return orjson.loads(path.read_bytes())["$defs"]


@functools.lru_cache(maxsize=1)
def definitions() -> dict[str, Node]:
    """All definitions (upstream + gangplane additions). Treat as read-only."""
    defs = dict(_raw_definitions())
    apply_additions(defs)
    return defs


def ref_name(ref: str) -> str:
    """``#/$defs/io.k8s.api.apps.v1.StatefulSet`` -> ``io.k8s.api.apps.v1.StatefulSet``."""
    return ref.rsplit("/", 1)[-1]


def resolve(node: Node | None) -> Node | None:
    """Follow ``$ref`` (also inside a single-element ``allOf``) to the definition it names."""
    seen = 0
    while node is not None and seen < 16:
        seen += 1
        if "$ref" in node:
            node = definitions().get(ref_name(node["$ref"]))
            continue
        all_of = node.get("allOf")
        if all_of and len(all_of) == 1 and "$ref" in all_of[0]:
            node = definitions().get(ref_name(all_of[0]["$ref"]))
            continue
        return node
    return node


@functools.lru_cache(maxsize=4096)
def _gvk_index() -> dict[tuple[str, str, str], str]:
    out: dict[tuple[str, str, str], str] = {}
    for name, node in definitions().items():
        for gvk in node.get("x-kubernetes-group-version-kind", ()) or ():
            out.setdefault((gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", "")), name)
    return out


def definition_name_for(group: str, version: str, kind: str) -> str | None:
    return _gvk_index().get((group, version, kind))


@functools.lru_cache(maxsize=1024)
def for_gvk(group: str, version: str, kind: str) -> Node | None:
    """The kind's definition. Memoized (both tables it reads are built once): every write
    asks for its kind's schema, some twice (the strategic merge and the field tracker)."""
    name = definition_name_for(group, version, kind)
    return definitions().get(name) if name else None


def property_of(node: Node | None, name: str) -> Node | None:
    node = resolve(node)
    if not node:
        return None
    prop = (node.get("properties") or {}).get(name)
    return prop


def items_of(node: Node | None) -> Node | None:
    node = resolve(node)
    if not node:
        return None
    return node.get("items")


def additional_properties_of(node: Node | None) -> Node | None:
    node = resolve(node)
    if not node:
        return None
    ap = node.get("additionalProperties")
    return ap if isinstance(ap, dict) else None
