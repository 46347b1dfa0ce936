"""One labelled pair of series (an attempt counter and its duration histogram), updated as
prometheus_client updates them, with the histogram's bucket found by bisection.

Every scheduled pod adds one to ``scheduler_schedule_attempts_total`` and observes its
duration in ``scheduler_scheduling_attempt_duration_seconds`` (15 exponential buckets and
+Inf). prometheus_client's ``Histogram.observe`` walks the bucket bounds in Python until one
holds the value, and both children re-check on every call that they are label-bound; a gang
of 5,000 members pays that 5,000 times in its binding cycles. :class:`AttemptSeries` keeps the
children's value cells and makes the same updates in the same order (the counter's cell +1,
the histogram's sum + seconds, the first bucket whose bound is >= seconds +1), so a scrape
reads exactly what the library's own calls would have left. A value bisection cannot place
(NaN), or children without the cells this expects (another prometheus_client), take the
library's own calls.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any


class AttemptSeries:
    """The counter child ``counter`` and histogram child ``histogram`` of one label set."""

    __slots__ = ("counter", "histogram", "_count", "_sum", "_buckets", "_bounds")

    def __init__(self, counter: Any, histogram: Any) -> None:
        self.counter = counter
        self.histogram = histogram
        count = getattr(counter, "_value", None)
        total = getattr(histogram, "_sum", None)
        buckets = getattr(histogram, "_buckets", None)
        bounds = getattr(histogram, "_upper_bounds", None)
        usable = (
            count is not None
            and total is not None
            and isinstance(buckets, list)
            and isinstance(bounds, list)
            and len(buckets) == len(bounds)
            and bool(bounds)
            and bounds[-1] == float("inf")
            and bounds == sorted(bounds)
            and counter._is_observable()
            and histogram._is_observable()
        )
        # None: the library's own calls (see the module docstring)
        self._count = count if usable else None
        self._sum = total
        self._buckets = buckets
        self._bounds = bounds

    def observe(self, seconds: float) -> None:
        """``counter.inc()`` then ``histogram.observe(seconds)``."""
        count = self._count
        if count is None or seconds != seconds:  # no cells, or NaN (no bucket holds it)
            self.counter.inc()
            self.histogram.observe(seconds)
            return
        count.inc(1)
        self._sum.inc(seconds)
        self._buckets[bisect_left(self._bounds, seconds)].inc(1)
