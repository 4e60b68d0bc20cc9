"""Human validation studies."""

__all__: list[str] = []
