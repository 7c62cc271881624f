"""Which secrets are remembered: only values the person gave for this run, only when asked, and
a keyring that refuses is told, not fatal (desktop_app/ops/secrets.py)."""

from __future__ import annotations

from collections.abc import Mapping

from desktop_app.ops.secrets import remember_secrets


class _Keyring:
    def __init__(self, refuse: bool = False) -> None:
        self.kept: dict[str, dict[str, str]] = {}
        self.refuse = refuse

    def __call__(self, workflow_id: str, secrets: Mapping[str, str]) -> str | None:
        if self.refuse:
            return f"Not remembered: {', '.join(secrets)} (no usable OS keyring)."
        self.kept.setdefault(workflow_id, {}).update(secrets)
        return None


def test_only_values_given_now_are_kept_and_only_when_asked() -> None:
    keyring = _Keyring()
    values = {"password": "typed-now", "token": "from-the-environment", "pin": ""}
    assert remember_secrets(keyring, "w1", values, asked=False, given=["password"]) is None
    assert keyring.kept == {}
    assert remember_secrets(keyring, "w1", values, asked=True, given=["password", "pin"]) is None
    assert keyring.kept == {"w1": {"password": "typed-now"}}  # not the env's, not an empty one


def test_a_keyring_that_refuses_is_told_in_one_line() -> None:
    said = remember_secrets(
        _Keyring(refuse=True), "w1", {"password": "x"}, asked=True, given=["password"]
    )
    assert said == "Not remembered: password (no usable OS keyring)."
