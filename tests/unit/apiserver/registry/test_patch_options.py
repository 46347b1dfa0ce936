"""A patch's options made field by field (``generic._patch_options``) are those of
``dataclasses.replace(opts, patch=True)``, for every field the options have (a field added to
``WriteOptions`` and not to the shortcut fails here)."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from apiserver.registry import generic
from apiserver.registry.generic import WriteOptions


@dataclasses.dataclass
class _Sub(WriteOptions):
    extra: int = 0


def _value(rnd: random.Random, f: dataclasses.Field[Any]) -> Any:
    return rnd.choice([True, False, "", "m", b"raw", None, object(), 7])


def test_a_patchs_options_are_the_replaced_ones() -> None:
    rnd = random.Random(0)
    for _ in range(500):
        values = {f.name: _value(rnd, f) for f in dataclasses.fields(WriteOptions)}
        opts = WriteOptions(**values)
        got = generic._patch_options(opts)
        want = dataclasses.replace(opts, patch=True)
        assert type(got) is WriteOptions and got is not opts
        for f in dataclasses.fields(WriteOptions):
            assert getattr(got, f.name) is getattr(want, f.name), f.name
    assert generic._patch_options(None) == WriteOptions(patch=True)
    sub = _Sub(field_manager="m", extra=3)
    assert generic._patch_options(sub) == _Sub(field_manager="m", extra=3, patch=True)
