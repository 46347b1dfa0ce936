"""Server-side Tables of custom resources from ``additionalPrinterColumns`` (kube's CRD table convertor).

The first column is always ``Name``; a version without columns gets ``Age``
(``.metadata.creationTimestamp``, type ``date``), as kube defaults it. Each cell evaluates the
column's ``jsonPath`` (kube's ``{<jsonPath>}`` template, here with jsonpath-ng's extended
parser, which also understands filters such as ``.status.conditions[?(@.type=="Ready")].status``):

* no match -> ``None`` (kubectl prints ``<none>``);
* ``string`` columns -> the matches printed like kube's template (space separated);
* ``date`` columns -> the age of the timestamp (``5m``);
* ``integer``/``number``/``boolean`` -> the single value when its JSON type fits, else ``None``.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

import orjson

from apiserver.api.table import NAME, Cell, Column, Printer, since
from apiserver.api.types import Obj

if TYPE_CHECKING:
    from jsonpath_ng import JSONPath

AGE_COLUMN = {
    "name": "Age",
    "type": "date",
    "jsonPath": ".metadata.creationTimestamp",
    "description": "CreationTimestamp is a timestamp representing the server time when this object was created. "
    "It is not guaranteed to be set in happens-before order across separate operations. Clients may not set "
    "this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null "
    "for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
}


def compile_path(json_path: str) -> JSONPath:
    """A CRD column/scale path (``.spec.replicas``) as a jsonpath-ng expression.

    jsonpath-ng is imported here, on the first CRD that declares a column or scale path, not at
    start-up (its grammar tables cost ~40 ms).
    """
    from jsonpath_ng.ext import parse

    return parse("$" + json_path)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return orjson.dumps(value).decode()
    return str(value)


def _cell(column: Obj, expr: JSONPath, obj: Obj, now: datetime) -> Cell:
    matches = [m.value for m in expr.find(obj)]
    if not matches or all(v is None for v in matches):
        return None
    typ = column.get("type")
    if typ == "date":
        return since(matches[0], now)
    if typ == "string":
        return " ".join(_text(v) for v in matches)
    value = matches[0]
    if typ == "integer" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if typ == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return value  # type: ignore[return-value]
    if typ == "boolean" and isinstance(value, bool):
        return value
    return None


def printer_for_columns(columns: list[Obj]) -> Printer:
    """The Table printer of one custom resource version."""
    cols = list(columns) or [AGE_COLUMN]
    compiled = [(c, compile_path(c.get("jsonPath") or "")) for c in cols]
    definitions = (NAME,) + tuple(
        Column(
            c.get("name") or "",
            type=c.get("type") or "string",
            description=c.get("description") or "",
            priority=int(c.get("priority") or 0),
            format=c.get("format") or "",
        )
        for c in cols
    )

    def cells(obj: Obj, now: datetime) -> list[Cell]:
        name = (obj.get("metadata") or {}).get("name") or ""
        return [name] + [_cell(c, expr, obj, now) for c, expr in compiled]

    return Printer(definitions, cells)
