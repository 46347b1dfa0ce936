"""batch/v1 strategies: Job and CronJob defaults, generated selectors, validation and update rules."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.batch import cron
from apiserver.registry.strategies.batch import STRATEGIES, parse_indexes
from apiserver.rest.strategy import Strategy, StrategyContext
from featuregates import WORKLOAD_WITH_JOB
from tests.strategy_support import run_create, run_update, strategy_ctx

UID = "0b8a6f2e-1111-2222-3333-444455556666"


ctx = strategy_ctx


def strategy(plural: str) -> Strategy:
    return STRATEGIES[("batch", plural)]


def create(plural: str, obj: Obj, c: StrategyContext | None = None) -> tuple[Obj, list[str]]:
    """default -> prepare_for_create -> validate, like the registry; returns the object and messages."""
    return run_create(strategy(plural), obj, c or ctx())


def update(plural: str, new: Obj, old: Obj, c: StrategyContext | None = None) -> tuple[Obj, list[str]]:
    return run_update(strategy(plural), new, old, c or ctx())


def status_update(new: Obj, old: Obj) -> list[str]:
    c = ctx()
    s = strategy("jobs")
    new = copy.deepcopy(new)
    s.prepare_for_status_update(c, new, old)
    return [str(e) for e in s.validate_status_update(c, new, old)]


def pod_template(restart: str = "Never", **spec: Any) -> Obj:
    pod_spec: Obj = {"containers": [{"name": "main", "image": "busybox"}], "restartPolicy": restart}
    pod_spec.update(spec)
    return {"spec": pod_spec}


def job(name: str = "pi", **spec: Any) -> Obj:
    base: Obj = {"template": pod_template()}
    base.update(spec)
    return {"metadata": {"name": name, "namespace": "default", "uid": UID}, "spec": base}


def created(name: str = "pi", c: StrategyContext | None = None, **spec: Any) -> Obj:
    obj, errs = create("jobs", job(name, **spec), c)
    assert errs == []
    return obj


# ------------------------------------------------------------------ defaults and selector


def test_job_defaults_match_kube():
    obj = created()
    spec = obj["spec"]
    assert spec["completions"] == 1 and spec["parallelism"] == 1
    assert spec["backoffLimit"] == 6
    assert spec["completionMode"] == "NonIndexed"
    assert spec["suspend"] is False
    assert spec["podReplacementPolicy"] == "TerminatingOrFailed"
    assert obj["status"] == {}


def test_job_backoff_limit_defaults_to_max_int32_with_backoff_limit_per_index():
    obj = created(completionMode="Indexed", completions=3, backoffLimitPerIndex=1)
    assert obj["spec"]["backoffLimit"] == 2**31 - 1


def test_parallelism_only_leaves_completions_unset():
    obj = created(parallelism=3)
    assert "completions" not in obj["spec"] and obj["spec"]["parallelism"] == 3


def test_generated_selector_labels_template_with_uid_and_name():
    obj = created()
    labels = obj["spec"]["template"]["metadata"]["labels"]
    assert labels == {
        "controller-uid": UID,
        "batch.kubernetes.io/controller-uid": UID,
        "job-name": "pi",
        "batch.kubernetes.io/job-name": "pi",
    }
    assert obj["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": UID}}


def test_job_labels_copied_from_template_when_unset():
    tmpl = pod_template()
    tmpl["metadata"] = {"labels": {"app": "pi"}}
    obj = created(template=tmpl)
    assert obj["metadata"]["labels"] == {"app": "pi"}


def test_user_selector_without_manual_selector_is_rejected():
    _, errs = create("jobs", job(selector={"matchLabels": {"app": "x"}}))
    assert "spec.selector: Invalid value: " in errs[0] or any(
        "`selector` not auto-generated" in e for e in errs
    )
    assert any("`selector` not auto-generated" in e for e in errs)


def test_wrong_controller_uid_label_is_rejected():
    tmpl = pod_template()
    tmpl["metadata"] = {"labels": {"batch.kubernetes.io/controller-uid": "other"}}
    _, errs = create("jobs", job(template=tmpl))
    assert any(
        e.startswith("spec.template.metadata.labels[batch.kubernetes.io/controller-uid]: Invalid value: ")
        and e.endswith(f"must be '{UID}'")
        for e in errs
    )


def test_manual_selector_must_match_template_labels():
    tmpl = pod_template()
    tmpl["metadata"] = {"labels": {"app": "a"}}
    _, errs = create("jobs", job(manualSelector=True, selector={"matchLabels": {"app": "b"}}, template=tmpl))
    assert errs == [
        'spec.template.metadata.labels: Invalid value: {"app":"a"}: `selector` does not match template `labels`'
    ]


def test_manual_selector_requires_selector():
    _, errs = create("jobs", job(manualSelector=True))
    assert "spec.selector: Required value" in errs


# ------------------------------------------------------------------ spec validation


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"parallelism": -1}, "spec.parallelism: Invalid value: -1: must be greater than or equal to 0"),
        ({"backoffLimit": -1}, "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"),
        (
            {"template": pod_template("Always")},
            'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
        ),
        (
            {"completionMode": "Sometimes"},
            'spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"',
        ),
        (
            {"completionMode": "Indexed", "parallelism": 2},
            "spec.completions: Required value: when completion mode is Indexed",
        ),
        (
            {"backoffLimitPerIndex": 1},
            "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
        ),
        (
            {"completionMode": "Indexed", "completions": 2, "maxFailedIndexes": 1},
            "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
        ),
        (
            {"completionMode": "Indexed", "completions": 2, "backoffLimitPerIndex": 1, "maxFailedIndexes": 3},
            "spec.maxFailedIndexes: Invalid value: 3: must be less than or equal to completions",
        ),
        (
            {"successPolicy": {"rules": [{"succeededCount": 1}]}},
            'spec.successPolicy: Invalid value: {"rules":[{"succeededCount":1}]}: requires indexed completion mode',
        ),
        (
            {
                "completionMode": "Indexed",
                "completions": 3,
                "successPolicy": {"rules": [{"succeededIndexes": "0,5"}]},
            },
            'spec.successPolicy.rules[0].succeededIndexes: Invalid value: "0,5": error parsing succeededIndexes: too large index: "5"',
        ),
        (
            {
                "completionMode": "Indexed",
                "completions": 3,
                "successPolicy": {"rules": [{"succeededCount": 4}]},
            },
            "spec.successPolicy.rules[0].succeededCount: Invalid value: 4: must be less than or equal to 3 "
            "(the number of specified completions)",
        ),
        (
            {"completionMode": "Indexed", "completions": 3, "successPolicy": {"rules": []}},
            "spec.successPolicy.rules: Required value: at least one rules must be specified when the successPolicy is specified",
        ),
        (
            {"podFailurePolicy": {"rules": [{"action": "FailJob"}]}},
            "spec.podFailurePolicy.rules[0]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
        ),
        (
            {
                "podFailurePolicy": {
                    "rules": [{"action": "Explode", "onExitCodes": {"operator": "In", "values": [1]}}]
                }
            },
            'spec.podFailurePolicy.rules[0].action: Unsupported value: "Explode": supported values: '
            '"Count", "FailIndex", "FailJob", "Ignore"',
        ),
        (
            {
                "podFailurePolicy": {
                    "rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [0]}}]
                }
            },
            "spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
        ),
        (
            {
                "podFailurePolicy": {
                    "rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [3, 2]}}]
                }
            },
            "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [3,2]: must be ordered",
        ),
        (
            {
                "podFailurePolicy": {
                    "rules": [
                        {
                            "action": "FailJob",
                            "onExitCodes": {"containerName": "x", "operator": "In", "values": [1]},
                        }
                    ]
                }
            },
            'spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: "x": '
            "must be one of the container or initContainer names in the pod template",
        ),
        (
            {
                "podFailurePolicy": {
                    "rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [1]}}]
                },
            },
            'spec.podFailurePolicy.rules[0].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set',
        ),
        (
            {
                "podFailurePolicy": {
                    "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
                },
                "template": pod_template("OnFailure"),
            },
            'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified',
        ),
        (
            {"podReplacementPolicy": "Always"},
            'spec.podReplacementPolicy: Unsupported value: "Always": supported values: "Failed", "TerminatingOrFailed"',
        ),
    ],
)
def test_job_spec_validation_messages(spec: Obj, message: str):
    _, errs = create("jobs", job(**spec))
    assert message in errs


def test_pod_failure_policy_condition_status_defaults_to_true():
    obj = created(
        podFailurePolicy={"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
    )
    assert obj["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"] == "True"
    assert obj["spec"]["podReplacementPolicy"] == "Failed"


def test_parse_indexes_counts_intervals():
    assert parse_indexes("0,2-4,7", 10) == 5
    with pytest.raises(ValueError, match="non-increasing order, previous: 4, current: 3"):
        parse_indexes("2-4,3", 10)


# ------------------------------------------------------------------ updates


def test_job_template_is_immutable():
    old = created()
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:2"
    _, errs = update("jobs", new, old)
    assert any(
        e.startswith("spec.template: Invalid value: ") and e.endswith("field is immutable") for e in errs
    )


def test_suspended_job_that_never_started_may_change_scheduling_directives():
    old = created(suspend=True)
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a"}
    new["spec"]["template"]["metadata"]["labels"]["extra"] = "yes"
    _, errs = update("jobs", new, old)
    assert errs == []
    old["status"] = {"startTime": "2026-01-01T00:00:00Z"}
    _, errs = update("jobs", new, old)
    assert any(e.startswith("spec.template: Invalid value:") for e in errs)


def test_completions_change_with_parallelism_for_indexed_jobs_only():
    old = created(completionMode="Indexed", completions=3, parallelism=3)
    new = copy.deepcopy(old)
    new["spec"]["completions"] = 5
    _, errs = update("jobs", new, old)
    assert errs == [
        "spec.completions: Invalid value: 5: can only be modified in tandem with spec.parallelism"
    ]
    new["spec"]["parallelism"] = 5
    _, errs = update("jobs", new, old)
    assert errs == []
    old = created(completions=3, parallelism=3)
    new = copy.deepcopy(old)
    new["spec"]["completions"], new["spec"]["parallelism"] = 5, 5
    _, errs = update("jobs", new, old)
    assert errs == ["spec.completions: Invalid value: 5: field is immutable"]


@pytest.mark.parametrize("key", ["completionMode", "backoffLimitPerIndex", "managedBy"])
def test_immutable_job_spec_fields(key: str):
    old = created(
        completionMode="Indexed", completions=2, backoffLimitPerIndex=1, managedBy="example.com/ctl"
    )
    new = copy.deepcopy(old)
    new["spec"][key] = {
        "completionMode": "NonIndexed",
        "backoffLimitPerIndex": 2,
        "managedBy": "example.com/other",
    }[key]
    _, errs = update("jobs", new, old)
    assert any(
        e.startswith(f"spec.{key}: Invalid value: ") and e.endswith("field is immutable") for e in errs
    )


def test_suspend_and_parallelism_are_mutable():
    old = created(parallelism=2)
    new = copy.deepcopy(old)
    new["spec"]["suspend"] = True
    new["spec"]["parallelism"] = 5
    _, errs = update("jobs", new, old)
    assert errs == []


def test_status_update_keeps_spec_and_enforces_condition_order():
    old = created()
    new = copy.deepcopy(old)
    new["status"] = {"conditions": [{"type": "Failed", "status": "True"}]}
    assert status_update(new, old) == [
        "status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true condition"
    ]
    new["status"] = {
        "conditions": [{"type": "Complete", "status": "True"}],
        "completionTime": "2026-01-01T00:00:01Z",
    }
    assert status_update(new, old) == [
        "status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition"
    ]
    new["status"] = {
        "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True"},
            {"type": "Complete", "status": "True"},
        ],
        "completionTime": "2026-01-01T00:00:01Z",
        "succeeded": 1,
    }
    assert status_update(new, old) == []
    new["status"] = {"active": -1}
    assert status_update(new, old) == ["status.active: Invalid value: -1: must be greater than or equal to 0"]


# ------------------------------------------------------------------ CronJob


def cronjob(name: str = "hello", **spec: Any) -> Obj:
    base: Obj = {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": pod_template("OnFailure")}}}
    base.update(spec)
    return {"metadata": {"name": name, "namespace": "default", "uid": UID}, "spec": base}


def test_cronjob_defaults():
    obj, errs = create("cronjobs", cronjob())
    assert errs == []
    spec = obj["spec"]
    assert (
        spec["concurrencyPolicy"],
        spec["suspend"],
        spec["successfulJobsHistoryLimit"],
        spec["failedJobsHistoryLimit"],
    ) == (
        "Allow",
        False,
        3,
        1,
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"schedule": "foo"},
            'spec.schedule: Invalid value: "foo": expected exactly 5 fields, found 1: [foo]',
        ),
        (
            {"schedule": "61 * * * *"},
            'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61',
        ),
        (
            {"schedule": "@fortnightly"},
            'spec.schedule: Invalid value: "@fortnightly": unrecognized descriptor: @fortnightly',
        ),
        (
            {"schedule": "TZ=UTC * * * * *"},
            'spec.schedule: Invalid value: "TZ=UTC * * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
        ),
        ({"schedule": ""}, "spec.schedule: Required value"),
        (
            {"timeZone": "Mars/Olympus"},
            'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus',
        ),
        ({"timeZone": ""}, 'spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string'),
        (
            {"timeZone": "Local"},
            'spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones',
        ),
        (
            {"concurrencyPolicy": "Sometimes"},
            'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
        ),
        (
            {"startingDeadlineSeconds": -5},
            "spec.startingDeadlineSeconds: Invalid value: -5: must be greater than or equal to 0",
        ),
        (
            {"jobTemplate": {"spec": {"selector": {"matchLabels": {"a": "b"}}, "template": pod_template()}}},
            'spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: `selector` will be auto-generated',
        ),
        (
            {"jobTemplate": {"spec": {"template": pod_template("Always")}}},
            'spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
        ),
    ],
)
def test_cronjob_validation_messages(spec: Obj, message: str):
    _, errs = create("cronjobs", cronjob(**spec))
    assert message in errs


def test_cronjob_accepts_descriptors_and_time_zones():
    for schedule in ("@hourly", "@every 1h30m", "0 9 * * MON-FRI", "0 0 ? * *", "*/15 0-6 1,15 jan-jun *"):
        _, errs = create("cronjobs", cronjob(schedule=schedule, timeZone="Europe/Berlin"))
        assert errs == [], schedule


def test_cronjob_name_at_most_52_characters_on_create_only():
    long = "a" * 53
    _, errs = create("cronjobs", cronjob(long))
    assert errs == [f'metadata.name: Invalid value: "{long}": must be no more than 52 characters']
    old = copy.deepcopy(cronjob(long))
    strategy("cronjobs").default(old)
    new = copy.deepcopy(old)
    new["spec"]["suspend"] = True
    _, errs = update("cronjobs", new, old)
    assert errs == []


def test_cron_schedule_next_in_time_zone():
    from datetime import UTC, datetime

    sched = cron.parse_standard(cron.with_time_zone("0 9 * * *", "America/New_York"))
    assert sched.next_after(datetime(2026, 1, 1, 0, 0, tzinfo=UTC)) == datetime(2026, 1, 1, 14, 0, tzinfo=UTC)


# ------------------------------------------------------------------ KEP-5547 spec.scheduling

ON = {WORKLOAD_WITH_JOB: True}


def gang(min_count: int | None = None) -> Obj:
    g: Obj = {} if min_count is None else {"minCount": min_count}
    return {"schedulingPolicy": {"gang": g}}


def test_scheduling_dropped_when_workload_with_job_off():
    obj, errs = create("jobs", job(parallelism=4, scheduling=gang()), ctx({WORKLOAD_WITH_JOB: False}))
    assert errs == [] and "scheduling" not in obj["spec"]


def test_scheduling_kept_on_update_when_stored_and_gate_off():
    old = created(c=ctx(ON), parallelism=4, scheduling=gang())
    new = copy.deepcopy(old)
    new["spec"]["parallelism"] = 5
    obj, errs = update("jobs", new, old, ctx({WORKLOAD_WITH_JOB: False}))
    assert errs == [] and obj["spec"]["scheduling"] == gang()


def test_gang_min_count_may_not_exceed_parallelism():
    _, errs = create("jobs", job(parallelism=2, scheduling=gang(3)), ctx(ON))
    assert errs == [
        "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 3: must be less than or equal to spec.parallelism (2)"
    ]


def test_gang_min_count_raised_with_parallelism_in_one_update():
    old = created(c=ctx(ON), parallelism=2, scheduling=gang(2))
    new = copy.deepcopy(old)
    new["spec"]["parallelism"] = 4
    new["spec"]["scheduling"]["schedulingPolicy"]["gang"]["minCount"] = 4
    _, errs = update("jobs", new, old, ctx(ON))
    assert errs == []


def test_scheduling_cannot_be_added_or_removed():
    old = created(c=ctx(ON), parallelism=2)
    new = copy.deepcopy(old)
    new["spec"]["scheduling"] = gang()
    _, errs = update("jobs", new, old, ctx(ON))
    assert errs == ["spec.scheduling: Invalid value: null: field cannot be set once created"]
    old = created(c=ctx(ON), parallelism=2, scheduling=gang())
    new = copy.deepcopy(old)
    del new["spec"]["scheduling"]
    _, errs = update("jobs", new, old, ctx(ON))
    assert errs == ["spec.scheduling: Invalid value: null: field cannot be cleared once set"]


def test_policy_frozen_between_basic_and_gang():
    old = created(c=ctx(ON), parallelism=2, scheduling={"schedulingPolicy": {"basic": {}}})
    new = copy.deepcopy(old)
    new["spec"]["scheduling"] = gang()
    _, errs = update("jobs", new, old, ctx(ON))
    assert "spec.scheduling.schedulingPolicy: Invalid value: null: " in errs[0]


def test_disruption_mode_immutable():
    old = created(c=ctx(ON), parallelism=2, scheduling={**gang(), "disruptionMode": {"single": {}}})
    new = copy.deepcopy(old)
    new["spec"]["scheduling"]["disruptionMode"] = {"all": {}}
    _, errs = update("jobs", new, old, ctx(ON))
    assert "spec.scheduling.disruptionMode: Invalid value: null: field is immutable" in errs


def test_basic_with_disruption_mode_all_rejected_by_workloadbuilder():
    _, errs = create("jobs", job(parallelism=2, scheduling={"disruptionMode": {"all": {}}}), ctx(ON))
    assert errs == [
        'spec.scheduling.disruptionMode: Invalid value: "": the disruptionMode `all` is not supported with the Basic scheduling policy'
    ]


def test_gang_min_count_zero_rejected_by_building_block():
    _, errs = create("jobs", job(parallelism=2, scheduling=gang(0)), ctx(ON))
    assert (
        "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 0: must be greater than or equal to 1"
        in errs
    )


def test_scheduling_with_template_scheduling_group_rejected():
    tmpl = pod_template(schedulingGroup={"podGroupName": "mine"})
    _, errs = create("jobs", job(parallelism=2, scheduling=gang(), template=tmpl), ctx(ON))
    assert any(
        e.startswith(
            "spec.scheduling: Forbidden: may not be set together with spec.template.spec.schedulingGroup"
        )
        for e in errs
    )


def test_cronjob_job_template_gang_min_count_checked():
    spec = {"parallelism": 2, "scheduling": gang(3), "template": pod_template()}
    _, errs = create("cronjobs", cronjob(jobTemplate={"spec": spec}), ctx(ON))
    assert errs == [
        "spec.jobTemplate.spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 3: "
        "must be less than or equal to spec.jobTemplate.spec.parallelism (2)"
    ]
