"""ResourceDef's identity texts (``group_version``, ``api_version``, ``storage_key``) are made once
per definition (``functools.cached_property`` on a frozen dataclass): each must equal the form
made from the fields, per definition, and a replaced definition must make its own."""

from __future__ import annotations

import dataclasses

from apiserver.rest.resources import ResourceDef
from apiserver.server.instance import build_api


def _group_version(rd: ResourceDef) -> str:
    return f"{rd.group}/{rd.version}" if rd.group else rd.version


def test_every_served_definition_answers_its_fields_texts() -> None:
    api = build_api()
    rds = list(api.registry.all())
    assert len(rds) > 50
    for rd in rds:
        for _ in range(2):  # made, then remembered
            assert rd.group_version == _group_version(rd)
            assert rd.api_version == _group_version(rd)
            assert rd.storage_key == (rd.storage_of or (rd.group, rd.plural))


def test_a_replaced_definition_makes_its_own_texts_and_compares_by_fields() -> None:
    rd = ResourceDef("apps", "v1", "StatefulSet", "statefulsets", True)
    assert rd.api_version == "apps/v1" and rd.storage_key == ("apps", "statefulsets")
    other = dataclasses.replace(rd, group="", version="v2", plural="things")
    assert other.api_version == "v2" and other.group_version == "v2"
    assert other.storage_key == ("", "things")
    shared = dataclasses.replace(rd, storage_of=("", "events"))
    assert shared.storage_key == ("", "events")
    # the remembered texts are no fields: equality and hashing are the fields' own
    fresh = ResourceDef("apps", "v1", "StatefulSet", "statefulsets", True)
    assert fresh == rd and hash(fresh) == hash(rd)
    assert rd.api_version == "apps/v1" and fresh.api_version == "apps/v1"
