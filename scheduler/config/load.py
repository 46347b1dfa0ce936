"""Reading ``--scheduler-config FILE``: decode, default, validate, build the profiles (kube-scheduler's ``--config``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from apiserver.field import aggregate_message
from scheduler.config.configz import configz
from scheduler.config.decode import DecodeError, check_kind, strict_errors
from scheduler.config.defaults import set_defaults
from scheduler.config.profiles import ProfileError, build_profile
from scheduler.config.validation import validate_config
from scheduler.interfaces import Profile

Obj = dict[str, Any]


class ConfigError(ValueError):
    """The configuration cannot be used; the message is what kube-scheduler would print (and exit on)."""


@dataclass
class SchedulerConfig:
    """A loaded configuration: what the scheduler runs with and what ``/configz`` shows."""

    #: the defaulted v1 document (``apiVersion``/``kind`` included), as ``/configz`` serves it
    effective: Obj
    profiles: list[Profile] = field(default_factory=list)
    pod_initial_backoff: float = 1.0
    pod_max_backoff: float = 10.0

    def configz(self) -> Obj:
        """The effective configuration as kube-scheduler's ``/configz`` serves it under
        ``componentconfig`` (see :mod:`scheduler.config.configz`)."""
        return configz(self.effective)


def scheduler_config_from(
    doc: Any, registry: Mapping[str, Callable[[dict[str, Any], Any], Any]] | None = None
) -> SchedulerConfig:
    """A :class:`SchedulerConfig` from a parsed document; :class:`ConfigError` as kube-scheduler would refuse it."""
    from scheduler.defaults import default_registry

    try:
        check_kind(doc)
    except DecodeError as e:
        raise ConfigError(str(e)) from e
    unknown, type_errors = strict_errors(doc)
    if unknown:
        raise ConfigError("strict decoding error: " + ", ".join(f'unknown field "{u}"' for u in unknown))
    if type_errors:
        raise ConfigError(aggregate_message(type_errors))
    cfg = set_defaults(doc)
    errs = validate_config(cfg)
    if errs:
        raise ConfigError(aggregate_message(errs))
    reg = registry if registry is not None else default_registry()
    profiles: list[Profile] = []
    for i, prof in enumerate(cfg["profiles"]):
        try:
            profiles.append(build_profile(prof, reg, cfg.get("percentageOfNodesToScore")))
        except ProfileError as e:
            raise ConfigError(
                f"couldn't create scheduler: initializing profiles: creating profile for scheduler name "
                f"{prof.get('schedulerName', '')}: {e} (at {_user_path(doc, i, e)})"
            ) from e
    return SchedulerConfig(
        effective=cfg,
        profiles=profiles,
        pod_initial_backoff=float(cfg["podInitialBackoffSeconds"]),
        pod_max_backoff=float(cfg["podMaxBackoffSeconds"]),
    )


def _user_path(doc: Obj, i: int, e: ProfileError) -> str:
    """Where the failing entry is in the user's own file: ``profiles[0].plugins.score.enabled[2]``,
    the plugin's ``pluginConfig`` entry, or (a default plugin) just the profile."""
    path = f"profiles[{i}]"
    profiles = doc.get("profiles") or []
    prof = profiles[i] if i < len(profiles) else {}
    if e.point:
        for j, p in enumerate(((prof.get("plugins") or {}).get(e.point) or {}).get("enabled") or []):
            if p.get("name") == e.plugin:
                return f"{path}.plugins.{e.point}.enabled[{j}]"
    for j, pc in enumerate(prof.get("pluginConfig") or []):
        if e.plugin and pc.get("name") == e.plugin:
            return f"{path}.pluginConfig[{j}]"
    return path


def load_scheduler_config(
    path: str | Path, registry: Mapping[str, Callable[[dict[str, Any], Any], Any]] | None = None
) -> SchedulerConfig:
    """Read, decode, default, validate and build ``path`` (YAML or JSON)."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise ConfigError(f"failed to read config file {str(path)!r}: {e.strerror or e}") from e
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"couldn't decode the configuration: {e}") from e
    return scheduler_config_from(doc, registry)


def default_scheduler_config() -> SchedulerConfig:
    """The configuration kube-scheduler runs with when it is given none (``/configz`` without a file)."""
    return scheduler_config_from(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    )
