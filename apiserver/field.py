"""Field paths and field errors, the shape of apimachinery's ``field.Path`` / ``field.ErrorList``.

Validation functions return a list of :class:`FieldError`; the registry turns a non-empty list
into a 422 ``Invalid`` Status whose ``details.causes[]`` carry ``field`` and ``message``.
The rendered strings match apimachinery exactly, because kubectl prints them to users:
``spec.replicas: Invalid value: -1: must be greater than or equal to 0``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import orjson


class Path:
    """An immutable field path such as ``spec.template.spec.containers[0].name``."""

    __slots__ = ("_parent", "_name", "_index")

    def __init__(self, name: str = "", *more: str, _parent: Path | None = None, _index: str | None = None):
        self._parent = _parent
        self._name = name
        self._index = _index
        if more:
            # Path("spec", "scheduling") is a convenience for Path("spec").child("scheduling"):
            # build the chain from a fresh head node, then become its tail.
            tail = Path(name, _parent=_parent, _index=_index)
            for m in more:
                tail = tail.child(m)
            self._parent, self._name, self._index = tail._parent, tail._name, tail._index

    # Validation builds a path for every field it visits (errors are rare, so rendering is lazy):
    # ``child``/``index``/``key`` fill the slots directly instead of going through ``__init__``
    # and its keyword arguments, which halves the cost of each step (about 27 per pod create).

    def child(self, name: str, *more: str) -> Path:
        p = _node(self, name, None)
        for m in more:
            p = _node(p, m, None)
        return p

    def index(self, i: int) -> Path:
        return _node(self, "", str(i))

    def key(self, k: str) -> Path:
        return _node(self, "", k)

    def __str__(self) -> str:
        parts: list[str] = []
        p: Path | None = self
        while p is not None:
            if p._index is not None:
                parts.append(f"[{p._index}]")
            elif p._name:
                parts.append(
                    ("." + p._name)
                    if p._parent is not None and (p._parent._name or p._parent._index is not None)
                    else p._name
                )
            p = p._parent
        return "".join(reversed(parts))

    def __repr__(self) -> str:
        return f"Path({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Path) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


_new = object.__new__


def _node(parent: Path, name: str, index: str | None) -> Path:
    """``Path(name, _parent=parent, _index=index)`` without the call overhead of ``__init__``."""
    p: Path = _new(Path)
    p._parent = parent
    p._name = name
    p._index = index
    return p


def new_path(*names: str) -> Path:
    """``field.NewPath("spec", "replicas")``."""
    if not names:
        return Path()
    return Path(names[0], *names[1:])


class ErrorType(StrEnum):
    """apimachinery's ``field.ErrorType``: value is the cause ``reason``; ``text`` the rendered label."""

    NOT_FOUND = "FieldValueNotFound"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    INTERNAL = "InternalError"
    TYPE_INVALID = "FieldValueTypeInvalid"

    @property
    def text(self) -> str:
        return _TYPE_TEXT[self]


_TYPE_TEXT = {
    ErrorType.NOT_FOUND: "Not found",
    ErrorType.REQUIRED: "Required value",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.INVALID: "Invalid value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.TOO_LONG: "Too long",
    ErrorType.TOO_MANY: "Too many",
    ErrorType.INTERNAL: "Internal error",
    ErrorType.TYPE_INVALID: "Invalid value",
}

_OMIT = object()  # bad value not rendered (Required, Forbidden, TooMany without count, Internal)


def render_value(value: Any) -> str:
    """Render a bad value the way apimachinery does: strings quoted, numbers bare, objects as JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return repr(value)


@dataclass(frozen=True)
class FieldError:
    """One validation error at a field path, worded and typed as kube's ``field.Error`` so Status causes
    match."""

    type: ErrorType
    field: str
    bad_value: Any = _OMIT
    detail: str = ""

    def error_body(self) -> str:
        """The text after ``<field>: ``, as ``field.Error.ErrorBody()`` renders it."""
        if (
            self.type in (ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL)
            or self.bad_value is _OMIT
        ):
            s = self.type.text
        else:
            s = f"{self.type.text}: {render_value(self.bad_value)}"
        if self.detail:
            s = f"{s}: {self.detail}"
        return s

    def __str__(self) -> str:
        return f"{self.field}: {self.error_body()}" if self.field else self.error_body()

    def to_cause(self) -> dict[str, str]:
        return {"reason": self.type.value, "message": self.error_body(), "field": self.field}


ErrorList = list[FieldError]


def required(path: Path | str, detail: str = "") -> FieldError:
    return FieldError(ErrorType.REQUIRED, str(path), _OMIT, detail)


def invalid(path: Path | str, value: Any, detail: str = "") -> FieldError:
    return FieldError(ErrorType.INVALID, str(path), value, detail)


def forbidden(path: Path | str, detail: str = "") -> FieldError:
    return FieldError(ErrorType.FORBIDDEN, str(path), _OMIT, detail)


def duplicate(path: Path | str, value: Any) -> FieldError:
    return FieldError(ErrorType.DUPLICATE, str(path), value, "")


def not_found(path: Path | str, value: Any) -> FieldError:
    return FieldError(ErrorType.NOT_FOUND, str(path), value, "")


def not_supported(path: Path | str, value: Any, valid_values: list[str] | None = None) -> FieldError:
    detail = ""
    if valid_values:
        detail = "supported values: " + ", ".join(orjson.dumps(v).decode() for v in valid_values)
    return FieldError(ErrorType.NOT_SUPPORTED, str(path), value, detail)


def too_many(path: Path | str, actual: int, limit: int) -> FieldError:
    """``field.TooMany``: ``Too many: 5: must have at most 4 items``."""
    noun = "item" if limit == 1 else "items"
    return FieldError(ErrorType.TOO_MANY, str(path), actual, f"must have at most {limit} {noun}")


def too_long(path: Path | str, limit: int) -> FieldError:
    return FieldError(ErrorType.TOO_LONG, str(path), _OMIT, f"may not be more than {limit} bytes")


def internal(path: Path | str, detail: str) -> FieldError:
    return FieldError(ErrorType.INTERNAL, str(path), _OMIT, detail)


def type_invalid(path: Path | str, value: Any, detail: str) -> FieldError:
    return FieldError(ErrorType.TYPE_INVALID, str(path), value, detail)


@dataclass
class Errors:
    """A small accumulator when a validator prefers ``errs.add(...)`` over list plumbing."""

    items: ErrorList = field(default_factory=list)

    def add(self, *errs: FieldError) -> None:
        self.items.extend(errs)

    def extend(self, errs: ErrorList) -> None:
        self.items.extend(errs)

    def __bool__(self) -> bool:
        return bool(self.items)


def aggregate_message(errs: ErrorList) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one error bare, several in ``[a, b]``."""
    if len(errs) == 1:
        return str(errs[0])
    return "[" + ", ".join(str(e) for e in errs) + "]"
