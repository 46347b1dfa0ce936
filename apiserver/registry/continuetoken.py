"""The ``continue`` token of a paged LIST, encoded and decoded as kube's ``storage`` package does.

A token is unpadded URL-safe base64 of ``{"v":"meta.k8s.io/v1","rv":<int64>,"start":"<key>"}``.
kube decodes it with Go's ``encoding/json`` into typed fields, so a client-made token is judged by
Go's rules, not Python's: ``rv`` must be an integer literal within int64 (``1.5``, ``"1"`` and
``99999999999999999999`` are decoding errors, never a 410 or a 500), field names match
case-insensitively, unknown fields are ignored and ``null`` leaves a field at its zero value.
Every failure is a 400 ``invalid continue token: continue key is not valid…`` with kube's text.
A negative ``rv`` is kube's "continue at the latest revision" (the token of an expired list).
"""

from __future__ import annotations

import base64
import binascii
import json
import posixpath
import re
from typing import Any

import orjson

from apiserver import errors

VERSION = "meta.k8s.io/v1"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

_INVALID = "continue key is not valid"
_INVALID_START_RV = f"{_INVALID}: incorrect encoded start resourceVersion (version {VERSION})"
_EMPTY_START_KEY = f"{_INVALID}: encoded start key empty (version {VERSION})"
_UNRECOGNIZED = f"{_INVALID}: server does not recognize this encoded version"
_B64 = re.compile(r"[A-Za-z0-9_-]*")
#: the Go field type each token field decodes into
_FIELDS = {"v": "string", "rv": "int64", "start": "string"}


class _Num(str):
    """A JSON number kept as its literal text (Go decides whether it fits the field's type)."""


def encode(rv: int, start: str) -> str:
    """The token continuing a list at revision ``rv`` from key ``start`` (``ns/name``)."""
    payload = orjson.dumps({"v": VERSION, "rv": rv, "start": start})
    return base64.urlsafe_b64encode(payload).decode().rstrip("=")


def _bad(detail: str) -> errors.StatusError:
    return errors.bad_request(f"invalid continue token: {detail}")


def _b64decode(token: str) -> bytes:
    """Go's ``base64.RawURLEncoding.DecodeString``: the URL alphabet, no padding, no stray bytes."""
    m = _B64.match(token)
    bad_at = m.end() if m is not None and m.end() < len(token) else -1
    if bad_at < 0 and len(token) % 4 == 1:
        bad_at = len(token) - 1
    if bad_at >= 0:
        raise _bad(f"{_INVALID}: illegal base64 data at input byte {bad_at}")
    try:
        return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError) as e:  # not reached for a well-formed alphabet; kept total
        raise _bad(f"{_INVALID}: illegal base64 data at input byte 0") from e


def _go_kind(v: Any) -> str:
    if isinstance(v, _Num):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, list):
        return "array"
    return "object"


def _no_constant(name: str) -> Any:
    raise ValueError(f"invalid character '{name[0]}' looking for beginning of value")


def _decode_json(data: bytes) -> dict[str, Any]:
    """Go's ``json.Unmarshal`` into the token struct: typed fields, case-insensitive names."""
    try:
        doc = json.loads(
            data.decode("utf-8", "replace"),
            parse_int=_Num,
            parse_float=_Num,
            parse_constant=_no_constant,
        )
    except ValueError as e:
        raise _bad(f"{_INVALID}: {e}") from e
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise _bad(
            f"{_INVALID}: json: cannot unmarshal {_go_kind(doc)} into Go value of type storage.continueToken"
        )
    out: dict[str, Any] = {}
    for key, value in doc.items():
        field = key.lower()
        go_type = _FIELDS.get(field)
        if go_type is None or value is None:  # unknown fields are ignored; null keeps the zero value
            continue
        wrong = f"{_INVALID}: json: cannot unmarshal {{}} into Go struct field continueToken.{field} of type {go_type}"
        if go_type == "string":
            if not isinstance(value, str) or isinstance(value, _Num):
                raise _bad(wrong.format(_go_kind(value)))
            out[field] = str(value)
            continue
        if not isinstance(value, _Num):
            raise _bad(wrong.format(_go_kind(value)))
        try:
            n = int(value)
        except ValueError:
            n = None
        if n is None or not INT64_MIN <= n <= INT64_MAX:
            raise _bad(wrong.format(f"number {value}"))
        out[field] = n
    return out


def decode(token: str) -> tuple[int | None, tuple[str, str]]:
    """``(rv, (namespace, name))`` of a token; ``rv`` is None for "the latest revision"."""
    fields = _decode_json(_b64decode(token))
    version = fields.get("v", "")
    if version != VERSION:
        raise _bad(f"{_UNRECOGNIZED} {version}")
    rv = fields.get("rv", 0)
    if rv == 0:
        raise _bad(_INVALID_START_RV)
    start = fields.get("start", "")
    if not start:
        raise _bad(_EMPTY_START_KEY)
    key = start if start.startswith("/") else "/" + start
    if posixpath.normpath(key) != key or key.startswith("//"):
        # path.Clean would change it: a start key climbing out of the resource's prefix
        raise _bad(f"{_INVALID}: {start}")
    ns, _, name = start.rpartition("/")
    return (rv if rv > 0 else None), (ns, name)
