"""Which secret values are remembered, and when — one rule for ``procedura run`` (and
``--params-csv``), the run window, the batch window and the hand-off.

A secret parameter's value is kept in the OS keyring only when the person asked for it
(``--save-secrets``, or "Remember secrets in the system keyring") and only a value the person
gave for this run: typed at the prompt or in the form. One read from the keyring or from
``--secret-env`` is not written back. A batch remembers its secrets once, not per row. A keyring
that is missing or refuses never stops the run: the person is told, in one line, what was not
kept, and the run goes on with the values typed.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

__all__ = ["Keeper", "remember_secrets"]

#: Keeps a workflow's secret values; None when kept, else one line saying what was not and why
#: (``desktop_app.adapters.secrets.remember_parameter_secrets``).
Keeper = Callable[[str, Mapping[str, str]], "str | None"]


def remember_secrets(
    keep: Keeper,
    workflow_id: str,
    secrets: Mapping[str, str],
    *,
    asked: bool,
    given: Collection[str],
) -> str | None:
    """Remember the secret values the person gave for this run, if they asked (blocking).

    Args:
        keep: what keeps them (the OS keyring).
        workflow_id: whose parameters they are.
        secrets: every secret parameter's value for this run.
        asked: the person asked for them to be remembered.
        given: the names whose value the person gave now (typed; not read from the keyring or
            the environment). Empty values are never kept.

    Returns:
        None, or what was not remembered and why (to tell the person; the run goes on).
    """
    if not asked:
        return None
    chosen = {name: value for name, value in secrets.items() if name in given and value}
    if not chosen:
        return None
    return keep(workflow_id, chosen)
