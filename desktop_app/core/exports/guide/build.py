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
from desktop_app.core.models.workflow import Parameter, ParameterType, Workflow
from desktop_app.core.ports import MediaStore

__all__ = ["build_guide", "describe_step"]

_TYPE_WORDS: Final = {
    ParameterType.TEXT: "text",
    ParameterType.NUMBER: "number",
    ParameterType.DATE: "date",
    ParameterType.EMAIL: "email address",
    ParameterType.BOOL: "yes or no",
    ParameterType.SECRET: "secret",
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
    steps = []
    for number, step in enumerate(workflow.steps, start=1):
        image_name = image = None
        ref = step.screenshot
        if ref is not None and media.exists(ref):
            image_name = f"step-{number:02d}.{ref.rsplit('.', 1)[-1]}"
            image = media.get(ref)
        steps.append(
            GuideStep(
                number=number,
                action=writer.action(step, number),
                expectations=tuple(
                    tuple(_ending(list(writer.expectation(e)))) for e in step.expectations
                ),
                irreversible=step.irreversible,
                optional=step.optional,
                image_name=image_name,
                image=image,
            )
        )
    return Guide(
        title=workflow.name,
        description=workflow.description,
        domains=workflow.domains,
        parameters=tuple(_parameter_row(p) for p in workflow.parameters),
        steps=tuple(steps),
        version=workflow.version,
        workflow_id=workflow.id,
        done_when=tuple(writer.done_when(e) for e in workflow.success),
    )


def describe_step(workflow: Workflow, index: int) -> str:
    """Step *index* (from 0) of *workflow* in plain words, e.g. "Click Save."."""
    step = workflow.steps[index]
    writer = _Writer(workflow)
    for number, earlier in enumerate(workflow.steps[:index], start=1):
        writer.action(earlier, number)  # so a noted variable knows its step
    return _plain(writer.action(step, index + 1))
