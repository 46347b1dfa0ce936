"""``bench/micro/ablation_cpu.py``: each piece it switches off is really off, and only then.

The script's figures say what the plane saves without a piece, so a switch that left the piece
running (or switched off more than it names) would make them say nothing: each variant is
checked by what a client sees of a stored object, and a run reports the set's figures."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import CONFIGMAPS
from apiserver.errors import StatusError
from bench.micro.ablation_cpu import PIECES, WHOLE, _variant, measure, off_args, report, switched_off
from bench.workloads.common import start_plane

pytestmark = pytest.mark.anyio


async def _writes(pieces: list[str], body: Any) -> tuple[Any, Any, str]:
    """The ConfigMap as stored after its create, and after an update (Nones and the reason when refused)."""
    with switched_off(pieces):
        cp = await start_plane([])
    try:
        client = cp.client("t")
        try:
            await client.create(CONFIGMAPS, body, "default")
        except StatusError as e:
            return None, None, e.reason
        created = await client.get(CONFIGMAPS, "c", "default")
        changed = {**created, "data": {"b": "2"}}
        return created, await client.update(CONFIGMAPS, changed, "default"), ""
    finally:
        await cp.stop()


def _managers(obj: dict[str, Any]) -> list[str]:
    return [e["manager"] for e in obj["metadata"].get("managedFields") or []]


async def test_managed_fields_off_stores_none_and_on_keeps_kubes() -> None:
    body = {"metadata": {"name": "c"}, "data": {"a": "1"}}
    created, updated, _ = await _writes([], dict(body))
    assert _managers(created) == _managers(updated) == ["t"]
    created, updated, _ = await _writes(["managed-fields"], dict(body))
    assert "managedFields" not in created["metadata"] and "managedFields" not in updated["metadata"]


async def test_managed_fields_update_off_leaves_the_creates_entry_as_written() -> None:
    body = {"metadata": {"name": "c"}, "data": {"a": "1"}}
    created, updated, _ = await _writes(["managed-fields-update"], dict(body))
    assert _managers(created) == ["t"]
    # the create's entry stays as it was written: the update did not track its change
    assert updated["metadata"]["managedFields"] == created["metadata"]["managedFields"]
    _, whole, _ = await _writes([], dict(body))
    assert set(whole["metadata"]["managedFields"][0]["fieldsV1"]["f:data"]) == {".", "f:b"}


async def test_field_validation_off_lets_a_wrong_type_through() -> None:
    body = {"metadata": {"name": "c"}, "data": {"a": 1}}
    _, _, reason = await _writes([], dict(body))
    assert reason == "BadRequest"
    created, _, reason = await _writes(["field-validation"], dict(body))
    assert created is not None and not reason


async def test_unknown_piece_is_refused_naming_the_known() -> None:
    with pytest.raises(ValueError, match="managed-fields"), switched_off(["no-such"]):
        pass
    assert set(PIECES) >= {"managed-fields", "admission"}


async def test_a_run_reports_the_sets_figures_and_the_report_compares_them() -> None:
    got = await measure(sets=4, pieces=["managed-fields"], nodes=40)
    assert 0 < got["phase"] <= got["drained"] and got["events_total"] == 8
    lines = report({WHOLE: [got, got], "managed-fields": [got, {**got, "phase": got["phase"] / 2}]})
    assert any(line.startswith("managed-fields") and "x0.750  by rounds x0.750" in line for line in lines), (
        lines
    )
    # a machine drifting between rounds: the two figures part, and each is printed as itself
    p = got["phase"]
    whole = [{**got, "phase": p}, {**got, "phase": 4 * p}, {**got, "phase": 10 * p}]
    off = [{**got, "phase": 0.9 * p}, {**got, "phase": 5 * p}, {**got, "phase": 9 * p}]
    lines = report({WHOLE: whole, "managed-fields": off})
    assert any(line.startswith("managed-fields") and "x1.250  by rounds x0.900" in line for line in lines), (
        lines
    )


async def test_admission_off_lets_a_create_into_a_namespace_that_does_not_exist() -> None:
    from apiserver.client.interface import CONFIGMAPS

    for pieces, refused in (([], True), (["admission"], False)):
        with switched_off(pieces):
            cp = await start_plane([])
        try:
            client = cp.client("t")
            body = {"metadata": {"name": "c", "namespace": "nowhere"}, "data": {}}
            try:
                await client.create(CONFIGMAPS, body, "nowhere")
                got = False
            except StatusError as e:
                got = e.code == 404
            assert got is refused, pieces
        finally:
            await cp.stop()


async def test_metadata_validation_off_stores_a_label_value_kube_refuses() -> None:
    body = {"metadata": {"name": "c", "labels": {"a": "not a valid value!"}}, "data": {}}
    _, _, reason = await _writes([], dict(body))
    assert reason == "Invalid"
    created, _, reason = await _writes(["metadata-validation"], dict(body))
    assert created is not None and not reason


def test_a_variant_of_joined_pieces_switches_them_off_together_and_an_unknown_part_is_refused() -> None:
    import argparse

    assert _variant("managed-fields+admission") == "managed-fields+admission"
    assert off_args("managed-fields+admission") == ["--off", "managed-fields", "admission"]
    assert off_args("admission") == ["--off", "admission"] and off_args(WHOLE) == []
    with pytest.raises(argparse.ArgumentTypeError, match="no-such-piece"):
        _variant("admission+no-such-piece")
