"""Machine evaluation of suites."""

__all__: list[str] = []
