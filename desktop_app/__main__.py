"""Entry point for ``python -m desktop_app``."""

from desktop_app.cli import main

if __name__ == "__main__":
    main()
