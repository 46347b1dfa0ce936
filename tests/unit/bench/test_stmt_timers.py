"""``bench/micro/stmt_timers.py``: each statement of a named function timed, the function unchanged."""

from __future__ import annotations

import pytest

from bench.micro.stmt_timers import StatementTimers

SPEC = "tests.unit.bench.test_stmt_timers:_sample"


def _sample(n: int, label: str = "x") -> list[str]:
    """A docstring, which is no step."""
    out = [label] * n
    if n > 2:
        return out[:2]
    for _ in range(n):
        out.append("y")
    return out


class _Owner:
    @staticmethod
    def twice(v: int) -> int:
        return 2 * v


class _Private:
    def __init__(self) -> None:
        self.__hidden = 1

    def peek(self) -> int:
        return self.__hidden


async def _coroutine() -> None:
    return None


def _closure() -> object:
    x = 1

    def inner() -> int:
        return x

    return inner


def test_the_statements_are_timed_and_the_function_answers_as_before() -> None:
    import tests.unit.bench.test_stmt_timers as here

    original = here._sample
    timers = StatementTimers()
    timers.instrument(SPEC + "@label")
    try:
        assert here._sample is not original
        assert here._sample(1) == ["x", "y"]  # not counted: outside the phase
        timers.timers.active = True
        assert here._sample(1, "a") == ["a", "y"]
        assert here._sample(5, "b") == ["b", "b"]
        assert here._sample(0, "a") == []
    finally:
        timers.restore()
    assert here._sample is original
    assert "_stmt_timers_clock" not in vars(here) and "_stmt_timers_record" not in vars(here)
    assert timers.calls == {("_sample", "a"): 2, ("_sample", "b"): 1}
    steps = timers.steps[("_sample", "a")]
    first = original.__code__.co_firstlineno
    # the statements after the docstring: the list, the if, the for, the last return
    assert set(steps) == {
        f"L{first + 2}-{first + 2}",
        f"L{first + 3}-{first + 4}",
        f"L{first + 5}-{first + 6}",
        f"L{first + 7} return",
    }
    assert all(len(v) == 2 for v in steps.values())  # both calls ran every step
    early = timers.steps[("_sample", "b")]
    assert set(early) == {f"L{first + 2}-{first + 2}", f"L{first + 4} return"}  # returned inside the if
    lines = timers.report(sets=1)
    assert lines[0].startswith("== _sample [a] calls/set 2.00")
    assert any("for _ in range(n):" in line for line in lines)


def test_a_static_method_is_timed_and_put_back() -> None:
    timers = StatementTimers()
    timers.instrument("tests.unit.bench.test_stmt_timers:_Owner.twice")
    timers.timers.active = True
    try:
        assert _Owner.twice(4) == 8 and _Owner().twice(1) == 2
    finally:
        timers.restore()
    assert isinstance(_Owner.__dict__["twice"], staticmethod)
    assert timers.calls == {("_Owner.twice", ""): 2}


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("tests.unit.bench.test_stmt_timers:_coroutine", "coroutine"),
        ("scheduler.schedule_one._totals", "MODULE:QUALNAME"),
        ("tests.unit.bench.test_stmt_timers:SPEC", "not a function"),
        ("tests.unit.bench.test_stmt_timers:_Private.peek", "private attribute"),
    ],
)
def test_what_cannot_be_compiled_again_is_refused(spec: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        StatementTimers().instrument(spec)


def test_a_function_with_free_variables_is_refused() -> None:
    import tests.unit.bench.test_stmt_timers as here

    here._inner = _closure()  # type: ignore[attr-defined]
    try:
        with pytest.raises(ValueError, match="free variables"):
            StatementTimers().instrument("tests.unit.bench.test_stmt_timers:_inner")
    finally:
        del here._inner  # type: ignore[attr-defined]


def test_a_key_that_cannot_be_evaluated_on_a_path_is_a_question_mark() -> None:
    import tests.unit.bench.test_stmt_timers as here

    timers = StatementTimers()
    timers.instrument(SPEC + "@_")  # ``_`` is assigned only by the ``for`` the early return skips
    timers.timers.active = True
    try:
        assert here._sample(5) == ["x", "x"]  # returned early: no ``_``, the call is still answered
        assert here._sample(1) == ["x", "y"]
    finally:
        timers.restore()
    assert timers.calls == {("_sample", "?"): 1, ("_sample", "0"): 1}


def _raises(n: int) -> int:
    if n:
        raise ValueError("no")
    return n


def test_a_call_that_raises_raises_as_before_and_is_not_counted() -> None:
    import tests.unit.bench.test_stmt_timers as here

    timers = StatementTimers()
    timers.instrument("tests.unit.bench.test_stmt_timers:_raises")
    timers.timers.active = True
    try:
        with pytest.raises(ValueError, match="no"):
            here._raises(1)
        assert here._raises(0) == 0
    finally:
        timers.restore()
    assert timers.calls == {("_raises", ""): 1}
