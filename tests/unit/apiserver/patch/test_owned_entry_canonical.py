"""A templated create's joined ``fieldsV1`` tree is canonical as built
(:func:`apiserver.storage.compact.canonical_as_built`), so the stored record's compaction
(:func:`apiserver.storage.compact.compact`) leaves it as it is instead of encoding it again.

Random owned objects (pods, PodGroups, Workloads, ControllerRevisions with one to three owner
references, :mod:`.test_owned_entry_template`'s generator) are created through the templates, and
every template answer is held against what compaction makes of the same entry without the
shortcut (a fresh decoding of the entry's text, compacted): the same text, key for key and in
order; compaction hands the template's own tree back; and the tree is not kept under its text
(it names its owners: no other tree has it). A join left unregistered fails it.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from apiserver.patch import ownedentry
from apiserver.patch.createentry import CreatedEntryTemplates
from apiserver.storage import compact

from .test_create_entry_template import template_entries
from .test_owned_entry_template import _owned_objects


@pytest.fixture(autouse=True)
def _fresh_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """The canonical trees start empty: what earlier tests left there would answer for a spoilt join."""
    for name in ("_TREES", "_BY_ID", "_MET"):
        monkeypatch.setattr(compact, name, {})


def _record(tree: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"managedFields": [{"manager": "m", "fieldsV1": tree}]}}


def _check(seed: int, n: int = 500) -> tuple[int, int]:
    """``(problems, template answers)`` over ``n`` random owned creates."""
    rnd = random.Random(seed)
    templates = CreatedEntryTemplates()
    problems = answered = 0
    for obj, node in _owned_objects(rnd, n):
        got, asked_general = template_entries(templates, obj, node, "kcm", "apps/v1", "t0")
        if asked_general or got is None:
            continue
        answered += 1
        tree = got[0]["fieldsV1"]
        text = orjson.dumps(tree)
        # what compaction makes of the same entry decoded afresh has the template's text, and of
        # the template's own entry, the template's tree (nothing rebuilt, nothing encoded again)
        fresh = compact.compact(_record(orjson.loads(text)))["metadata"]["managedFields"][0]["fieldsV1"]
        stored = compact.compact(_record(tree))["metadata"]["managedFields"][0]["fieldsV1"]
        problems += orjson.dumps(fresh) != text or stored is not tree or compact._TREES.get(text) is tree
    return problems, answered


@pytest.mark.parametrize("seed", range(3))
def test_a_templated_join_is_canonical_as_built(seed: int) -> None:
    problems, answered = _check(seed)
    assert problems == 0
    assert answered > 150  # the templates answered (the shortcut was exercised)


def test_a_join_left_unregistered_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ownedentry, "canonical_as_built", lambda joined: joined)
    assert _check(0, 200)[0] > 0
