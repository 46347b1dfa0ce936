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


def _sliced(hex_text: str) -> list[str]:
    """The texts cut the general way: one f-string of five slices per uid (the pool before session 16)."""
    h = hex_text
    return [
        f"{h[at : at + 8]}-{h[at + 8 : at + 12]}-{h[at + 12 : at + 16]}-{h[at + 16 : at + 20]}-{h[at + 20 : at + 32]}"
        for at in range(0, len(h), 32)
    ]


def test_uid_texts_are_the_sliced_texts() -> None:
    """The batch formatting (strided copies into dashed templates) against slicing each uid, on
    random digits and on batches of every hex digit in every position, 0 to 300 uids."""
    import random

    from apiserver.meta import uid_texts

    rng = random.Random(16)
    digits = "0123456789abcdef"
    batches = [0, 1, 2, 7, 31, 256, 300]
    for count in batches:
        for _ in range(5):
            text = "".join(rng.choice(digits) for _ in range(32 * count))
            assert uid_texts(text.encode()) == _sliced(text)
    # each digit at each of the 32 positions, the others a different digit
    for pos in range(32):
        for d in digits:
            other = "f" if d != "f" else "0"
            text = other * pos + d + other * (31 - pos)
            assert uid_texts(text.encode()) == _sliced(text)
    raw = os.urandom(16 * 64)
    assert uid_texts(raw.hex().encode()) == _sliced(raw.hex())
