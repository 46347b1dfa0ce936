"""``--stages FILE`` and the plugin's ``stages=``: a user stage file joined to the fleet the agent gets."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import yaml


def with_stage_file(fleet: Any, path: Path) -> Any:
    """``fleet`` (None: the default fleet) with the stages of ``path`` appended; ``ValueError``
    (naming the field) when the file is not a valid stage file."""
    from controllers.fleet import default_fleet
    from controllers.nodeagent.lifecycle import lifecycle_for
    from controllers.nodeagent.userstages import REPLACE_KEY, parse_stages

    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise ValueError(f"invalid YAML: {e}") from e
    parsed = parse_stages(data, str(path))  # validated now, so a bad file stops the start
    lifecycle_for(parsed)  # and its lifecycle stages compile with the shipped ones
    items = list((data.get("stages") if isinstance(data, dict) else data) or [])
    if parsed.replace_defaults:
        # the document-level switch, carried as the list item the fleet's stages: understands
        items.insert(0, {REPLACE_KEY: True})
    base = fleet if fleet is not None else default_fleet()
    return dataclasses.replace(base, stages=(*base.stages, *items))


__all__ = ["with_stage_file"]
