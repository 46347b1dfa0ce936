"""What the core/v1 strategies share: key and IP checks, status handling, the untracked-generation base."""

from __future__ import annotations

import copy
import ipaddress
import re
from typing import Any

from apiserver import field
from apiserver.field import ErrorList
from apiserver.registry.strategies.podspec import (
    canonical_resource_list,
)
from apiserver.rest.strategy import Obj, Strategy
from apiserver.validation import names

_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"


_CONFIG_KEY_RE = re.compile(_CONFIG_KEY_FMT)


def _spec(obj: Obj) -> Obj:
    """``obj["spec"]`` as a dict, created when missing or malformed (defaulting writes into it)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = {}
        obj["spec"] = spec
    return spec


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def is_config_map_key(value: str) -> list[str]:
    """``IsConfigMapKey``: the keys of ConfigMap/Secret data and projected items."""
    errs: list[str] = []
    if names.byte_len(value) > names.DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(names.max_len_error(names.DNS1123_SUBDOMAIN_MAX_LENGTH))
    if _CONFIG_KEY_RE.fullmatch(value) is None:
        errs.append(
            names.regex_error(
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                _CONFIG_KEY_FMT,
                "key.name",
                "KEY_NAME",
                "key-name",
            )
        )
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


#: a newline-joined run of keys that ``is_config_map_key`` accepts, none starting with ``..``:
#: lets a map of 100,000 keys be checked in one C call (a key holding a newline fails it)
_CONFIG_KEYS_RE = re.compile(r"(?:(?!\.\.)[-._a-zA-Z0-9]+\n)*")


def all_config_map_keys(keys: list[str]) -> bool:
    """Whether every key passes :func:`is_config_map_key` (the bulk check of a whole map).

    The pattern refuses a key starting with ``..`` (so ``..`` too); ``.`` alone and a key
    holding a newline (which would read as two keys) are ruled out before it.
    """
    if not keys:
        return True
    if max(map(len, keys)) > names.DNS1123_SUBDOMAIN_MAX_LENGTH or "." in keys:
        return False
    joined = "\n".join(keys) + "\n"
    return joined.count("\n") == len(keys) and _CONFIG_KEYS_RE.fullmatch(joined) is not None


def is_valid_ip(value: str) -> list[str]:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]
    return []


def is_valid_cidr(value: str) -> list[str]:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return ["must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"]
    return [] if "/" in value else ["must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"]


def _canonical_status_lists(obj: Obj, *keys: str) -> None:
    status = obj.get("status")
    if isinstance(status, dict):
        for k in keys:
            if isinstance(status.get(k), dict):
                status[k] = canonical_resource_list(status[k])


def _keep_old_status(new: Obj, old: Obj) -> None:
    if "status" in old:
        new["status"] = copy.deepcopy(old["status"])
    else:
        new.pop("status", None)


class UntrackedGenerationStrategy(Strategy):
    """A resource whose kube strategy never bumps ``metadata.generation`` (no spec/status split)."""

    tracks_generation = False

    def generation_relevant(self, obj: Obj) -> Any:
        return None


def _validate_immutable_data(new: Obj, old: Obj, keys: tuple[str, ...]) -> ErrorList:
    """Objects marked ``immutable: true`` keep their data and the flag forever."""
    if old.get("immutable") is not True:
        return []
    errs: ErrorList = []
    if new.get("immutable") is not True:
        errs.append(field.forbidden("immutable", "field is immutable when `immutable` is set"))
    for key in keys:
        if new.get(key) != old.get(key):
            errs.append(field.forbidden(key, "field is immutable when `immutable` is set"))
    return errs


_B64_ALPHABET = {
    c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
}


_SECRET_REQUIRED_KEYS = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}


REPORTING_INSTANCE_LIMIT = 128


ACTION_LIMIT = 128


REASON_LIMIT = 128


NOTE_LIMIT = 1024
