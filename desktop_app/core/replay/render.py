"""Steps as they run: placeholders filled in, and a workflow moved to another origin."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from pydantic import TypeAdapter

from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.target import Fingerprint, Target
from desktop_app.core.models.workflow import (
    NON_TEMPLATE_FIELDS,
    Condition,
    Expectation,
    GotoStep,
    ItemSource,
    ParameterType,
    Step,
    Workflow,
    walk,
)
from desktop_app.core.templating import placeholders, render

__all__ = [
    "RebaseError",
    "check_base_url",
    "domain_allowed",
    "fingerprint_for_run",
    "rebase",
    "recorded_origin",
    "render_condition",
    "render_expectation",
    "render_source",
    "render_step",
    "render_text",
]

_STEP: TypeAdapter[Step] = TypeAdapter(Step)
_EXPECTATION: TypeAdapter[Expectation] = TypeAdapter(Expectation)
_CONDITION: TypeAdapter[Condition] = TypeAdapter(Condition)


class RebaseError(ProceduraError):
    """A ``--base-url`` that is not an http(s) origin, or a workflow with no URL to move."""


def render_text(template: str, values: Mapping[str, str]) -> str:
    """*template* with its placeholders filled (a placeholder with no value stays as it is)."""
    return render(template, _Missing(values))


class _Missing(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _render_value(value: Any, values: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return render(value, values)
    if isinstance(value, dict):
        return {
            k: (v if k in NON_TEMPLATE_FIELDS else _render_value(v, values))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_render_value(v, values) for v in value]
    return value


def render_step(step: Step, values: Mapping[str, str]) -> Step:
    """*step* with every placeholder in its values, locators and expectations filled.

    Raises:
        KeyError: a placeholder has no value (the workflow validator makes this a bug).
    """
    dumped = step.model_dump(mode="json")
    return _STEP.validate_python(_render_value(dumped, values))


def render_condition(condition: Condition, values: Mapping[str, str]) -> Condition:
    """*condition* with its placeholders filled.

    Raises:
        KeyError: a placeholder has no value here (a variable a branch not taken extracts).
    """
    return _CONDITION.validate_python(_render_value(condition.model_dump(mode="json"), values))


_SOURCE: TypeAdapter[ItemSource] = TypeAdapter(ItemSource)


def render_source(source: ItemSource, values: Mapping[str, str]) -> ItemSource:
    """What a loop goes over, its placeholders filled (raises :class:`KeyError` like
    :func:`render_condition`)."""
    return _SOURCE.validate_python(_render_value(source.model_dump(mode="json"), values))


def render_expectation(expectation: Expectation, values: Mapping[str, str]) -> Expectation:
    """*expectation* with its placeholders filled (one with no value stays as it is)."""
    dumped = expectation.model_dump(mode="json")
    return _EXPECTATION.validate_python(_render_value(dumped, _Missing(values)))


def domain_allowed(url: str, domains: tuple[str, ...]) -> bool:
    """Whether *url* stays within *domains* (a domain allows its subdomains).

    ``about:blank`` and ``data:`` pages are allowed; any other non-http(s) URL is not. A
    workflow with no domains allows nothing but those.
    """
    parts = urlsplit(url)
    if parts.scheme in ("about", "data", "blob"):
        return True
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    host = parts.hostname.lower()
    return any(host == d.lower() or host.endswith("." + d.lower()) for d in domains)


def _origin(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.netloc:
        return f"{parts.scheme}://{parts.netloc}"
    return None


def recorded_origin(workflow: Workflow) -> str | None:
    """The origin (``scheme://host:port``) of the workflow's first ``goto``, if any."""
    first = next((s.url for s in walk(workflow.steps) if isinstance(s, GotoStep)), None)
    return _origin(first) if first else None


def rebase(workflow: Workflow, base_url: str, origin: str | None = None) -> Workflow:
    """*workflow* moved from *origin* to *base_url*'s origin (a staging copy, another port).

    Every URL on *origin* (by default the origin of the workflow's first ``goto``), in steps and
    expectations, is rewritten, and *origin*'s host in the domains becomes the new host. Other
    origins are left alone.

    Raises:
        RebaseError: *base_url* is not an http(s) origin, or there is no origin to move.
    """
    new = _origin(base_url)
    if new is None:
        raise RebaseError(f"--base-url {base_url!r} is not an http(s) URL")
    old = origin or recorded_origin(workflow)
    if old is None:
        raise RebaseError(f"workflow {workflow.name!r} opens no http(s) URL to move to {new}")
    old_host = urlsplit(old).hostname or ""
    steps = [
        _STEP.validate_python(_replace_origin(s.model_dump(mode="json"), old, new))
        for s in workflow.steps
    ]
    success = tuple(
        _EXPECTATION.validate_python(_replace_origin(e.model_dump(mode="json"), old, new))
        for e in workflow.success
    )
    new_host = urlsplit(new).hostname or ""
    domains = tuple(dict.fromkeys(new_host if d == old_host else d for d in workflow.domains))
    if new_host not in domains:
        domains = (new_host, *domains)
    return workflow.model_copy(
        update={"steps": tuple(steps), "success": success, "domains": domains}
    )


def _replace_origin(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return new + value[len(old) :] if value.startswith(old) else value
    if isinstance(value, dict):
        return {
            k: (v if k in NON_TEMPLATE_FIELDS else _replace_origin(v, old, new))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_replace_origin(v, old, new) for v in value]
    return value


def check_base_url(base_url: str) -> None:
    """Raise :class:`RebaseError` unless *base_url* is an http(s) URL."""
    if _origin(base_url) is None:
        raise RebaseError(f"--base-url {base_url!r} is not an http(s) URL")


def fingerprint_for_run(
    target: Target, workflow: Workflow, values: Mapping[str, str]
) -> Fingerprint | None:
    """The target's fingerprint as the element should look in this run.

    A target whose locators hold ``{placeholders}`` (a link named after a parameter) was
    fingerprinted with the values of the recording, the parameters' defaults: each is replaced by
    this run's value. Where the recorded value is unknown, the name and text are left out (they
    would describe another element).
    """
    fp = target.fingerprint
    if fp is None:
        return None
    names = {n for loc in target.locators for t in loc.texts for n in placeholders(t)}
    if not names:
        return fp
    swaps: dict[str, str] = {}
    for name in names:
        param = workflow.parameter(name)
        recorded = param.default if param is not None else None
        if param is None or param.type is ParameterType.SECRET or recorded in (None, ""):
            return fp.model_copy(update={"name": None, "text": None})
        swaps[str(recorded)] = values.get(name, "")

    def swap(text: str | None) -> str | None:
        if text is None:
            return None
        for old, new in sorted(swaps.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(old, new)
        return text

    item = fp.item
    if item is not None:
        item = item.model_copy(update={"texts": tuple(swap(t) or "" for t in item.texts)})
    return fp.model_copy(
        update={
            "name": swap(fp.name),
            "text": swap(fp.text),
            "attributes": {k: swap(v) or "" for k, v in fp.attributes.items()},
            "nearby_text": tuple(swap(t) or "" for t in fp.nearby_text),
            "item": item,
        }
    )
