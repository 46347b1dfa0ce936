"""ConfigMaps (``pkg/registry/core/configmap``): keys, sizes and immutability."""

from __future__ import annotations

from apiserver import field
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies.core.common import (
    UntrackedGenerationStrategy,
    _str,
    _validate_immutable_data,
    all_config_map_keys,
    is_config_map_key,
)
from apiserver.registry.strategies.core.secret import MAX_SECRET_SIZE, decode_base64
from apiserver.registry.strategies.podspec import (
    as_dict,
    fmt_errors,
)
from apiserver.rest.strategy import Obj, StrategyContext
from apiserver.validation import names


class ConfigMapStrategy(UntrackedGenerationStrategy):
    """ConfigMaps: config-key names, 1 MiB total, optional immutability."""

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_config_map(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return _validate_immutable_data(new, old, ("data", "binaryData")) + validate_config_map(new)


def validate_config_map(obj: Obj) -> ErrorList:
    errs: ErrorList = []
    total = 0
    data, binary = as_dict(obj.get("data")), as_dict(obj.get("binaryData"))
    keys = [k for k in data if isinstance(k, str)]
    if len(keys) == len(data) and all_config_map_keys(keys) and not (binary and binary.keys() & data.keys()):
        # the common case of a large map in a few C passes: every key good, no duplicate
        values = [v if isinstance(v, str) else "" for v in data.values()]
        total += sum(map(names.byte_len, values))
    else:
        for key, value in data.items():
            if is_config_map_key(key):  # the path is built only for a bad key
                errs.extend(fmt_errors(key, Path("data").key(key), is_config_map_key))
            if key in binary:
                errs.append(
                    field.invalid(Path("data").key(key), key, "duplicate of key present in binaryData")
                )
            total += names.byte_len(_str(value))
    for key, value in binary.items():
        if is_config_map_key(key):
            errs.extend(fmt_errors(key, Path("binaryData").key(key), is_config_map_key))
        decoded, _ = decode_base64(_str(value))
        total += len(decoded)
    if total > MAX_SECRET_SIZE:
        errs.append(field.too_long("", MAX_SECRET_SIZE))
    return errs
