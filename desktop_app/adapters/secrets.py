"""The LLM API key, workflows' secret parameters and team credentials in the OS keyring.

The keyring is the Secret Service on Linux, the Keychain on macOS, the Credential Locker on Windows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from desktop_app.core.errors import StoreError

__all__ = [
    "KEYRING_SERVICE",
    "KEYRING_USER",
    "delete_api_key",
    "delete_team_secret",
    "get_api_key",
    "get_parameter_secret",
    "get_team_secret",
    "remember_parameter_secrets",
    "set_api_key",
    "set_parameter_secret",
    "set_team_secret",
]

KEYRING_SERVICE: Final = "procedura"
KEYRING_USER: Final = "llm_api_key"


def get_api_key() -> str | None:
    """The key stored in the keyring, or None when there is none or no keyring is available."""
    import keyring
    from keyring.errors import KeyringError

    try:
        return keyring.get_password(KEYRING_SERVICE, KEYRING_USER)
    except (KeyringError, RuntimeError):
        return None


def set_api_key(value: str) -> None:
    """Store the key in the keyring.

    Raises:
        StoreError: no usable keyring on this system.
    """
    import keyring
    from keyring.errors import KeyringError

    try:
        keyring.set_password(KEYRING_SERVICE, KEYRING_USER, value)
    except (KeyringError, RuntimeError) as exc:
        raise StoreError(
            f"no usable OS keyring ({exc}); set OPENAI_API_KEY in the environment instead"
        ) from None


def delete_api_key() -> None:
    """Remove the key from the keyring (nothing happens if there is none)."""
    import keyring
    from keyring.errors import KeyringError, PasswordDeleteError

    try:
        keyring.delete_password(KEYRING_SERVICE, KEYRING_USER)
    except PasswordDeleteError:
        return
    except (KeyringError, RuntimeError) as exc:
        raise StoreError(f"no usable OS keyring ({exc})") from None


def _parameter_user(workflow_id: str, name: str) -> str:
    return f"workflow:{workflow_id}:{name}"


def get_parameter_secret(workflow_id: str, name: str) -> str | None:
    """A workflow's secret parameter from the keyring (None: not stored, or no keyring)."""
    import keyring
    from keyring.errors import KeyringError

    try:
        return keyring.get_password(KEYRING_SERVICE, _parameter_user(workflow_id, name))
    except (KeyringError, RuntimeError):
        return None


def set_parameter_secret(workflow_id: str, name: str, value: str) -> None:
    """Keep a workflow's secret parameter in the keyring for later runs.

    Raises:
        StoreError: no usable keyring on this system.
    """
    import keyring
    from keyring.errors import KeyringError

    try:
        keyring.set_password(KEYRING_SERVICE, _parameter_user(workflow_id, name), value)
    except (KeyringError, RuntimeError) as exc:
        raise StoreError(f"no usable OS keyring ({exc}); the secret was not saved") from None


def remember_parameter_secrets(workflow_id: str, secrets: Mapping[str, str]) -> str | None:
    """Keep each of a workflow's secret values (the empty ones aside) in the keyring, for later
    runs. None when they were kept; else what was not remembered and why, in one line, for the
    person who asked: a keyring that is missing or refuses never stops the run the values were
    typed for."""
    names = [name for name, value in secrets.items() if value]
    for done, name in enumerate(names):
        try:
            set_parameter_secret(workflow_id, name, secrets[name])
        except StoreError as exc:
            missed = ", ".join(names[done:])
            why = str(exc).removesuffix("; the secret was not saved")
            return (
                f"Not remembered: {missed} ({why}). The values typed are used for this run "
                "only; type them again next time."
            )
    return None


def _team_user(kind: str, where: str) -> str:
    return f"team-{kind}:{where}"


def get_team_secret(kind: str, where: str) -> str | None:
    """A team credential (*kind* ``password`` of the database URL *where*, or ``token`` of
    the index server *where*), or None."""
    import keyring
    from keyring.errors import KeyringError

    try:
        return keyring.get_password(KEYRING_SERVICE, _team_user(kind, where))
    except (KeyringError, RuntimeError):
        return None


def set_team_secret(kind: str, where: str, value: str) -> None:
    """Keep a team credential in the keyring (see :func:`get_team_secret`).

    Raises:
        StoreError: no usable keyring on this system.
    """
    import keyring
    from keyring.errors import KeyringError

    try:
        keyring.set_password(KEYRING_SERVICE, _team_user(kind, where), value)
    except (KeyringError, RuntimeError) as exc:
        variable = "PROCEDURA_TEAM_PASSWORD" if kind == "password" else "PROCEDURA_TEAM_INDEX_TOKEN"
        raise StoreError(f"no usable OS keyring ({exc}); set {variable} instead") from None


def delete_team_secret(kind: str, where: str) -> None:
    """Forget a team credential (nothing happens if there is none)."""
    import keyring
    from keyring.errors import KeyringError, PasswordDeleteError

    try:
        keyring.delete_password(KEYRING_SERVICE, _team_user(kind, where))
    except (PasswordDeleteError, KeyringError, RuntimeError):
        return
