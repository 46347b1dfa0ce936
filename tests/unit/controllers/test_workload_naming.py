"""Workload / PodGroup names follow the Job integration's scheme (upstream-facts §3)."""

from __future__ import annotations

import re

import pytest

from apiserver.workloadbuilder.naming import (
    fnv1a_32,
    pod_group_name,
    safe_encode_string,
    workload_name,
)

UID = "3f0b4c2e-1111-2222-3333-444455556666"
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def test_fnv1a_hashes_the_spew_rendering_of_the_uid() -> None:
    assert fnv1a_32(f"(types.UID){UID}".encode()) == 4184027056


@pytest.mark.parametrize(
    ("raw", "encoded"),
    [("0123456789", "456789bcdf"), ("4184027056", "85d846c49b"), ("", "")],
)
def test_safe_encode_string_maps_digits_into_the_safe_alphabet(raw: str, encoded: str) -> None:
    assert safe_encode_string(raw) == encoded


def test_workload_name_vector() -> None:
    assert workload_name("my-statefulset", UID) == "my-statefulset-85d846c49b"


def test_pod_group_name_vector() -> None:
    assert pod_group_name("my-statefulset-85d846c49b", "my-statefulset") == (
        "my-statefulset-85d846c49b-my-statefulset-74bf794bc"
    )


def test_pod_group_hash_is_over_the_concatenated_names() -> None:
    """``hasher.Write(wl); hasher.Write(tpl)`` equals hashing the concatenation."""
    suffix = pod_group_name("ab", "cd").rsplit("-", 1)[1]
    assert suffix == safe_encode_string(str(fnv1a_32(b"abcd")))


def test_workload_name_truncates_a_253_char_owner_name() -> None:
    name = workload_name("a" * 253, UID)
    assert len(name) == 253
    assert name.endswith("-85d846c49b")
    assert DNS_SUBDOMAIN.match(name)


@pytest.mark.parametrize(
    ("wl_len", "tpl_len", "want_wl", "want_tpl"),
    [
        # These inputs hash to 10-character suffixes: 253 - 10 - 2 = 241 bytes for both names.
        (10, 253, 10, 231),  # short workload kept whole, template truncated
        (253, 10, 231, 10),  # short template kept whole, workload truncated
        (253, 253, 121, 120),  # both long: template gets half (120), workload the rest
        (100, 100, 100, 100),  # fits: nothing truncated
    ],
)
def test_pod_group_name_truncation(wl_len: int, tpl_len: int, want_wl: int, want_tpl: int) -> None:
    name = pod_group_name("w" * wl_len, "t" * tpl_len)
    wl, tpl, suffix = name.split("-")
    assert len(suffix) == 10
    assert (len(wl), len(tpl)) == (want_wl, want_tpl)
    assert len(name) <= 253
    assert DNS_SUBDOMAIN.match(name)


def test_names_are_deterministic_and_uid_sensitive() -> None:
    assert workload_name("db", "uid-1") == workload_name("db", "uid-1")
    assert workload_name("db", "uid-1") != workload_name("db", "uid-2")


def _safe_encode_per_character(s: str) -> str:
    """``rand.SafeEncodeString`` as written upstream: one alphabet lookup per character."""
    alphanums = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(alphanums[ord(c) % len(alphanums)] for c in s)


@pytest.mark.parametrize("seed", range(3))
def test_safe_encode_string_table_equals_the_per_character_form(seed: int) -> None:
    """The byte-table path (ASCII) and the per-character path (anything else) both give
    upstream's mapping: every ASCII character, decimal hashes, and strings with non-ASCII
    characters (including lone surrogates, which cannot be encoded)."""
    import random

    from controllers import history

    rnd = random.Random(seed)
    samples = ["".join(map(chr, range(128))), str(2**32 - 1), "0"]
    for _ in range(3000):
        pool = rnd.choice([128, 256, 0xD800, 0xE000, 0x110000])
        samples.append("".join(chr(rnd.randrange(pool)) for _ in range(rnd.randrange(24))))
        samples.append(str(rnd.randrange(2**32)))
    assert any(not s.isascii() for s in samples) and any(
        "\ud800" <= c <= "\udfff" for s in samples for c in s
    )
    for s in samples:
        assert safe_encode_string(s) == _safe_encode_per_character(s)
        assert history.safe_encode(s) == _safe_encode_per_character(s)


def test_workload_name_continues_from_the_uid_prefix_state() -> None:
    """The hash continues from the state after ``(types.UID)``: the same as hashing the whole
    spew rendering, for random UIDs (ASCII or not) and names."""
    import random
    import uuid

    rnd = random.Random(7)
    for _ in range(500):
        uid = str(uuid.UUID(int=rnd.getrandbits(128))) if rnd.random() < 0.8 else "ü" * rnd.randrange(5)
        name = "".join(rnd.choice("abc-") for _ in range(rnd.randrange(1, 300)))
        suffix = safe_encode_string(str(fnv1a_32(f"(types.UID){uid}".encode())))
        assert workload_name(name, uid) == f"{name[: 253 - len(suffix) - 1]}-{suffix}"
