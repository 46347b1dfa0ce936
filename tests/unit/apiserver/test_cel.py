"""apiserver.cel: compile errors usable as field errors, cached programs, the DRA device environment."""

from __future__ import annotations

import pytest

from apiserver.cel import CompileError, Environment, EvalError, compile_expression
from apiserver.cel.dra import compile_selector, device_activation
from apiserver.cel.library import compare_to, quantity

GPU = {
    "name": "gpu-0",
    "attributes": {
        "model": {"string": "a100"},
        "index": {"int": 3},
        "mig": {"bool": False},
        "driverVersion": {"version": "1.2.3-rc.1"},
        "example.com/rack": {"string": "r1"},
        "cores": {"ints": [0, 1]},
    },
    "capacity": {"memory": {"value": "40Gi"}, "example.com/bandwidth": {"value": "100M"}},
}
DEVICE = device_activation("gpu.example.com", GPU)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('device.driver == "gpu.example.com"', True),
        ('device.attributes["gpu.example.com"].model == "a100"', True),
        (
            'device.attributes["gpu.example.com"].index == 3 && !device.attributes["gpu.example.com"].mig',
            True,
        ),
        ('device.attributes["example.com"].rack == "r1"', True),
        ('device.attributes["gpu.example.com"].cores.exists(c, c == 1)', True),
        ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40960Mi")) == 0', True),
        ('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("16Gi"))', True),
        ('device.capacity["example.com"].bandwidth.isLessThan(quantity("1G"))', True),
        ('device.attributes["gpu.example.com"].driverVersion.isLessThan(semver("1.2.3"))', True),
        ('semver("1.10.0").isGreaterThan(semver("1.9.0"))', True),
        ('semver("2.1.0").major() == 2 && semver("2.1.0").minor() == 1', True),
        (
            'has(device.attributes["gpu.example.com"].model) && !has(device.attributes["gpu.example.com"].x)',
            True,
        ),
        ('["a", "b"].all(x, x.size() == 1) && [1, 2, 3].filter(x, x > 1).size() == 2', True),
        ('"a,b,c".split(",").size() == 3 && "GPU".lowerAscii() == "gpu" && "abc".indexOf("c") == 2', True),
        ("1u + 2u == 3u && 1.5 * 2.0 == 3.0 && int(3u) == 3", True),
        ('{"k": 1}["k"] == 1 && "k" in {"k": 1}', True),
        ('quantity("1.5").isInteger()', False),
        ('quantity("2k").asInteger() == 2000', True),
        ('isQuantity("1Gi") && !isQuantity("one") && isSemver("1.0.0") && !isSemver("1.0")', True),
        ("device.allowMultipleAllocations", False),
    ],
)
def test_device_selector_sees_upstream_types(expression: str, expected: bool) -> None:
    assert compile_selector(expression).evaluate_bool(DEVICE) is expected


@pytest.mark.parametrize(
    ("expression", "detail"),
    [
        (
            "device.driver ==",
            "compilation failed: ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>'",
        ),
        ("pod.name == 'x'", "compilation failed: ERROR: undeclared reference to 'pod' (in container '')"),
        (
            "device.driver.frobnicate()",
            "compilation failed: ERROR: undeclared reference to 'frobnicate' (in container '')",
        ),
    ],
)
def test_compile_errors_read_like_cel_go(expression: str, detail: str) -> None:
    with pytest.raises(CompileError) as e:
        compile_selector(expression)
    assert e.value.kind == "Invalid" and e.value.detail.startswith(detail)


def test_empty_and_overlong_expressions() -> None:
    with pytest.raises(CompileError) as e:
        compile_selector("  ")
    assert e.value.kind == "Required"
    with pytest.raises(CompileError) as e:
        compile_selector("true && " * 2000 + "true")
    assert e.value.detail == "must be at most 10240 bytes long"


def test_programs_are_cached_per_environment_and_text() -> None:
    assert compile_selector('device.driver == "a"') is compile_selector('device.driver == "a"')
    other = Environment(name="crd", variables=frozenset({"self", "oldSelf"}))
    p = compile_expression(other, "self.replicas >= oldSelf.replicas")
    assert p is compile_expression(other, "self.replicas >= oldSelf.replicas")
    assert p.evaluate({"self": {"replicas": 3}, "oldSelf": {"replicas": 2}}) is True
    with pytest.raises(CompileError):
        compile_expression(other, 'device.driver == "a"')


def test_runtime_errors_are_eval_errors() -> None:
    with pytest.raises(EvalError, match="no such key: nope"):
        compile_selector('device.attributes["gpu.example.com"].nope == "x"').evaluate_bool(DEVICE)
    with pytest.raises(EvalError, match="must evaluate to bool, got int"):
        compile_selector('device.attributes["gpu.example.com"].index').evaluate_bool(DEVICE)
    with pytest.raises(EvalError):
        compile_selector('quantity("not a quantity").sign() == 1').evaluate_bool(DEVICE)


def test_library_helpers() -> None:
    assert quantity("1024Mi") == "1Gi"
    assert compare_to("1Gi", "1024Mi") == 0
    assert compare_to("1.0.0-alpha", "1.0.0") < 0
    assert compare_to("1.0.0-alpha.1", "1.0.0-alpha.beta") < 0


def test_an_unbound_variable_does_not_see_an_earlier_activation() -> None:
    env = Environment(name="crd-transition", variables=frozenset({"self", "oldSelf"}))
    p = compile_expression(env, "self.x >= oldSelf.x")
    assert p.evaluate({"self": {"x": 2}, "oldSelf": {"x": 1}}) is True
    with pytest.raises(EvalError):
        p.evaluate({"self": {"x": 2}})  # create: oldSelf is unbound, not the previous one
