"""The actions steps do to their element, and reading back what a fill, select or check left
in the control: the end state must hold."""

from __future__ import annotations

from collections.abc import Collection

from desktop_app.core.models.workflow import (
    CheckStep,
    ClickStep,
    FillStep,
    PressStep,
    ScrollStep,
    SelectStep,
    Step,
)
from desktop_app.core.replay.browser import FieldState, PageAction
from desktop_app.core.replay.ladder import StepFailed

__all__ = ["already_holds", "mismatch", "page_action"]


def _comparable(text: str) -> str:
    """A value as two spellings of it agree: letters and digits only, in order (a field that
    formats what was typed, "(555) 123-4567" for "5551234567", still holds it)."""
    return "".join(ch for ch in text if ch.isalnum())


def mismatch(action: PageAction, state: FieldState) -> str | None:
    """What is wrong with the control after *action*, or None when it holds what was asked."""
    match action.kind:
        case "fill":
            if state.value == action.value or _comparable(state.value) == _comparable(action.value):
                return None
            if _same_number(state.value, action.value):
                return None
            if action.secret:
                return "the secret field does not hold the value typed"
            return f"the field holds {state.value[:80]!r}, not {action.value[:80]!r}"
        case "select":
            if action.value in state.selected:
                return None
            shown = state.selected[0] if state.selected else "nothing"
            return f"the list shows {shown!r}, not {action.value!r}"
        case "check":
            if state.checked is None or state.checked == action.checked:
                return None
            return "the box is " + ("unchecked" if action.checked else "still checked")
    return None


def _same_number(a: str, b: str) -> bool:
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def already_holds(action: PageAction, state: FieldState) -> bool:
    """Whether the control held what a select or check asks before it was done (doing it
    then changes nothing, and the page has nothing to react to)."""
    if action.kind == "select":
        return action.value in state.selected
    if action.kind == "check":
        return state.checked is not None and state.checked == action.checked
    return False


def page_action(
    bound: Step, secret_names: Collection[str], original: Step | None = None
) -> PageAction:
    """What *bound* (a step with the run's values filled in) does to its element; whether a
    secret goes in is told by the step as written (*original*), naming one of *secret_names*."""
    # Whether a secret goes in: the step as written says so (*bound* has its values filled).
    written = getattr(original if original is not None else bound, "value", "")
    secret = any(f"{{{name}}}" in str(written) for name in secret_names)
    match bound:
        case ClickStep():
            return PageAction(
                kind="click",
                button=bound.button,
                click_count=bound.click_count,
                modifiers=bound.modifiers,
            )
        case FillStep(value=value):
            return PageAction(kind="fill", value=value, secret=secret or bound.target.is_sensitive)
        case SelectStep(value=value):
            return PageAction(kind="select", value=value)
        case CheckStep(checked=checked):
            return PageAction(kind="check", checked=checked is True)
        case PressStep(key=key):
            return PageAction(kind="press", key=key)
        case ScrollStep(dx=dx, dy=dy):
            return PageAction(kind="scroll", dx=dx, dy=dy)
    raise StepFailed(f"a {bound.kind} step has no browser action")
