"""A strategy module the resource table names but cannot import is an error at start, naming it."""

from __future__ import annotations

import pytest

from apiserver.registry import builtin
from apiserver.registry.builtin import StrategyModuleError
from apiserver.server.instance import build_api
from gangplane import cli

MISSING = "apiserver.registry.strategies.does_not_exist"


def test_every_builtin_resource_has_a_strategy_from_a_named_module() -> None:
    strategies = builtin._load_strategies()
    for rd in builtin.builtin_resources():
        assert strategies[(rd.group, rd.plural)] is rd.strategy


def test_a_missing_strategy_module_fails_the_api_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builtin, "_STRATEGY_MODULES", (*builtin._STRATEGY_MODULES, MISSING))
    with pytest.raises(StrategyModuleError, match=rf"^strategy module {MISSING} not found$"):
        build_api()


def test_a_module_without_a_strategies_table_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    mod = "apiserver.registry.strategies.pod_defaults"
    monkeypatch.setattr(builtin, "_STRATEGY_MODULES", (*builtin._STRATEGY_MODULES, mod))
    with pytest.raises(StrategyModuleError, match=rf"^strategy module {mod} defines no STRATEGIES table$"):
        build_api()


def test_a_resource_no_module_defines_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    kept = tuple(m for m in builtin._STRATEGY_MODULES if not m.endswith(".batch"))
    monkeypatch.setattr(builtin, "_STRATEGY_MODULES", kept)
    with pytest.raises(StrategyModuleError, match=r"^no strategy for jobs\.batch in any of "):
        build_api()


def test_gangplane_serve_refuses_to_start_without_a_strategy_module(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(builtin, "_STRATEGY_MODULES", (*builtin._STRATEGY_MODULES, MISSING))
    assert cli.main(["serve", "--port", "0", "--kubeconfig", "unused.kubeconfig"]) == 2
    err = capsys.readouterr().err
    assert f"gangplane: cannot build the API server: strategy module {MISSING} not found" in err
