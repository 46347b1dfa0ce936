"""``gangplane serve --ui/--no-ui``: the view is on by default and can be turned off."""

from __future__ import annotations

import pytest

from gangplane.cli import _parser


def test_the_view_is_on_by_default_and_no_ui_turns_it_off(capsys: pytest.CaptureFixture[str]) -> None:
    assert _parser().parse_args(["serve"]).ui is True
    assert _parser().parse_args(["serve", "--no-ui"]).ui is False
    with pytest.raises(SystemExit):
        _parser().parse_args(["serve", "--help"])
    assert "--ui, --no-ui" in capsys.readouterr().out
