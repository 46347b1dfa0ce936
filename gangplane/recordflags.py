"""The ``--scheduling-records*`` flags of ``gangplane serve`` and ``gangplane scheduler`` (gangplane's).

Scheduling records are a bounded window of the newest subjects (pods and PodGroups): beyond
``--scheduling-records-max-subjects`` the least recently attempted one is dropped (its record
deleted if it was written; never written at all if it was not yet), so the API writes of a burst
are bounded by the window, not by the number of pods.
"""

from __future__ import annotations

import argparse

from scheduler.records.summary import RecordLimits


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: must be a positive integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: must be a positive integer")
    return value


def add_record_flags(p: argparse.ArgumentParser, records_help: str) -> None:
    """``--scheduling-records`` (on by default) and ``--scheduling-records-max-subjects``."""
    p.add_argument(
        "--scheduling-records", default=True, action=argparse.BooleanOptionalAction, help=records_help
    )
    p.add_argument(
        "--scheduling-records-max-subjects",
        type=_positive,
        default=RecordLimits().subjects,
        metavar="N",
        help="scheduling records kept: those of the newest N pods and PodGroups attempted (default "
        "%(default)s); an older one's record is deleted, and a burst's first-try successes that "
        "fall out of the window before their record is written are never written",
    )


def record_limits(args: argparse.Namespace) -> bool | RecordLimits:
    """What ``scheduling_records`` options take: False (off) or the bounds to keep them with."""
    if not args.scheduling_records:
        return False
    return RecordLimits(subjects=args.scheduling_records_max_subjects)
