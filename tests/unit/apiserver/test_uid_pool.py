"""UidPool: the uids of creates drawn a batch at a time are new_uid's values (random v4 UUIDs in
canonical text), never repeated, and dropped in a forked child."""

from __future__ import annotations

import os
import re
import uuid

import pytest

from apiserver.meta import UidPool, new_uid
from apiserver.server.instance import build_api

CANONICAL = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def test_pool_uids_are_canonical_random_v4_uuids_like_new_uid() -> None:
    pool = UidPool(batch=7)  # several refills, one of them partial use
    got = [pool() for _ in range(7 * 40 + 3)]
    for u in got + [new_uid()]:
        parsed = uuid.UUID(u)
        assert CANONICAL.match(u), u
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert str(parsed) == u
    assert len(set(got)) == len(got)


def test_pool_keeps_every_other_bit_random() -> None:
    """Each of the 122 free bits takes both values over a few hundred uids (a pool that fixed
    or reused bytes, e.g. a masked-out block, would show a constant bit)."""
    pool = UidPool(batch=16)
    ints = [uuid.UUID(pool()).int for _ in range(512)]
    fixed = (0xF << 76) | (0x3 << 62)  # version nibble, variant bits
    ones = 0
    zeros = 0
    for v in ints:
        ones |= v
        zeros |= ~v
    free = ((1 << 128) - 1) & ~fixed
    assert ones & free == free and zeros & free == free


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_draws_none_of_the_parents_uids() -> None:
    pool = UidPool(batch=64)
    pool()  # the batch is drawn: 63 uids left in it
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its next uid
        try:
            os.write(w, pool().encode())
        finally:
            os._exit(0)
    os.close(w)
    child = os.read(r, 64).decode()
    os.close(r)
    os.waitpid(pid, 0)
    parents = {pool() for _ in range(63)}
    assert CANONICAL.match(child)
    assert child not in parents


def test_created_objects_get_distinct_pool_uids() -> None:
    api = build_api()
    rd = api.registry.get("", "v1", "configmaps")
    assert rd is not None
    uids = [
        api.create(rd, "default", {"metadata": {"name": f"c{i}"}, "data": {"a": "b"}}).obj["metadata"]["uid"]
        for i in range(300)
    ]
    assert len(set(uids)) == 300
    assert all(CANONICAL.match(u) for u in uids)
