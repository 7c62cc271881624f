"""Finding the files Procedura ships that are not Python (``resources/``), installed or not."""

from __future__ import annotations

from pathlib import Path

from desktop_app.core.errors import ProceduraError

__all__ = ["ResourceMissingError", "resource_path", "resources_root"]

_PACKAGE = Path(__file__).resolve().parent
# An installed wheel carries the folder inside the package; a source checkout has it beside it.
_CANDIDATES = (_PACKAGE / "_resources", _PACKAGE.parent / "resources")


class ResourceMissingError(ProceduraError):
    """A file Procedura ships is not where it should be: the installation is incomplete."""


def resources_root() -> Path:
    """The ``resources`` folder: ``desktop_app/_resources`` in a wheel, else ``resources/``.

    Raises:
        ResourceMissingError: neither exists.
    """
    for candidate in _CANDIDATES:
        if candidate.is_dir():
            return candidate
    tried = " or ".join(str(c) for c in _CANDIDATES)
    raise ResourceMissingError(
        f"Procedura's resources folder is missing (looked for {tried}); "
        "reinstall Procedura, or run it from a complete source checkout"
    )


def resource_path(*parts: str) -> Path:
    """The path of a shipped file or folder, e.g. ``resource_path("demo_site", "static")``.

    Raises:
        ResourceMissingError: the resources folder, or this file in it, does not exist.
    """
    root = resources_root()
    path = root.joinpath(*parts)
    if not path.exists():
        raise ResourceMissingError(
            f"resource {'/'.join(parts)!r} is missing from {root}; "
            "reinstall Procedura, or run it from a complete source checkout"
        )
    return path
