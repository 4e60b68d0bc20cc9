"""Pages of apps above `problems` that problem pages link to (regenerate, a run, the Runs tab).

A problems template that named another app's URL (`{% url 'generation:regenerate' ... %}`)
could not render without that app. Instead the app that owns a page registers how to build
its address in its AppConfig.ready(), and templates ask for it by name with the `page_link`
tag, which gives "" when no app registered the name, so each app's pages render alone.
"""

from __future__ import annotations

from collections.abc import Callable

_registry: dict[str, Callable[..., str]] = {}


def page_link_register(name: str, build: Callable[..., str]) -> None:
    """Idempotent: ready() may run more than once in tests."""
    _registry[name] = build


def page_link(name: str, *args: object) -> str:
    build = _registry.get(name)
    return build(*args) if build is not None else ""
