"""Strategies of batch/v1: Job and CronJob.

Defaults follow ``pkg/apis/batch/v1/defaults.go``, validation ``pkg/apis/batch/validation`` (field
paths and messages as kube's), and create/update preparation ``pkg/registry/batch/{job,cronjob}``:

* a Job's selector is generated from its UID unless ``manualSelector: true`` (the
  ``batch.kubernetes.io/controller-uid`` / ``batch.kubernetes.io/job-name`` labels plus their
  legacy spellings on the template), and must then be exactly that;
* the pod template is immutable, except that a suspended Job that never started may change its
  scheduling directives (node selector/affinity, tolerations, scheduling gates, template labels
  and annotations) and a suspended Job its container resources;
* ``completions`` may change only in tandem with ``parallelism`` on Indexed Jobs (elastic
  Indexed Jobs, GA); ``selector``, ``completionMode``, ``podFailurePolicy``,
  ``backoffLimitPerIndex``, ``managedBy`` and ``successPolicy`` are immutable;
* the status subresource enforces the condition order the Job controller follows (``FailureTarget``
  before ``Failed``, ``SuccessCriteriaMet`` before ``Complete``);
* CronJob schedules are parsed with robfig's grammar (:mod:`apiserver.batch.cron`) and time zones
  with the IANA database.

KEP-5547 ``spec.scheduling`` has its own section at the end (gate ``WorkloadWithJob``).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from apiserver import field
from apiserver.api.types import as_int as _int
from apiserver.batch import cron
from apiserver.batch.labels import (
    CONTROLLER_UID_LABEL,
    JOB_NAME_LABEL,
    LEGACY_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
)
from apiserver.field import ErrorList, ErrorType, FieldError, Path
from apiserver.registry.strategies import podspec
from apiserver.registry.strategies.core.pod import pod_warnings
from apiserver.registry.strategies.podspec import (
    as_dict,
    as_list,
    convert_selector,
    validate_pod_template_spec,
)
from apiserver.registry.strategies.scheduling import drop_disabled_embedded_scheduling
from apiserver.rest.strategy import Obj, Strategy, StrategyContext
from apiserver.validation import names
from apiserver.validation.meta import validate_immutable, validate_label_selector, validate_nonnegative_field
from apiserver.workloadbuilder import ValidationInput, new_builder
from apiserver.workloadbuilder import job as job_sched
from apiserver.workloadbuilder import validation as dv
from featuregates import (
    WORKLOAD_WITH_JOB,
)

MAX_INT32 = 2**31 - 1
MAX_PARALLELISM_FOR_INDEXED_JOB = 100_000
MAX_FAILED_INDEXES_LIMIT_FOR_INDEXED_JOB = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS = 10_000
PARALLELISM_SOFT_LIMIT_FOR_UNLIMITED_COMPLETIONS = 10_000
MAX_POD_FAILURE_POLICY_RULES = 20
MAX_POD_FAILURE_POLICY_ON_EXIT_CODES_VALUES = 255
MAX_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERNS = 20
MAX_SUCCESS_POLICY_RULES = 20
MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024
MAX_MANAGED_BY_LENGTH = 63
CRONJOB_MAX_NAME_LENGTH = 52  # 63 minus the controller's 11-character ``-<minutes>`` suffix

INDEXED, NON_INDEXED = "Indexed", "NonIndexed"
POD_FAILURE_POLICY_ACTIONS = ["Count", "FailIndex", "FailJob", "Ignore"]
EXIT_CODE_OPERATORS = ["In", "NotIn"]
CONDITION_STATUSES = ["False", "True", "Unknown"]
POD_REPLACEMENT_POLICIES = ["Failed", "TerminatingOrFailed"]
CONCURRENCY_POLICIES = ["Allow", "Forbid", "Replace"]
_TIME_ZONE_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")
_DOMAIN_PREFIXED_PATH = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_HTTP_PATH = re.compile(r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+")

NAME_NOT_DNS_LABEL_WARNING = (
    "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; "
    "a DNS label is recommended: {}"
)
HIGH_COMPLETIONS_WARNING = (
    "In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, "
    "Kubernetes might not be able to track completedIndexes when a big number of indexes fail"
)


def _invalid_omit(path: Path, detail: str) -> FieldError:
    """``field.Invalid(path, field.OmitValueType{}, detail)``: no value rendered."""
    return FieldError(ErrorType.INVALID, str(path), detail=detail)


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = {}
        obj["spec"] = spec
    return spec


def _go_list(values: list[str]) -> str:
    """``fmt.Sprint`` of a ``[]string``: ``[a b]``."""
    return "[" + " ".join(values) + "]"


# ============================================================================ defaults


def default_job_spec(spec: Obj) -> None:
    """The JobSpec half of ``SetDefaults_Job`` (also applied to a CronJob's ``jobTemplate``)."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
    if spec.get("completionMode") is None:
        spec["completionMode"] = NON_INDEXED
    if spec.get("suspend") is None:
        spec["suspend"] = False
    pfp = spec.get("podFailurePolicy")
    if isinstance(pfp, dict):
        for rule in as_list(pfp.get("rules")):
            for pattern in as_list(as_dict(rule).get("onPodConditions")):
                if isinstance(pattern, dict) and not pattern.get("status"):
                    pattern["status"] = "True"
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = "Failed" if isinstance(pfp, dict) else "TerminatingOrFailed"
    podspec.default_pod_template(spec.get("template"))


def default_job(obj: Obj) -> None:
    """``SetDefaults_Job``: also copies the template labels to an unlabelled Job."""
    spec = _spec(obj)
    default_job_spec(spec)
    md = obj.setdefault("metadata", {})
    tmpl_labels = as_dict(as_dict(spec.get("template")).get("metadata")).get("labels")
    if not md.get("labels") and isinstance(tmpl_labels, dict) and tmpl_labels:
        md["labels"] = dict(tmpl_labels)


def default_cronjob(obj: Obj) -> None:
    """``SetDefaults_CronJob`` and the embedded pod template's defaults."""
    spec = _spec(obj)
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("successfulJobsHistoryLimit") is None:
        spec["successfulJobsHistoryLimit"] = 3
    if spec.get("failedJobsHistoryLimit") is None:
        spec["failedJobsHistoryLimit"] = 1
    jt_spec = as_dict(as_dict(spec.get("jobTemplate")).get("spec"))
    podspec.default_pod_template(jt_spec.get("template"))


# ============================================================================ selector generation


def generate_selector(job: Obj) -> None:
    """``generateSelector``: label the template with the Job's name and UID and select the UID.

    Labels the user already set are left alone (validation then reports a wrong value).
    """
    md = as_dict(job.get("metadata"))
    spec = _spec(job)
    tmpl = spec.get("template")
    if not isinstance(tmpl, dict):
        tmpl = {}
        spec["template"] = tmpl
    tmd = tmpl.get("metadata")
    if not isinstance(tmd, dict):
        tmd = {}
        tmpl["metadata"] = tmd
    labels = tmd.get("labels")
    if not isinstance(labels, dict):
        labels = {}
        tmd["labels"] = labels
    name, uid = str(md.get("name") or ""), str(md.get("uid") or "")
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        labels.setdefault(key, name)
    for key in (LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL):
        labels.setdefault(key, uid)
    sel = spec.get("selector")
    if not isinstance(sel, dict):
        sel = {}
        spec["selector"] = sel
    ml = sel.get("matchLabels")
    if not isinstance(ml, dict) or not ml:
        ml = {}
        sel["matchLabels"] = ml
    ml.setdefault(CONTROLLER_UID_LABEL, uid)


def _has_label(tmpl_md: Obj, path: Path, key: str, expected: str) -> ErrorList:
    """``ValidateHasLabel``."""
    labels = as_dict(tmpl_md.get("labels"))
    if key not in labels:
        return [field.required(path.child("labels").key(key), expected)]
    if labels[key] != expected:
        return [field.invalid(path.child("labels").key(key), labels, f"must be '{expected}'")]
    return []


def validate_generated_selector(job: Obj) -> ErrorList:
    """``validateGeneratedSelector``: the generated labels are present and the selector is theirs."""
    spec = as_dict(job.get("spec"))
    if spec.get("manualSelector") is True:
        return []
    tmpl_md = as_dict(as_dict(spec.get("template")).get("metadata"))
    if tmpl_md.get("labels") is None:
        return []
    md = as_dict(job.get("metadata"))
    uid, name = str(md.get("uid") or ""), str(md.get("name") or "")
    errs: ErrorList = []
    if not uid:
        errs.append(field.required(Path("metadata", "uid")))
    tp = Path("spec", "template", "metadata")
    errs.extend(_has_label(tmpl_md, tp, LEGACY_CONTROLLER_UID_LABEL, uid))
    errs.extend(_has_label(tmpl_md, tp, LEGACY_JOB_NAME_LABEL, name))
    errs.extend(_has_label(tmpl_md, tp, CONTROLLER_UID_LABEL, uid))
    errs.extend(_has_label(tmpl_md, tp, JOB_NAME_LABEL, name))
    sel = convert_selector(spec.get("selector"))
    if sel is None or not (sel.empty or sel.matches({CONTROLLER_UID_LABEL: uid})):
        errs.append(
            field.invalid(Path("spec", "selector"), spec.get("selector"), "`selector` not auto-generated")
        )
    return errs


# ============================================================================ JobSpec validation


def parse_indexes(indexes: str, completions: int) -> int:
    """``validateIndexesFormat``: the number of indexes in ``"1,3-5"``; ValueError with kube's text."""
    if not indexes:
        return 0
    last: int | None = None
    total = 0
    for interval in indexes.split(","):
        limits = interval.split("-")
        if len(limits) > 2:
            raise ValueError(
                f'the fragment "{interval}" violates the requirement that an index interval can have at most two '
                "parts separated by '-'"
            )
        x = _parse_index(limits[0], completions)
        if last is not None and last >= x:
            raise ValueError(f"non-increasing order, previous: {last}, current: {x}")
        total += 1
        last = x
        if len(limits) > 1:
            y = _parse_index(limits[1], completions)
            if last >= y:
                raise ValueError(f"non-increasing order, previous: {last}, current: {y}")
            total += y - x
            last = y
    return total


def _parse_index(s: str, completions: int) -> int:
    if re.fullmatch(r"[+-]?[0-9]+", s) is None or not -(2**31) <= int(s) <= MAX_INT32:
        raise ValueError(f'cannot convert string to integer for index: "{s}"')
    v = int(s)
    if v >= completions:
        raise ValueError(f'too large index: "{s}"')
    return v


def _container_names(spec: Obj) -> set[str]:
    pod_spec = as_dict(as_dict(spec.get("template")).get("spec"))
    out = set()
    for key in ("containers", "initContainers"):
        for c in as_list(pod_spec.get(key)):
            out.add(str(as_dict(c).get("name") or ""))
    return out


def _validate_on_exit_codes(req: Obj, path: Path, containers: set[str]) -> ErrorList:
    errs: ErrorList = []
    op = req.get("operator") or ""
    if op not in EXIT_CODE_OPERATORS:
        errs.append(field.not_supported(path.child("operator"), op, EXIT_CODE_OPERATORS))
    cn = req.get("containerName")
    if cn is not None and cn not in containers:
        errs.append(
            field.invalid(
                path.child("containerName"),
                cn,
                "must be one of the container or initContainer names in the pod template",
            )
        )
    vp = path.child("values")
    values = as_list(req.get("values"))
    if not values:
        errs.append(field.invalid(vp, req.get("values"), "at least one value is required"))
    elif len(values) > MAX_POD_FAILURE_POLICY_ON_EXIT_CODES_VALUES:
        errs.append(field.too_many(vp, len(values), MAX_POD_FAILURE_POLICY_ON_EXIT_CODES_VALUES))
    ordered = True
    seen: set[int] = set()
    for j, v in enumerate(values):
        if op == "In" and v == 0:
            errs.append(field.invalid(vp.index(j), v, "must not be 0 for the In operator"))
        if v in seen:
            errs.append(field.duplicate(vp.index(j), v))
        else:
            seen.add(v)
        if j > 0 and isinstance(values[j - 1], int) and isinstance(v, int) and values[j - 1] > v:
            ordered = False
    if not ordered:
        errs.append(field.invalid(vp, values, "must be ordered"))
    return errs


def _validate_on_pod_conditions(patterns: list[Any], path: Path) -> ErrorList:
    errs: ErrorList = []
    if len(patterns) > MAX_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERNS:
        errs.append(field.too_many(path, len(patterns), MAX_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERNS))
    for j, raw in enumerate(patterns):
        pattern = as_dict(raw)
        pp = path.index(j)
        errs.extend(
            podspec.fmt_errors(str(pattern.get("type") or ""), pp.child("type"), names.is_qualified_name)
        )
        status = pattern.get("status") or ""
        if status not in CONDITION_STATUSES:
            errs.append(field.not_supported(pp.child("status"), status, CONDITION_STATUSES))
    return errs


def _validate_pod_failure_policy(spec: Obj, path: Path) -> ErrorList:
    """``validatePodFailurePolicy``."""
    pfp = as_dict(spec.get("podFailurePolicy"))
    rules = as_list(pfp.get("rules"))
    rp = path.child("rules")
    errs: ErrorList = []
    if len(rules) > MAX_POD_FAILURE_POLICY_RULES:
        errs.append(field.too_many(rp, len(rules), MAX_POD_FAILURE_POLICY_RULES))
    containers = _container_names(spec)
    for i, raw in enumerate(rules):
        rule = as_dict(raw)
        p = rp.index(i)
        action = rule.get("action") or ""
        if action == "FailIndex" and spec.get("backoffLimitPerIndex") is None:
            errs.append(
                field.invalid(p.child("action"), action, "requires the backoffLimitPerIndex to be set")
            )
        if action not in POD_FAILURE_POLICY_ACTIONS:
            errs.append(field.not_supported(p.child("action"), action, POD_FAILURE_POLICY_ACTIONS))
        on_exit = rule.get("onExitCodes")
        on_conds = as_list(rule.get("onPodConditions"))
        if isinstance(on_exit, dict):
            errs.extend(_validate_on_exit_codes(on_exit, p.child("onExitCodes"), containers))
        if on_conds:
            errs.extend(_validate_on_pod_conditions(on_conds, p.child("onPodConditions")))
        if on_exit is not None and on_conds:
            errs.append(_invalid_omit(p, "specifying both OnExitCodes and OnPodConditions is not supported"))
        if on_exit is None and not on_conds:
            errs.append(_invalid_omit(p, "specifying one of OnExitCodes and OnPodConditions is required"))
    return errs


def _validate_success_policy(spec: Obj, path: Path) -> ErrorList:
    """``validateSuccessPolicy`` (Indexed Jobs only; the caller checks the mode)."""
    rules = as_list(as_dict(spec.get("successPolicy")).get("rules"))
    rp = path.child("rules")
    errs: ErrorList = []
    if not rules:
        errs.append(
            field.required(rp, "at least one rules must be specified when the successPolicy is specified")
        )
    if len(rules) > MAX_SUCCESS_POLICY_RULES:
        errs.append(field.too_many(rp, len(rules), MAX_SUCCESS_POLICY_RULES))
    completions = _int(spec.get("completions")) or 0
    for i, raw in enumerate(rules):
        rule = as_dict(raw)
        p = rp.index(i)
        indexes, count = rule.get("succeededIndexes"), rule.get("succeededCount")
        total = 0
        if indexes is None and count is None:
            errs.append(
                field.required(p, "at least one of succeededCount or succeededIndexes must be specified")
            )
        if isinstance(indexes, str):
            ip = p.child("succeededIndexes")
            if len(indexes) > MAX_SUCCEEDED_INDEXES_LENGTH:
                errs.append(field.too_long(ip, MAX_SUCCEEDED_INDEXES_LENGTH))
            try:
                total = parse_indexes(indexes, completions)
            except ValueError as e:
                errs.append(field.invalid(ip, indexes, f"error parsing succeededIndexes: {e}"))
        if _int(count) is not None:
            cp = p.child("succeededCount")
            errs.extend(validate_nonnegative_field(count, cp))
            if count > completions:
                errs.append(
                    field.invalid(
                        cp,
                        count,
                        f"must be less than or equal to {completions} (the number of specified completions)",
                    )
                )
            if indexes is not None and count > total:
                errs.append(
                    field.invalid(
                        cp,
                        count,
                        f"must be less than or equal to {total} (the number of indexes in the specified succeededIndexes field)",
                    )
                )
    return errs


def _validate_managed_by(value: Any, path: Path) -> ErrorList:
    """``IsDomainPrefixedPath`` plus the 63-character limit."""
    errs: ErrorList = []
    s = value if isinstance(value, str) else ""
    domain, slash, rest = s.partition("/")
    if not slash:
        errs.append(field.invalid(path, s, 'must be a domain-prefixed path (such as "acme.io/foo")'))
    else:
        if _DOMAIN_PREFIXED_PATH.fullmatch(domain) is None:
            errs.append(
                field.invalid(
                    path,
                    domain,
                    names.regex_error(
                        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                        "and must start and end with an alphanumeric character",
                        _DOMAIN_PREFIXED_PATH.pattern,
                        "example.com",
                    ),
                )
            )
        if _HTTP_PATH.fullmatch(rest) is None:
            errs.append(
                field.invalid(
                    path, rest, names.regex_error("must be a valid HTTP path", _HTTP_PATH.pattern, "/foo/bar")
                )
            )
    if len(s) > MAX_MANAGED_BY_LENGTH:
        errs.append(field.too_long(path, MAX_MANAGED_BY_LENGTH))
    return errs


def _validate_indexed(spec: Obj, sp: Path) -> ErrorList:
    errs: ErrorList = []
    completions, parallelism = _int(spec.get("completions")), _int(spec.get("parallelism"))
    mfi, blpi = _int(spec.get("maxFailedIndexes")), _int(spec.get("backoffLimitPerIndex"))
    if spec.get("completions") is None:
        errs.append(field.required(sp.child("completions"), f"when completion mode is {INDEXED}"))
    if parallelism is not None and parallelism > MAX_PARALLELISM_FOR_INDEXED_JOB:
        errs.append(
            field.invalid(
                sp.child("parallelism"),
                parallelism,
                f"must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} when completion mode is {INDEXED}",
            )
        )
    if completions is not None and mfi is not None and mfi > completions:
        errs.append(
            field.invalid(sp.child("maxFailedIndexes"), mfi, "must be less than or equal to completions")
        )
    if mfi is not None and mfi > MAX_FAILED_INDEXES_LIMIT_FOR_INDEXED_JOB:
        errs.append(
            field.invalid(
                sp.child("maxFailedIndexes"),
                mfi,
                f"must be less than or equal to {MAX_FAILED_INDEXES_LIMIT_FOR_INDEXED_JOB}",
            )
        )
    if completions is not None and blpi is not None and completions > COMPLETIONS_SOFT_LIMIT and blpi > 0:
        if spec.get("maxFailedIndexes") is None:
            errs.append(
                field.required(
                    sp.child("maxFailedIndexes"),
                    f"must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}",
                )
            )
        if parallelism is not None and parallelism > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS:
            errs.append(
                field.invalid(
                    sp.child("parallelism"),
                    parallelism,
                    f"must be less than or equal to {PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS} when completions are above "
                    f"{COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index",
                )
            )
    return errs


def validate_job_spec_fields(spec: Obj, sp: Path) -> ErrorList:
    """``validateJobSpec``: everything but the selector (shared with a CronJob's jobTemplate)."""
    errs: ErrorList = []
    for key in (
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
    ):
        errs.extend(validate_nonnegative_field(spec.get(key), sp.child(key)))
    if spec.get("maxFailedIndexes") is not None:
        errs.extend(validate_nonnegative_field(spec.get("maxFailedIndexes"), sp.child("maxFailedIndexes")))
        if spec.get("backoffLimitPerIndex") is None:
            errs.append(
                field.required(sp.child("backoffLimitPerIndex"), "when maxFailedIndexes is specified")
            )
    if spec.get("managedBy") is not None:
        errs.extend(_validate_managed_by(spec.get("managedBy"), sp.child("managedBy")))
    mode = spec.get("completionMode")
    if mode is not None:
        if mode not in (NON_INDEXED, INDEXED):
            errs.append(field.not_supported(sp.child("completionMode"), mode, [NON_INDEXED, INDEXED]))
        if mode == INDEXED:
            errs.extend(_validate_indexed(spec, sp))
    if mode is None or mode == NON_INDEXED:
        for key in ("backoffLimitPerIndex", "maxFailedIndexes"):
            if spec.get(key) is not None:
                errs.append(field.invalid(sp.child(key), spec.get(key), "requires indexed completion mode"))
    if spec.get("podFailurePolicy") is not None:
        errs.extend(_validate_pod_failure_policy(spec, sp.child("podFailurePolicy")))
    if spec.get("successPolicy") is not None:
        if (mode or NON_INDEXED) != INDEXED:
            errs.append(
                field.invalid(
                    sp.child("successPolicy"), spec.get("successPolicy"), "requires indexed completion mode"
                )
            )
        else:
            errs.extend(_validate_success_policy(spec, sp.child("successPolicy")))
    prp = spec.get("podReplacementPolicy")
    if prp is not None:
        if spec.get("podFailurePolicy") is not None:
            if prp != "Failed":
                errs.append(field.not_supported(sp.child("podReplacementPolicy"), prp, ["Failed"]))
        elif prp not in POD_REPLACEMENT_POLICIES:
            errs.append(field.not_supported(sp.child("podReplacementPolicy"), prp, POD_REPLACEMENT_POLICIES))
    tp = sp.child("template")
    errs.extend(validate_pod_template_spec(spec.get("template"), tp))
    rp = tp.child("spec", "restartPolicy")
    restart = as_dict(as_dict(spec.get("template")).get("spec")).get("restartPolicy") or ""
    if restart in ("Always", ""):
        errs.append(field.required(rp, 'valid values: "OnFailure", "Never"'))
    elif restart not in ("OnFailure", "Never"):
        errs.append(field.not_supported(rp, restart, ["OnFailure", "Never"]))
    elif spec.get("podFailurePolicy") is not None and restart != "Never":
        errs.append(
            field.invalid(rp, restart, 'only "Never" is supported when podFailurePolicy is specified')
        )
    return errs


def validate_job_spec(spec: Obj, sp: Path) -> ErrorList:
    """``ValidateJobSpec``: the fields plus a required, valid selector matching the template."""
    errs = validate_job_spec_fields(spec, sp)
    sel = spec.get("selector")
    if sel is None:
        errs.append(field.required(sp.child("selector")))
    elif isinstance(sel, dict):
        errs.extend(validate_label_selector(sel, sp.child("selector")))
    parsed = convert_selector(sel)
    if parsed is not None:
        labels = as_dict(as_dict(spec.get("template")).get("metadata")).get("labels")
        if not parsed.matches(as_dict(labels)) and not (sel is not None and parsed.empty):
            errs.append(
                field.invalid(
                    sp.child("template", "metadata", "labels"),
                    labels,
                    "`selector` does not match template `labels`",
                )
            )
    return errs


# ============================================================================ Job updates


def _scheduling_directives_relaxed(template: Obj, old_template: Obj) -> Obj:
    """``validatePodTemplateUpdate`` for a suspended Job that never started: directives may change."""
    old = copy.deepcopy(old_template)
    new_spec, old_spec = as_dict(template.get("spec")), old.setdefault("spec", {})
    new_aff, old_aff = new_spec.get("affinity"), old_spec.get("affinity")
    if new_aff is None and isinstance(old_aff, dict):
        rest = {k: v for k, v in old_aff.items() if k != "nodeAffinity" and v is not None}
        if rest:
            old_spec["affinity"] = rest
        else:
            old_spec.pop("affinity", None)
    elif isinstance(new_aff, dict) and old_aff is None:
        old_spec["affinity"] = {"nodeAffinity": new_aff["nodeAffinity"]} if "nodeAffinity" in new_aff else {}
    elif isinstance(new_aff, dict) and isinstance(old_aff, dict):
        if "nodeAffinity" in new_aff:
            old_aff["nodeAffinity"] = new_aff["nodeAffinity"]
        else:
            old_aff.pop("nodeAffinity", None)
    for key in ("nodeSelector", "tolerations", "schedulingGates"):
        _copy_key(new_spec, old_spec, key)
    old_md, new_md = old.setdefault("metadata", {}), as_dict(template.get("metadata"))
    for key in ("labels", "annotations"):
        _copy_key(new_md, old_md, key)
    return old


def _resources_relaxed(template: Obj, old_template: Obj) -> Obj:
    """Suspended Jobs may change container resources (MutablePodResourcesForSuspendedJobs, beta)."""
    old = copy.deepcopy(old_template)
    new_spec, old_spec = as_dict(template.get("spec")), as_dict(old.get("spec"))
    for key in ("containers", "initContainers"):
        for c, oc in zip(as_list(new_spec.get(key)), as_list(old_spec.get(key)), strict=False):
            if isinstance(oc, dict):
                _copy_key(as_dict(c), oc, "resources")
    return old


def _copy_key(src: Obj, dst: Obj, key: str) -> None:
    if key in src:
        dst[key] = copy.deepcopy(src[key])
    else:
        dst.pop(key, None)


def validate_job_spec_update(new: Obj, old: Obj) -> ErrorList:
    """``ValidateJobSpecUpdate``."""
    spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
    sp = Path("spec")
    errs = validate_job_spec(spec, sp)
    # completions: elastic Indexed Jobs may change it together with parallelism
    if spec.get("completionMode") == INDEXED:
        completions = spec.get("completions")
        if (
            completions != old_spec.get("completions")
            and completions is not None
            and completions != spec.get("parallelism")
        ):
            errs.append(
                field.invalid(
                    sp.child("completions"),
                    completions,
                    "can only be modified in tandem with spec.parallelism",
                )
            )
    else:
        errs.extend(
            validate_immutable(spec.get("completions"), old_spec.get("completions"), sp.child("completions"))
        )
    errs.extend(validate_immutable(spec.get("selector"), old_spec.get("selector"), sp.child("selector")))
    template, old_template = as_dict(spec.get("template")), as_dict(old_spec.get("template"))
    suspended = old_spec.get("suspend") is True
    if suspended and as_dict(old.get("status")).get("startTime") is None:
        old_template = _scheduling_directives_relaxed(template, old_template)
    if suspended:
        old_template = _resources_relaxed(template, old_template)
    if template != old_template:
        errs.append(field.invalid(sp.child("template"), template, "field is immutable"))
    for key in ("completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy", "successPolicy"):
        errs.extend(validate_immutable(spec.get(key), old_spec.get(key), sp.child(key)))
    return errs


# ============================================================================ Job status


def _condition_true(status: Obj, cond_type: str) -> bool:
    return any(
        as_dict(c).get("type") == cond_type and as_dict(c).get("status") == "True"
        for c in as_list(status.get("conditions"))
    )


def validate_job_status(new: Obj, old: Obj) -> ErrorList:
    """``validateJobStatus`` and the condition-order rules the JobManagedBy era added."""
    status, old_status = as_dict(new.get("status")), as_dict(old.get("status"))
    spec = as_dict(new.get("spec"))
    p = Path("status")
    errs: ErrorList = []
    for key in ("active", "succeeded", "failed", "ready", "terminating"):
        errs.extend(validate_nonnegative_field(status.get(key), p.child(key)))
    utp = as_dict(status.get("uncountedTerminatedPods"))
    seen: set[str] = set()
    for key in ("succeeded", "failed"):
        for i, uid in enumerate(as_list(utp.get(key))):
            ip = p.child("uncountedTerminatedPods", key).index(i)
            if not uid:
                errs.append(field.invalid(ip, uid, "must not be empty"))
            elif uid in seen:
                errs.append(field.duplicate(ip, uid))
            else:
                seen.add(uid)
    completions = _int(spec.get("completions"))
    if spec.get("completionMode") == INDEXED and completions is not None:
        for key in ("completedIndexes", "failedIndexes"):
            value = status.get(key)
            if isinstance(value, str) and value != old_status.get(key):
                try:
                    parse_indexes(value, completions)
                except ValueError as e:
                    errs.append(field.invalid(p.child(key), value, f"error parsing {key}: {e}"))
    complete, failed = _condition_true(status, "Complete"), _condition_true(status, "Failed")
    failure_target = _condition_true(status, "FailureTarget")
    success_met = _condition_true(status, "SuccessCriteriaMet")
    cp = p.child("conditions")
    if complete and failed:
        errs.append(_invalid_omit(cp, "cannot set Complete=True and Failed=true conditions"))
    if failed and not failure_target and not _condition_true(old_status, "Failed"):
        errs.append(
            _invalid_omit(cp, "cannot set Failed=True condition without the FailureTarget=true condition")
        )
    if complete and not success_met and not _condition_true(old_status, "Complete"):
        errs.append(
            _invalid_omit(
                cp, "cannot set Complete=True condition without the SuccessCriteriaMet=true condition"
            )
        )
    if success_met and failure_target:
        errs.append(_invalid_omit(cp, "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions"))
    if status.get("completionTime") is not None and not complete:
        errs.append(
            field.invalid(
                p.child("completionTime"),
                status.get("completionTime"),
                "completionTime can only be set for Complete jobs",
            )
        )
    return errs


class JobStrategy(Strategy):
    """``pkg/registry/batch/job``: generated selector, immutable template, KEP-5547 scheduling."""

    has_status = True

    def default(self, obj: Obj) -> None:
        default_job(obj)

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        obj["status"] = {}
        spec = _spec(obj)
        tmpl = as_dict(spec.get("template"))
        podspec.drop_disabled_pod_spec_fields(tmpl.get("spec"), None, ctx.gates)
        drop_disabled_scheduling_fields(ctx, obj, None)
        if spec.get("manualSelector") is not True:
            generate_selector(obj)
        # kube defaults objects again when it decodes them from storage, so a Job created without
        # labels reads back with its template's (now generated) labels; do that once, here.
        md = obj.setdefault("metadata", {})
        tmpl_labels = as_dict(as_dict(as_dict(spec.get("template")).get("metadata")).get("labels"))
        if not md.get("labels") and tmpl_labels:
            md["labels"] = dict(tmpl_labels)

    def prepare_for_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        super().prepare_for_update(ctx, new, old)
        tmpl = as_dict(as_dict(new.get("spec")).get("template"))
        old_tmpl = as_dict(as_dict(old.get("spec")).get("template"))
        podspec.drop_disabled_pod_spec_fields(tmpl.get("spec"), old_tmpl.get("spec"), ctx.gates)
        drop_disabled_scheduling_fields(ctx, new, old)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        errs = validate_generated_selector(obj)
        errs.extend(validate_job_spec(as_dict(obj.get("spec")), Path("spec")))
        errs.extend(validate_job_scheduling(ctx, obj, None))
        return errs

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        errs = validate_generated_selector(new)
        errs.extend(validate_job_spec_update(new, old))
        errs.extend(validate_job_scheduling(ctx, new, old))
        return errs

    def warnings_on_create(self, ctx: StrategyContext, obj: Obj) -> list[str]:
        out: list[str] = []
        name = str(as_dict(obj.get("metadata")).get("name") or "")
        msgs = names.is_dns1123_label(name)
        if msgs:
            out.append(NAME_NOT_DNS_LABEL_WARNING.format(_go_list(msgs)))
        return out + job_spec_warnings(as_dict(obj.get("spec")), Path("spec"))

    def warnings_on_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> list[str]:
        spec = as_dict(new.get("spec"))
        if spec.get("template") == as_dict(old.get("spec")).get("template"):
            return []
        return job_spec_warnings(spec, Path("spec"))

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_job_status(new, old)


def job_spec_warnings(spec: Obj, path: Path) -> list[str]:
    """``WarningsForJobSpec``."""
    out: list[str] = []
    if spec.get("completionMode") == INDEXED:
        completions, parallelism = _int(spec.get("completions")) or 0, _int(spec.get("parallelism")) or 0
        if (
            completions > COMPLETIONS_SOFT_LIMIT
            and parallelism > PARALLELISM_SOFT_LIMIT_FOR_UNLIMITED_COMPLETIONS
        ):
            out.append(f"{path}: {HIGH_COMPLETIONS_WARNING}")
    tmpl = as_dict(spec.get("template"))
    out.extend(pod_warnings(as_dict(tmpl.get("spec")), path.child("template", "spec")))
    return out


# ============================================================================ CronJob


def validate_time_zone(tz: Any, path: Path) -> ErrorList:
    """``validateTimeZone``."""
    if tz is None:
        return []
    if not isinstance(tz, str) or not tz:
        return [field.invalid(path, tz, "timeZone must be nil or non-empty string")]
    for part in tz.split("/"):
        if part in (".", "..") or part.startswith("-") or _TIME_ZONE_PART.fullmatch(part) is None:
            return [field.invalid(path, tz, f"unknown time zone {tz}")]
    errs: ErrorList = []
    if tz.lower() == "local":
        errs.append(
            field.invalid(
                path,
                tz,
                "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
            )
        )
    try:
        cron.load_location(tz)
    except cron.CronError as e:
        errs.append(field.invalid(path, tz, str(e)))
    return errs


def validate_schedule(schedule: str, allow_tz: bool, time_zone: Any, path: Path) -> ErrorList:
    """``validateScheduleFormat``."""
    errs: ErrorList = []
    try:
        cron.parse_standard(schedule)
    except cron.CronError as e:
        errs.append(field.invalid(path, schedule, str(e)))
    if allow_tz and "TZ" in schedule and time_zone is not None:
        errs.append(
            field.invalid(path, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule")
        )
    elif not allow_tz and "TZ" in schedule:
        errs.append(
            field.invalid(path, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
        )
    return errs


def validate_job_template_spec(jt: Any, path: Path) -> ErrorList:
    """``ValidateJobTemplateSpec``: the selector is always generated, so none may be given."""
    spec = as_dict(as_dict(jt).get("spec"))
    sp = path.child("spec")
    errs = validate_job_spec_fields(spec, sp)
    if spec.get("selector") is not None:
        errs.append(
            field.invalid(sp.child("selector"), spec.get("selector"), "`selector` will be auto-generated")
        )
    if spec.get("manualSelector") is True:
        errs.append(field.not_supported(sp.child("manualSelector"), True, ["nil", "false"]))
    sched = spec.get("scheduling")
    if sched is not None:
        errs.extend(dv.validate_embedded_scheduling(sched, sp.child("scheduling")))
        errs.extend(validate_gang_min_count(spec, sp))
    return errs


def validate_cronjob_spec(spec: Obj, old_spec: Obj | None) -> ErrorList:
    """``validateCronJobSpec``."""
    sp = Path("spec")
    errs: ErrorList = []
    schedule = spec.get("schedule")
    if not schedule:
        errs.append(field.required(sp.child("schedule")))
    elif isinstance(schedule, str):
        allow_tz = old_spec is not None and "TZ" in str(old_spec.get("schedule") or "")
        errs.extend(validate_schedule(schedule, allow_tz, spec.get("timeZone"), sp.child("schedule")))
    errs.extend(
        validate_nonnegative_field(spec.get("startingDeadlineSeconds"), sp.child("startingDeadlineSeconds"))
    )
    if old_spec is None or old_spec.get("timeZone") != spec.get("timeZone"):
        errs.extend(validate_time_zone(spec.get("timeZone"), sp.child("timeZone")))
    policy = spec.get("concurrencyPolicy") or ""
    if not policy:
        errs.append(field.required(sp.child("concurrencyPolicy")))
    elif policy not in CONCURRENCY_POLICIES:
        errs.append(field.not_supported(sp.child("concurrencyPolicy"), policy, CONCURRENCY_POLICIES))
    errs.extend(validate_job_template_spec(spec.get("jobTemplate"), sp.child("jobTemplate")))
    for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        errs.extend(validate_nonnegative_field(spec.get(key), sp.child(key)))
    return errs


class CronJobStrategy(Strategy):
    """``pkg/registry/batch/cronjob``."""

    has_status = True

    def default(self, obj: Obj) -> None:
        default_cronjob(obj)

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        obj["status"] = {}
        self._drop(ctx, obj, None)

    def prepare_for_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        super().prepare_for_update(ctx, new, old)
        self._drop(ctx, new, old)

    @staticmethod
    def _drop(ctx: StrategyContext, new: Obj, old: Obj | None) -> None:
        jt = as_dict(as_dict(new.get("spec")).get("jobTemplate"))
        old_jt = as_dict(as_dict((old or {}).get("spec")).get("jobTemplate")) if old is not None else None
        tmpl = as_dict(as_dict(jt.get("spec")).get("template"))
        old_tmpl = (
            as_dict(as_dict((old_jt or {}).get("spec")).get("template")) if old_jt is not None else None
        )
        podspec.drop_disabled_pod_spec_fields(
            tmpl.get("spec"), old_tmpl.get("spec") if old_tmpl is not None else None, ctx.gates
        )
        if isinstance(jt.get("spec"), dict):
            _drop_scheduling(ctx, jt["spec"], (old_jt or {}).get("spec") if old_jt is not None else None)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        errs = validate_cronjob_spec(as_dict(obj.get("spec")), None)
        name = str(as_dict(obj.get("metadata")).get("name") or "")
        if len(name) > CRONJOB_MAX_NAME_LENGTH:
            errs.append(
                field.invalid(
                    Path("metadata", "name"),
                    name,
                    f"must be no more than {CRONJOB_MAX_NAME_LENGTH} characters",
                )
            )
        return errs

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        # the 52-character name limit is skipped on update, so old long-named CronJobs stay editable
        return validate_cronjob_spec(as_dict(new.get("spec")), as_dict(old.get("spec")))

    def warnings_on_create(self, ctx: StrategyContext, obj: Obj) -> list[str]:
        out: list[str] = []
        name = str(as_dict(obj.get("metadata")).get("name") or "")
        msgs = names.is_dns1123_label(name)
        if msgs:
            out.append(NAME_NOT_DNS_LABEL_WARNING.format(_go_list(msgs)))
        jt_spec = as_dict(as_dict(as_dict(obj.get("spec")).get("jobTemplate")).get("spec"))
        return out + job_spec_warnings(jt_spec, Path("spec", "jobTemplate", "spec"))

    def warnings_on_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> list[str]:
        jt_spec = as_dict(as_dict(as_dict(new.get("spec")).get("jobTemplate")).get("spec"))
        old_jt = as_dict(as_dict(as_dict(old.get("spec")).get("jobTemplate")).get("spec"))
        if jt_spec.get("template") == old_jt.get("template"):
            return []
        return job_spec_warnings(jt_spec, Path("spec", "jobTemplate", "spec"))

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return []


# ============================================================================ KEP-5547 spec.scheduling

SCHEDULING_PATH = job_sched.SCHEDULING_PATH
POLICY_PATH = SCHEDULING_PATH.child("schedulingPolicy")
MIN_COUNT_PATH = POLICY_PATH.child("gang", "minCount")
NO_SET = "field cannot be set once created"
NO_UNSET = "field cannot be cleared once set"
IMMUTABLE = "field is immutable"
POLICY_FROZEN = "may not change between basic and gang after creation; only gang.minCount may be changed"
SCHEDULING_GROUP_CONFLICT = (
    "may not be set together with spec.template.spec.schedulingGroup: the referenced PodGroup is authoritative "
    "and spec.scheduling would have no effect"
)


def _drop_scheduling(ctx: StrategyContext, spec: Obj, old_spec: Obj | None) -> None:
    """Gate off: drop ``spec.scheduling`` unless stored; likewise its gated sub-fields."""
    old_sched = as_dict(old_spec).get("scheduling") if old_spec is not None else None
    drop_disabled_embedded_scheduling(ctx.gates, WORKLOAD_WITH_JOB, spec, old_sched)


def drop_disabled_scheduling_fields(ctx: StrategyContext, new: Obj, old: Obj | None) -> None:
    spec = new.get("spec")
    if isinstance(spec, dict):
        _drop_scheduling(ctx, spec, as_dict(old.get("spec")) if old is not None else None)


def validate_gang_min_count(spec: Obj, sp: Path) -> ErrorList:
    """``validateGangMinCount``: a gang larger than the Job's parallelism could never be placed."""
    sched = spec.get("scheduling")
    gang = as_dict(as_dict(as_dict(sched).get("schedulingPolicy")).get("gang"))
    mc = _int(gang.get("minCount"))
    parallelism = _int(spec.get("parallelism"))
    parallelism = 1 if parallelism is None else parallelism
    if mc is not None and mc > parallelism:
        return [
            field.invalid(
                sp.child("scheduling", "schedulingPolicy", "gang", "minCount"),
                mc,
                f"must be less than or equal to {sp.child('parallelism')} ({parallelism})",
            )
        ]
    return []


def _variant(policy: Any) -> str | None:
    p = as_dict(policy)
    if p.get("gang") is not None:
        return "gang"
    if p.get("basic") is not None:
        return "basic"
    return None


def _update_rules(sched: Any, old_sched: Any) -> ErrorList:
    """NoSet/NoUnset on the field and its policy, immutable constraints/mode/claims, frozen variant."""
    if old_sched is None and sched is not None:
        return [field.invalid(SCHEDULING_PATH, None, NO_SET)]
    if old_sched is not None and sched is None:
        return [field.invalid(SCHEDULING_PATH, None, NO_UNSET)]
    new, old = as_dict(sched), as_dict(old_sched)
    errs: ErrorList = []
    policy, old_policy = new.get("schedulingPolicy"), old.get("schedulingPolicy")
    if old_policy is None and policy is not None:
        errs.append(field.invalid(POLICY_PATH, None, NO_SET))
    elif old_policy is not None and policy is None:
        errs.append(field.invalid(POLICY_PATH, None, NO_UNSET))
    elif policy is not None and _variant(policy) != _variant(old_policy):
        errs.append(field.invalid(POLICY_PATH, None, POLICY_FROZEN))
    for key in ("schedulingConstraints", "disruptionMode", "resourceClaims"):
        if new.get(key) != old.get(key):
            errs.append(field.invalid(SCHEDULING_PATH.child(key), None, IMMUTABLE))
    return errs


def validate_job_scheduling(ctx: StrategyContext, job: Obj, old: Obj | None) -> ErrorList:
    """KEP-5547 admission for Job ``spec.scheduling`` (create when ``old`` is None, else update)."""
    spec = as_dict(job.get("spec"))
    sched = spec.get("scheduling")
    old_spec = as_dict(old.get("spec")) if old is not None else {}
    old_sched = old_spec.get("scheduling") if old is not None else None
    errs: ErrorList = []
    if old is not None:
        errs.extend(_update_rules(sched, old_sched))
    if sched is None:
        return errs
    if sched != old_sched:
        errs.extend(dv.validate_embedded_scheduling(sched, SCHEDULING_PATH, old_sched))
    if not isinstance(sched, dict):
        return errs
    sg = as_dict(as_dict(spec.get("template")).get("spec")).get("schedulingGroup")
    old_sg = as_dict(as_dict(old_spec.get("template")).get("spec")).get("schedulingGroup")
    if sg is not None and not (old_sched is not None and old_sg is not None):
        errs.append(field.forbidden(SCHEDULING_PATH, SCHEDULING_GROUP_CONFLICT))
    errs.extend(validate_gang_min_count(spec, Path("spec")))
    item = job_sched.job_workload_item(job, ctx.gates)
    if item.name != job_sched.pod_group_template_name(""):
        old_root = None
        if isinstance(old_sched, dict) and old is not None:
            old_root = job_sched.job_workload_item(old, ctx.gates)
        errs.extend(
            new_builder(item, job_sched.validation_options()).validate(ValidationInput(old_root=old_root))
        )
    return errs


STRATEGIES: dict[tuple[str, str], Strategy] = {
    ("batch", "jobs"): JobStrategy(),
    ("batch", "cronjobs"): CronJobStrategy(),
}
