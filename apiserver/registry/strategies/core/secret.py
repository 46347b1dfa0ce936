"""Secrets (``pkg/registry/core/secret``): base64 data as Go decodes it, types, sizes and immutability."""

from __future__ import annotations

import base64
import binascii

from apiserver import field
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies.core.common import (
    _B64_ALPHABET,
    _SECRET_REQUIRED_KEYS,
    UntrackedGenerationStrategy,
    _str,
    _validate_immutable_data,
    is_config_map_key,
)
from apiserver.registry.strategies.podspec import (
    as_dict,
    fmt_errors,
)
from apiserver.rest.strategy import Obj, StrategyContext
from apiserver.validation.meta import (
    validate_immutable,
)

MAX_SECRET_SIZE = 1024 * 1024


def decode_base64(s: str) -> tuple[bytes, int | None]:
    """Go's ``base64.StdEncoding.Decode`` as JSON ``[]byte`` uses it: ``(bytes, bad offset)``.

    The offset is what ``illegal base64 data at input byte N`` reports (``None`` if valid);
    ``\\r`` and ``\\n`` are skipped, padding is mandatory.
    """
    data = s.encode("utf-8", "surrogatepass")
    if len(data) % 4 == 0 and b"\n" not in data and b"\r" not in data:
        # The common case in C (a helm release Secret is hundreds of KB): strict binascii accepts
        # exactly what Go accepts for whole quanta without line breaks; whatever it refuses takes
        # the walk below, which finds the offset Go reports.
        try:
            return binascii.a2b_base64(data, strict_mode=True), None
        except binascii.Error:
            pass
    return decode_base64_walk(data)


def decode_base64_walk(data: bytes) -> tuple[bytes, int | None]:
    """:func:`decode_base64` one symbol at a time, as Go's decoder reads: exact, and slow."""
    out = bytearray()
    si, n = 0, len(data)
    while True:
        quantum: list[int] = []
        while len(quantum) < 4:
            if si == n:
                if not quantum:
                    return bytes(out), None
                return bytes(out), si - len(quantum)
            ch = chr(data[si])
            si += 1
            if ch in _B64_ALPHABET and data[si - 1] < 128:
                quantum.append(_B64_ALPHABET[ch])
                continue
            if ch in "\r\n":
                continue
            if ch != "=":
                return bytes(out), si - 1
            # padding: only after two or three symbols
            if len(quantum) < 2:
                return bytes(out), si - 1
            if len(quantum) == 2:
                while si < n and chr(data[si]) in "\r\n":
                    si += 1
                if si == n:
                    return bytes(out), n
                if chr(data[si]) != "=":
                    return bytes(out), si - 1
                si += 1
            while si < n and chr(data[si]) in "\r\n":
                si += 1
            if si < n:
                return bytes(out), si
            break
        val = 0
        for q in quantum:
            val = (val << 6) | q
        val <<= 6 * (4 - len(quantum))
        raw = val.to_bytes(3, "big")
        out += raw[: len(quantum) - 1] if len(quantum) < 4 else raw
        if len(quantum) < 4:
            return bytes(out), None


class SecretStrategy(UntrackedGenerationStrategy):
    """Secrets: ``Opaque`` by default, ``stringData`` folded into ``data``, base64 checked."""

    def default(self, obj: Obj) -> None:
        if not obj.get("type"):
            obj["type"] = "Opaque"
        sd = obj.pop("stringData", None)
        if isinstance(sd, dict) and sd:
            data = obj.get("data")
            if not isinstance(data, dict):
                data = {}
                obj["data"] = data
            for k, v in sd.items():
                data[k] = base64.b64encode(_str(v).encode("utf-8")).decode("ascii")

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_secret(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        errs = validate_immutable(new.get("type"), old.get("type"), Path("type"))
        errs.extend(_validate_immutable_data(new, old, ("data",)))
        errs.extend(validate_secret(new))
        return errs


def validate_secret(obj: Obj) -> ErrorList:
    """``ValidateSecret``: keys, base64 values, 1 MiB, per-type required keys."""
    errs: ErrorList = []
    dp = Path("data")
    total = 0
    data = as_dict(obj.get("data"))
    for key, value in data.items():
        if is_config_map_key(key):  # the path is built only for a bad key
            errs.extend(fmt_errors(key, dp.key(key), is_config_map_key))
        decoded, bad = decode_base64(_str(value))
        if bad is not None:
            errs.append(
                field.invalid(
                    dp.key(key), "<secret contents redacted>", f"illegal base64 data at input byte {bad}"
                )
            )
        total += len(decoded)
    if total > MAX_SECRET_SIZE:
        errs.append(field.too_long(dp, MAX_SECRET_SIZE))
    stype = _str(obj.get("type"))
    if stype == "kubernetes.io/service-account-token":
        ann = as_dict(as_dict(obj.get("metadata")).get("annotations"))
        if not ann.get("kubernetes.io/service-account.name"):
            errs.append(
                field.required(Path("metadata", "annotations").key("kubernetes.io/service-account.name"))
            )
    elif stype == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            errs.append(field.required(dp.key("username")))
            errs.append(field.required(dp.key("password")))
    else:
        for key in _SECRET_REQUIRED_KEYS.get(stype, ()):
            if key not in data or (stype == "kubernetes.io/ssh-auth" and not data.get(key)):
                errs.append(field.required(dp.key(key)))
    return errs
