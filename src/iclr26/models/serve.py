"""``python -m iclr26.models.serve [MODEL] [--port N]``: serve a model through OpenAI-compatible routes."""

from ._server import main

if __name__ == "__main__":
    main()
