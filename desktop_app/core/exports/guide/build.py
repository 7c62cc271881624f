"""A workflow made into a :class:`Guide` (its screenshots included), and one step in words."""

from __future__ import annotations

from typing import Final

from desktop_app.core.exports.guide.model import (
    Guide,
    GuideStep,
    Run,
    Sentence,
    _ending,
    _human,
    _plain,
    _t,
)
from desktop_app.core.exports.guide.writer import _Writer
from desktop_app.core.models.workflow import Parameter, ParameterType, Step, Workflow, branches
from desktop_app.core.ports import MediaStore
from desktop_app.core.step_places import step_places

__all__ = ["build_guide", "describe_step"]

_TYPE_WORDS: Final = {
    ParameterType.TEXT: "text",
    ParameterType.NUMBER: "number",
    ParameterType.DATE: "date",
    ParameterType.EMAIL: "email address",
    ParameterType.BOOL: "yes or no",
    ParameterType.SECRET: "secret",
    ParameterType.LIST: "list, one item a line",
}


def _parameter_row(param: Parameter) -> tuple[Sentence, str, str, str]:
    name: Sentence = (_t(_human(param.name) + " ("), Run("code", param.name), _t(")"))
    kind = _TYPE_WORDS.get(param.type, param.type.value)
    if param.type is ParameterType.CHOICE:
        kind = "one of: " + ", ".join(param.choices)
    if param.type is ParameterType.SECRET or param.default is None:
        default = "—" if param.required or param.type is ParameterType.SECRET else "— (optional)"
    elif isinstance(param.default, bool):
        default = "yes" if param.default else "no"
    elif param.default == "":
        default = "(empty)"
    else:
        default = str(param.default)
    return name, param.description, kind, default


def build_guide(workflow: Workflow, media: MediaStore) -> Guide:
    """The guide of *workflow*, with the screenshots *media* holds (a missing one is left out)."""
    writer = _Writer(workflow)
    return Guide(
        title=workflow.name,
        description=workflow.description,
        domains=workflow.domains,
        parameters=tuple(_parameter_row(p) for p in workflow.parameters),
        steps=_guide_steps(workflow.steps, writer, media, "", 1),
        version=workflow.version,
        workflow_id=workflow.id,
        done_when=tuple(writer.done_when(e) for e in workflow.success),
    )


def _guide_steps(
    steps: tuple[Step, ...], writer: _Writer, media: MediaStore, prefix: str, start: int
) -> tuple[GuideStep, ...]:
    """*steps* as guide steps numbered ``prefix`` + ``start`` on (``4.1``, ``4.2``…), the
    steps of blocks among them inside theirs."""
    out = []
    for number, step in enumerate(steps, start=start):
        label = f"{prefix}{number}"
        image_name = image = None
        ref = step.screenshot
        if ref is not None and media.exists(ref):
            image_name = f"step-{_file_number(label)}.{ref.rsplit('.', 1)[-1]}"
            image = media.get(ref)
        action = writer.action(step, label)
        held = dict(branches(step))
        with writer.inside(step):
            inner = _guide_steps(held.get("steps", ()), writer, media, f"{label}.", 1)
        otherwise = held.get("otherwise", ())
        out.append(
            GuideStep(
                number=number,
                action=action,
                expectations=tuple(
                    tuple(_ending(list(writer.expectation(e)))) for e in step.expectations
                ),
                irreversible=step.irreversible,
                optional=step.optional,
                image_name=image_name,
                image=image,
                label=label if prefix else "",
                steps=inner,
                otherwise=_guide_steps(otherwise, writer, media, f"{label}.", 1 + len(inner)),
                otherwise_intro=writer.otherwise_intro(step) if otherwise else (),
            )
        )
    return tuple(out)


def _file_number(label: str) -> str:
    """``4.12`` → ``04-12``: image files sort as the steps do."""
    return "-".join(f"{int(part):02d}" for part in label.split("."))


def describe_step(workflow: Workflow, index: int) -> str:
    """Step *index* (from 0) of *workflow* in plain words, e.g. "Click Save."."""
    step = workflow.steps[index]
    writer = _Writer(workflow)
    for place in step_places(workflow.steps[:index]):
        writer.action(place.step, place.number)  # so a noted variable knows its step
    return _plain(writer.action(step, str(index + 1)))
