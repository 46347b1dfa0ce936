"""Table columns and printers, the shapes of ``meta.k8s.io/v1`` Tables (kube's ``TableColumnDefinition``
and ``pkg/printers``' column handlers), with apimachinery's ``HumanDuration`` ages.

They sit on the ground floor so both the server's built-in printers (:mod:`apiserver.server.tables`)
and the CRD printers of ``additionalPrinterColumns`` (:mod:`apiserver.apiextensions.printers`) build
on them without either package importing the other. Everything here is pure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from apiserver.api.types import Obj

Cell = str | int | bool | None


# ObjectMeta field docs, as kube's printers put them in the Name and Age column descriptions.
NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name automatically. "
    "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
    "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
CREATION_TIMESTAMP_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. "
    "It is not guaranteed to be set in happens-before order across separate operations. Clients may "
    "not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. "
    "Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)

_NS_PER_SECOND = 1_000_000_000
_NS_PER_MINUTE = 60 * _NS_PER_SECOND
_NS_PER_HOUR = 60 * _NS_PER_MINUTE


# --------------------------------------------------------------------------------------------
# durations and timestamps


def _trunc_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero), which HumanDuration relies on."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def human_ns(ns: int) -> str:
    """``duration.HumanDuration`` on a Go ``time.Duration`` (integer nanoseconds)."""
    seconds = _trunc_div(ns, _NS_PER_SECOND)
    # Up to two seconds in the future counts as "now" (clock skew between machines).
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = ns // _NS_PER_MINUTE
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = ns // _NS_PER_HOUR
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def human_duration(seconds: float) -> str:
    """apimachinery ``HumanDuration``: ``5s``, ``3m2s``, ``15m``, ``5h3m``, ``2d3h``, ``3y12d``.

    Precision shrinks as the duration grows (about two significant units); up to two seconds in
    the future prints ``0s``, further ``<invalid>``.
    """
    return human_ns(round(seconds * _NS_PER_SECOND))


def timedelta_ns(td: timedelta) -> int:
    return ((td.days * 86_400 + td.seconds) * 1_000_000 + td.microseconds) * 1000


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 ``metav1.Time``/``MicroTime`` string as an aware datetime; None when unset/zero."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text[-1:] in ("Z", "z"):
        text = text[:-1] + "+00:00"
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    if t.year <= 1:  # Go's zero time
        return None
    return t


def aware(now: datetime) -> datetime:
    return now if now.tzinfo is not None else now.replace(tzinfo=UTC)


def since(value: Any, now: datetime) -> str:
    """``translateTimestampSince``: the age of a timestamp, ``<unknown>`` when it is unset."""
    t = parse_time(value)
    if t is None:
        return "<unknown>"
    return human_ns(timedelta_ns(aware(now) - t))


@dataclass(frozen=True)
class Column:
    """One ``TableColumnDefinition``."""

    name: str
    type: str = "string"
    description: str = ""
    priority: int = 0
    format: str = ""

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


NAME = Column("Name", format="name", description=NAME_DESCRIPTION)
AGE = Column("Age", description=CREATION_TIMESTAMP_DESCRIPTION)


CellsFn = Callable[[Obj, datetime], list[Cell]]
ConditionsFn = Callable[[Obj], list[dict[str, str]]]


@dataclass(frozen=True)
class Printer:
    """A resource's columns and the function that fills one row (always with the wide cells)."""

    columns: tuple[Column, ...]
    cells: CellsFn
    conditions: ConditionsFn | None = None
