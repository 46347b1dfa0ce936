"""CronJob controller pure helpers: the most recent schedule time and Job names, as kube computes them."""

from __future__ import annotations

from datetime import UTC, datetime

from apiserver.batch import cron
from apiserver.meta import rfc3339
from controllers.cronjob.controller import job_name, most_recent_schedule_time

T0 = datetime(2027, 1, 15, 8, 0, tzinfo=UTC)


def cj(created: datetime = T0, last: datetime | None = None, sds: int | None = None) -> dict:
    obj: dict = {
        "metadata": {"name": "hello", "creationTimestamp": rfc3339(created.timestamp())},
        "spec": {},
        "status": {},
    }
    if last is not None:
        obj["status"]["lastScheduleTime"] = rfc3339(last.timestamp())
    if sds is not None:
        obj["spec"]["startingDeadlineSeconds"] = sds
    return obj


def test_nothing_due_before_the_first_schedule_time() -> None:
    sched = cron.parse_standard("*/5 * * * *")
    assert most_recent_schedule_time(cj(), datetime(2027, 1, 15, 8, 4, 59, tzinfo=UTC), sched) == (None, 0)


def test_the_latest_of_several_missed_times_is_returned_with_the_count() -> None:
    sched = cron.parse_standard("*/5 * * * *")
    t, missed = most_recent_schedule_time(cj(), datetime(2027, 1, 15, 8, 17, tzinfo=UTC), sched)
    assert t == datetime(2027, 1, 15, 8, 15, tzinfo=UTC) and missed == 3


def test_last_schedule_time_and_starting_deadline_bound_the_search() -> None:
    sched = cron.parse_standard("*/5 * * * *")
    now = datetime(2027, 1, 15, 9, 0, 30, tzinfo=UTC)
    t, missed = most_recent_schedule_time(cj(last=datetime(2027, 1, 15, 8, 50, tzinfo=UTC)), now, sched)
    assert (t, missed) == (datetime(2027, 1, 15, 9, 0, tzinfo=UTC), 2)
    t, missed = most_recent_schedule_time(cj(sds=60), now, sched)
    assert (t, missed) == (datetime(2027, 1, 15, 9, 0, tzinfo=UTC), 1)


def test_job_name_is_the_scheduled_minute_since_the_epoch() -> None:
    assert job_name(cj(), T0.timestamp()) == f"hello-{int(T0.timestamp()) // 60}"
