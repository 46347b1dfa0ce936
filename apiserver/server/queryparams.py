"""Query parameters decoded as kube's parameter codec does (``metav1.ListOptions`` and friends
are converted from ``url.Values`` with Go's ``strconv``): an integer is ASCII digits with an
optional sign and fits in int64, or the request is a 400 quoting Go's error."""

from __future__ import annotations

import re

from apiserver import errors

_INT = re.compile(r"[+-]?[0-9]+\Z", re.ASCII)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def parse_int64(value: str) -> int:
    """``strconv.ParseInt(value, 10, 64)``: no spaces, underscores or non-ASCII digits."""
    if not _INT.match(value):
        raise errors.bad_request(f'strconv.ParseInt: parsing "{value}": invalid syntax')
    n = int(value)
    if not _INT64_MIN <= n <= _INT64_MAX:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{value}": value out of range')
    return n
