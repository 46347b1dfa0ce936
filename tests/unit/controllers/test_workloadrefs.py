"""Which discovered Workloads the StatefulSet and Job integrations can use (controllers.workloadrefs)."""

from __future__ import annotations

import pytest

from controllers.workloadrefs import unsupported_structure


def workload(templates: int, composite: bool = False) -> dict:
    spec: dict = {"podGroupTemplates": [{"name": f"t{i}"} for i in range(templates)]}
    if composite:
        spec["compositePodGroupTemplates"] = [{"name": "top", "podGroupTemplates": [{"name": "inner"}]}]
    return {"metadata": {"name": "wl"}, "spec": spec}


def test_one_leaf_template_is_supported() -> None:
    assert unsupported_structure(workload(1)) is None


@pytest.mark.parametrize(
    ("wl", "why"),
    [
        pytest.param(workload(0), "Workload wl has 0 PodGroupTemplates (expected 1)", id="none"),
        pytest.param(workload(2), "Workload wl has 2 PodGroupTemplates (expected 1)", id="two"),
        pytest.param(
            workload(0, True), "Workload wl has 0 PodGroupTemplates (expected 1)", id="composite-only"
        ),
        pytest.param(
            workload(1, True), "Workload wl has 1 PodGroupTemplates (expected 1)", id="one-plus-composite"
        ),
    ],
)
def test_other_structures_are_refused_with_the_event_message_start(wl: dict, why: str) -> None:
    assert unsupported_structure(wl) == why
