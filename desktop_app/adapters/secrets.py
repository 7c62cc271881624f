"""The LLM API key in the OS keyring (Secret Service, macOS Keychain, Windows Credential Locker)."""

from __future__ import annotations

from typing import Final

from desktop_app.core.errors import StoreError

__all__ = ["KEYRING_SERVICE", "KEYRING_USER", "delete_api_key", "get_api_key", "set_api_key"]

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
