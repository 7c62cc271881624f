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


def _read(user: str) -> str | None:
    """The keyring's entry for *user*, or None when there is none or no keyring is usable."""
    import keyring
    from keyring.errors import KeyringError

    try:
        return keyring.get_password(KEYRING_SERVICE, user)
    except (KeyringError, RuntimeError):
        return None


def _keep(user: str, value: str, *, otherwise: str) -> None:
    """Keep *value* as *user*'s entry; a missing or refusing keyring raises a :class:`StoreError`
    ending with *otherwise* (what to do instead)."""
    import keyring
    from keyring.errors import KeyringError

    try:
        keyring.set_password(KEYRING_SERVICE, user, value)
    except (KeyringError, RuntimeError) as exc:
        raise StoreError(f"no usable OS keyring ({exc}); {otherwise}") from None


def _forget(user: str, *, quietly: bool) -> None:
    """Remove *user*'s entry (nothing happens if there is none); a keyring that cannot be used
    raises a :class:`StoreError` unless *quietly*."""
    import keyring
    from keyring.errors import KeyringError, PasswordDeleteError

    try:
        keyring.delete_password(KEYRING_SERVICE, user)
    except PasswordDeleteError:
        return
    except (KeyringError, RuntimeError) as exc:
        if not quietly:
            raise StoreError(f"no usable OS keyring ({exc})") from None


def get_api_key() -> str | None:
    """The key stored in the keyring, or None when there is none or no keyring is available."""
    return _read(KEYRING_USER)


def set_api_key(value: str) -> None:
    """Store the key in the keyring.

    Raises:
        StoreError: no usable keyring on this system.
    """
    _keep(KEYRING_USER, value, otherwise="set OPENAI_API_KEY in the environment instead")


def delete_api_key() -> None:
    """Remove the key from the keyring (nothing happens if there is none)."""
    _forget(KEYRING_USER, quietly=False)


def _parameter_user(workflow_id: str, name: str) -> str:
    return f"workflow:{workflow_id}:{name}"


def get_parameter_secret(workflow_id: str, name: str) -> str | None:
    """A workflow's secret parameter from the keyring (None: not stored, or no keyring)."""
    return _read(_parameter_user(workflow_id, name))


def set_parameter_secret(workflow_id: str, name: str, value: str) -> None:
    """Keep a workflow's secret parameter in the keyring for later runs.

    Raises:
        StoreError: no usable keyring on this system.
    """
    _keep(_parameter_user(workflow_id, name), value, otherwise="the secret was not saved")


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


#: Where a team credential can be given when there is no keyring.
_TEAM_VARIABLES: Final = {
    "password": "PROCEDURA_TEAM_PASSWORD",
    "token": "PROCEDURA_TEAM_INDEX_TOKEN",
    "queue": "PROCEDURA_TEAM_QUEUE_PASSWORD",
}


def get_team_secret(kind: str, where: str) -> str | None:
    """A team credential (*kind* ``password`` of the database URL *where*, ``token`` of the
    index server *where*, ``queue`` of the fleet's queue *where*), or None."""
    return _read(_team_user(kind, where))


def set_team_secret(kind: str, where: str, value: str) -> None:
    """Keep a team credential in the keyring (see :func:`get_team_secret`).

    Raises:
        StoreError: no usable keyring on this system.
    """
    variable = _TEAM_VARIABLES.get(kind, "the environment variable")
    _keep(_team_user(kind, where), value, otherwise=f"set {variable} instead")


def delete_team_secret(kind: str, where: str) -> None:
    """Forget a team credential (nothing happens if there is none, or no keyring)."""
    _forget(_team_user(kind, where), quietly=True)
