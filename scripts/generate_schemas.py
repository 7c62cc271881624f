"""Regenerate docs/schema/*.schema.json from the models: python scripts/generate_schemas.py."""

from __future__ import annotations

import json
from pathlib import Path

from desktop_app.core.schema import DOCUMENTS, json_schema

OUT = Path(__file__).resolve().parents[1] / "docs" / "schema"


def render(document: str) -> str:
    """The file text of one schema."""
    return json.dumps(json_schema(document), indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for document in DOCUMENTS:
        path = OUT / f"{document}.schema.json"
        path.write_text(render(document), encoding="utf-8")
        print(f"wrote {path.relative_to(OUT.parents[1])}")


if __name__ == "__main__":
    main()
