"""CronJob schedules: kube's grammar and messages for validation, croniter for the arithmetic.

Kubernetes parses ``spec.schedule`` with ``robfig/cron/v3``'s ``ParseStandard``: five fields
(minute, hour, day of month, month, day of week), ``*``/``?``, ranges, steps, lists, month and
weekday names, and the descriptors ``@yearly``/``@annually``/``@monthly``/``@weekly``/
``@daily``/``@midnight``/``@hourly`` and ``@every <duration>``. Its error texts reach users
verbatim (``spec.schedule: Invalid value: "x": expected exactly 5 fields, found 1: [x]``), so
:func:`parse_standard` re-implements robfig's *checks* to reproduce them, and rejects what robfig
rejects (seconds fields, ``L``, ``W``, ``#``, weekday 7) even where croniter would accept it.

The next-occurrence arithmetic (day-of-month/day-of-week OR rule, DST in a time zone) is
croniter's; ``@every`` is a constant delay, which croniter has no notion of.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
    )
}
_DOWS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
# (min, max, names) of minute, hour, day of month, month, day of week
_BOUNDS: tuple[tuple[int, int, dict[str, int] | None], ...] = (
    (0, 59, None),
    (0, 23, None),
    (1, 31, None),
    (1, 12, _MONTHS),
    (0, 6, _DOWS),
)
_INT_RE = re.compile(r"[+-]?[0-9]+")
_DURATION_RE = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)")
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


class CronError(ValueError):
    """A schedule robfig/cron would refuse; ``str()`` is robfig's message."""


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule: a five-field expression, or a constant ``@every`` delay (seconds)."""

    expression: str = ""
    every: float = 0.0
    location: tzinfo | None = None

    def next_after(self, t: datetime) -> datetime:
        """The first activation strictly after ``t`` (an aware datetime), in ``t``'s zone."""
        if self.every:
            base = t.replace(microsecond=0)
            return base + timedelta(seconds=self.every)
        # imported on first use: croniter (and its dateutil) is ~50 ms of every start-up otherwise
        from croniter import croniter

        local = t.astimezone(self.location) if self.location is not None else t
        nxt = croniter(self.expression, local).get_next(datetime)
        return nxt.astimezone(t.tzinfo)


def _go_duration(text: str) -> float:
    """``time.ParseDuration`` for the units Go accepts; raises CronError with Go's wording."""
    s = text
    if s in ("0", "+0", "-0"):
        return 0.0
    sign = -1.0 if s.startswith("-") else 1.0
    s = s.lstrip("+-")
    pos, total = 0, 0.0
    while pos < len(s):
        m = _DURATION_RE.match(s, pos)
        if m is None:
            raise CronError(f'failed to parse duration {text}: time: invalid duration "{text}"')
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    if not s:
        raise CronError(f'failed to parse duration {text}: time: invalid duration "{text}"')
    return sign * total


def _must_parse_int(expr: str) -> int:
    if _INT_RE.fullmatch(expr) is None:
        raise CronError(f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax')
    num = int(expr)
    if num < 0:
        raise CronError(f"negative number ({num}) not allowed: {expr}")
    return num


def _int_or_name(expr: str, names: dict[str, int] | None) -> int:
    if names is not None and expr.lower() in names:
        return names[expr.lower()]
    return _must_parse_int(expr)


def _check_range(expr: str, lo: int, hi: int, names: dict[str, int] | None) -> None:
    """robfig's ``getRange``: the same checks in the same order, so the same first message."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    if low_and_high[0] in ("*", "?"):
        start, end = lo, hi
    else:
        start = _int_or_name(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], names)
        else:
            raise CronError(f"too many hyphens: {expr}")
    step = 1
    if len(range_and_step) == 2:
        step = _must_parse_int(range_and_step[1])
        if single:
            end = hi
    elif len(range_and_step) > 2:
        raise CronError(f"too many slashes: {expr}")
    if start < lo:
        raise CronError(f"beginning of range ({start}) below minimum ({lo}): {expr}")
    if end > hi:
        raise CronError(f"end of range ({end}) above maximum ({hi}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")


def _split_location(spec: str) -> tuple[tzinfo | None, str]:
    if spec.startswith(("TZ=", "CRON_TZ=")):
        head, _, rest = spec.partition(" ")
        name = head.split("=", 1)[1]
        try:
            return load_location(name), rest.strip()
        except CronError as e:
            raise CronError(f"provided bad location {name}: {e}") from e
    return None, spec


def parse_standard(spec: str) -> Schedule:
    """``cron.ParseStandard``: the schedule, or :class:`CronError` with robfig's message."""
    if not spec:
        raise CronError("empty spec string")
    location, spec = _split_location(spec)
    if spec.startswith("@"):
        if spec.startswith("@every "):
            seconds = _go_duration(spec[len("@every ") :].strip())
            # robfig rounds the delay down to whole seconds, with a floor of one second
            return Schedule(every=max(float(int(seconds)), 1.0), location=location)
        expression = _DESCRIPTORS.get(spec)
        if expression is None:
            raise CronError(f"unrecognized descriptor: {spec}")
        return Schedule(expression=expression, location=location)
    fields = spec.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    normalized = []
    for text, (lo, hi, names) in zip(fields, _BOUNDS, strict=True):
        for expr in text.split(","):
            _check_range(expr, lo, hi, names)
        normalized.append(text.replace("?", "*"))
    return Schedule(expression=" ".join(normalized), location=location)


def load_location(name: str) -> tzinfo:
    """``time.LoadLocation``: ``UTC`` (and empty) is UTC; an unknown zone gets Go's message."""
    # zoneinfo is imported here, by the first CronJob schedule: its import reads the
    # interpreter's build configuration (sysconfig), ~5 ms of every server start
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if name in ("", "UTC"):
        return ZoneInfo("UTC")
    if name == "Local":
        raise CronError("unknown time zone Local")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as e:
        raise CronError(f"unknown time zone {name}") from e


def with_time_zone(schedule: str, time_zone: str | None) -> str:
    """The controller's ``TZ=<zone> <schedule>`` form when ``spec.timeZone`` is set."""
    return f"TZ={time_zone} {schedule}" if time_zone else schedule
