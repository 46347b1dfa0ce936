"""resource.Quantity: exact parsing, canonical strings, rounding accessors, ResourceList helper."""

from __future__ import annotations

from fractions import Fraction

import pytest

from apiserver.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    ERR_FORMAT_WRONG,
    ERR_NUMERIC,
    ERR_SUFFIX,
    add,
    canonicalize,
    format_quantity,
    parse_quantity,
    parse_quantity_full,
    resource_list_milli,
    sub,
    to_int,
    to_milli,
)

F = Fraction


@pytest.mark.parametrize(
    ("text", "value", "fmt", "canonical"),
    [
        ("0", F(0), DECIMAL_SI, "0"),
        ("1", F(1), DECIMAL_SI, "1"),
        ("4", F(4), DECIMAL_SI, "4"),
        ("0.1", F(1, 10), DECIMAL_SI, "100m"),
        ("1.5", F(3, 2), DECIMAL_SI, "1500m"),
        ("500m", F(1, 2), DECIMAL_SI, "500m"),
        ("1000m", F(1), DECIMAL_SI, "1"),
        ("1500m", F(3, 2), DECIMAL_SI, "1500m"),
        ("2000m", F(2), DECIMAL_SI, "2"),
        ("1k", F(1000), DECIMAL_SI, "1k"),
        ("1000", F(1000), DECIMAL_SI, "1k"),
        ("1M", F(10**6), DECIMAL_SI, "1M"),
        ("1.2345", F(12345, 10000), DECIMAL_SI, "1234500u"),
        ("1n", F(1, 10**9), DECIMAL_SI, "1n"),
        ("0.0000000001", F(1, 10**9), DECIMAL_SI, "1n"),  # rounds up to one nano
        ("-0.0000000001", F(-1, 10**9), DECIMAL_SI, "-1n"),
        ("1E", F(10**18), DECIMAL_SI, "1E"),
        ("1000E", F(10**21), DECIMAL_SI, "1e21"),
        ("1e3", F(1000), DECIMAL_EXPONENT, "1e3"),
        ("1E3", F(1000), DECIMAL_EXPONENT, "1E3"),  # kept verbatim, as upstream does
        ("1e+3", F(1000), DECIMAL_EXPONENT, "1e+3"),
        ("12e6", F(12 * 10**6), DECIMAL_EXPONENT, "12e6"),
        ("1500e0", F(1500), DECIMAL_EXPONENT, "1500e0"),
        ("15000e0", F(15000), DECIMAL_EXPONENT, "15e3"),
        ("1000e-3", F(1), DECIMAL_EXPONENT, "1"),
        ("1e-3", F(1, 1000), DECIMAL_EXPONENT, "1e-3"),
        ("1e-10", F(1, 10**9), DECIMAL_EXPONENT, "1e-9"),
        ("1Ki", F(1024), BINARY_SI, "1Ki"),
        ("100Mi", F(100 * 2**20), BINARY_SI, "100Mi"),
        ("1024Mi", F(2**30), BINARY_SI, "1Gi"),
        ("1.5Gi", F(3 * 2**29), BINARY_SI, "1536Mi"),
        ("0.5Gi", F(2**29), BINARY_SI, "512Mi"),
        ("1.1Ki", F(5632, 5), BINARY_SI, "1126400m"),
        ("0.5Ki", F(512), BINARY_SI, "512"),
        ("1Ei", F(2**60), BINARY_SI, "1Ei"),
        ("8Ei", F(2**63 - 1), BINARY_SI, "9223372036854775807"),  # capped
        ("-1", F(-1), DECIMAL_SI, "-1"),
        ("-1.5Gi", F(-3 * 2**29), BINARY_SI, "-1536Mi"),
        ("-500m", F(-1, 2), DECIMAL_SI, "-500m"),
        ("+1", F(1), DECIMAL_SI, "+1"),  # verbatim: upstream's fast path keeps the input
        ("01", F(1), DECIMAL_SI, "01"),
        ("1.", F(1), DECIMAL_SI, "1."),
        (".5", F(1, 2), DECIMAL_SI, "500m"),
        ("-0", F(0), DECIMAL_SI, "0"),
        ("0m", F(0), DECIMAL_SI, "0"),
        ("m", F(0), DECIMAL_SI, "0"),
        ("Ki", F(0), BINARY_SI, "0"),
        ("123456789012345678901", F(123456789012345678901), DECIMAL_SI, "123456789012345678901"),
        (" 2 ", F(2), DECIMAL_SI, "2"),
        (2, F(2), DECIMAL_SI, "2"),
        (0.5, F(1, 2), DECIMAL_SI, "500m"),
        (1e3, F(1000), DECIMAL_SI, "1k"),
    ],
)
def test_parse_and_canonicalize(text: str | int | float, value: Fraction, fmt: str, canonical: str) -> None:
    parsed = parse_quantity_full(text)
    assert parsed.value == value
    assert parse_quantity(text) == value
    assert parsed.format == fmt
    assert canonicalize(text) == canonical
    assert parse_quantity(canonical) == value  # the canonical form round-trips


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", ERR_FORMAT_WRONG),
        ("   ", ERR_FORMAT_WRONG),
        ("abc", ERR_FORMAT_WRONG),
        ("1Gb", ERR_FORMAT_WRONG),
        ("1.2.3", ERR_FORMAT_WRONG),
        ("1 Gi", ERR_FORMAT_WRONG),
        ("--1", ERR_SUFFIX),  # "-1" is scanned as a suffix
        ("1kk", ERR_SUFFIX),
        ("1e", ERR_SUFFIX),
        ("1e+", ERR_SUFFIX),
        ("1e99999", ERR_SUFFIX),
        ("Ei", ERR_NUMERIC),
        ("e-10", ERR_NUMERIC),
        (True, ERR_FORMAT_WRONG),
        (float("nan"), ERR_FORMAT_WRONG),
    ],
)
def test_parse_errors(text: str | float, message: str) -> None:
    with pytest.raises(ValueError) as ei:
        parse_quantity(text)
    assert str(ei.value) == message


def test_format_wrong_message_is_apimachinerys() -> None:
    assert ERR_FORMAT_WRONG == (
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


@pytest.mark.parametrize(
    ("text", "milli", "units"),
    [
        ("0", 0, 0),
        ("1", 1000, 1),
        ("100m", 100, 1),
        ("1.5", 1500, 2),
        ("0.1m", 1, 1),
        ("1n", 1, 1),
        ("250m", 250, 1),
        ("2", 2000, 2),
        ("1Ki", 1024000, 1024),
        ("-1.5", -1500, -2),  # upstream rounds away from zero
        ("-100m", -100, -1),
    ],
)
def test_milli_and_int(text: str, milli: int, units: int) -> None:
    assert to_milli(text) == milli
    assert to_int(text) == units
    assert to_milli(parse_quantity(text)) == milli


@pytest.mark.parametrize(
    ("value", "fmt", "out"),
    [
        (F(0), BINARY_SI, "0"),
        (F(3, 2) * 2**30, BINARY_SI, "1536Mi"),
        (F(1023), BINARY_SI, "1023"),
        (F(2048), BINARY_SI, "2Ki"),
        (F(-2048), BINARY_SI, "-2Ki"),
        (F(1, 2), BINARY_SI, "500m"),
        (F(1, 3), DECIMAL_SI, "333333334n"),
        (F(4), DECIMAL_SI, "4"),
        (F(1500), DECIMAL_SI, "1500"),
        (F(15000), DECIMAL_SI, "15k"),
        (F(1, 2), DECIMAL_EXPONENT, "500e-3"),
        (F(12 * 10**6), DECIMAL_EXPONENT, "12e6"),
        (F(10**24), DECIMAL_SI, "1e24"),
        (7, DECIMAL_SI, "7"),
    ],
)
def test_format_quantity(value: Fraction, fmt: str, out: str) -> None:
    assert format_quantity(value, fmt) == out  # type: ignore[arg-type]


def test_arithmetic_is_exact() -> None:
    total = add(parse_quantity("100m"), parse_quantity("0.2"))
    assert total == F(3, 10)
    assert format_quantity(total) == "300m"
    assert sub(parse_quantity("1Gi"), parse_quantity("512Mi")) == parse_quantity("0.5Gi")
    assert parse_quantity("1Gi") > parse_quantity("1G")
    assert parse_quantity("1000m") == parse_quantity("1")


@pytest.mark.parametrize(
    ("rl", "want"),
    [
        (None, {}),
        ({}, {}),
        ({"cpu": "500m"}, {"cpu": 500}),
        ({"cpu": "2", "memory": "1Gi"}, {"cpu": 2000, "memory": 2**30}),
        ({"cpu": 1, "memory": "128974848", "pods": "110"}, {"cpu": 1000, "memory": 128974848, "pods": 110}),
        (
            {"nvidia.com/gpu": "1", "ephemeral-storage": "1.5Gi"},
            {"nvidia.com/gpu": 1, "ephemeral-storage": 3 * 2**29},
        ),
        ({"cpu": "0.1m", "memory": "0.5"}, {"cpu": 1, "memory": 1}),
    ],
)
def test_resource_list_milli(rl: dict | None, want: dict[str, int]) -> None:
    assert resource_list_milli(rl) == want


def test_resource_list_milli_rejects_bad_values() -> None:
    with pytest.raises(ValueError):
        resource_list_milli({"cpu": "lots"})
