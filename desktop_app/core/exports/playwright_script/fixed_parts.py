"""The fixed parts of every script: Python code kept in ``templates/*.py.tmpl`` beside this
module, read as it is written there (the script uses only the parts it needs)."""

from __future__ import annotations

from importlib import resources
from typing import Final

from desktop_app.core.models.workflow import ParameterType

# What the package's other modules use; none of it is public API.
__all__ = [
    "_ANSWER_DIALOG",
    "_BLOCK_HELPERS",
    "_CANNOT_RUN",
    "_CONVERTERS",
    "_EXECUTE",
    "_EXPECT_ELEMENT",
    "_EXPECT_TEXT",
    "_EXPECT_TITLE",
    "_EXPECT_URL",
    "_LIST_ITEMS",
    "_MAIN",
    "_MAIN_WITH_SECRETS",
    "_MATCHED",
    "_READ_SECRET",
    "_RUNNER_CONVERTERS",
    "_SECONDS",
    "_STEP_HELPERS",
    "_URL_MATCHES",
]


def _template(name: str) -> str:
    """The code in ``templates/<name>.py.tmpl``, exactly as it is written there."""
    folder = resources.files(__package__).joinpath("templates")
    return folder.joinpath(f"{name}.py.tmpl").read_text(encoding="utf-8")


_STEP_HELPERS: Final = _template("step_helpers")
_EXPECT_URL: Final = _template("expect_url")
_EXPECT_TITLE: Final = _template("expect_title")
_EXPECT_TEXT: Final = _template("expect_text")
_ANSWER_DIALOG: Final = _template("answer_next_dialog")
_EXPECT_ELEMENT: Final = _template("expect_element")
_MATCHED: Final = _template("matched")
_CANNOT_RUN: Final = _template("cannot_run")
_URL_MATCHES: Final = _template("url_matches")

#: What blocks need, by the helper's name (each template defines that function, or class).
_BLOCK_HELPERS: Final = {
    name: _template(name)
    for name in (
        "announce",
        "url_holds",
        "title_holds",
        "text_holds",
        "element_holds",
        "compare",
        "lines",
        "at_most",
        "page_items",
        "csv_rows",
    )
}
_LIST_ITEMS: Final = _template("list_items")

_CONVERTERS: Final[dict[ParameterType, str]] = {
    ParameterType.NUMBER: _template("number"),
    ParameterType.DATE: _template("iso_date"),
    ParameterType.EMAIL: _template("email"),
    ParameterType.CHOICE: _template("one_of"),
    ParameterType.BOOL: _template("true_or_false"),
}

_RUNNER_CONVERTERS: Final = _template("http_origin")
_SECONDS: Final = _template("seconds")
_READ_SECRET: Final = _template("read_secret")
_EXECUTE: Final = _template("execute")
_MAIN: Final = _template("main")
_MAIN_WITH_SECRETS: Final = _template("main_with_secrets")
