"""Real-protocol fakes of outside services (HTTP servers on 127.0.0.1) for the tests."""

__all__ = ["openai_server"]
