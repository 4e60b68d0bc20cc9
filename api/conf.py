"""Settings of the verification API, read at call time (not import time), so a changed setting
takes effect without re-importing the API.

Each is declared once, with its type, default and meaning, in core/config_registry.py (section
"Verification API"); settings.py builds it from there.
"""

from __future__ import annotations

from django.conf import settings

from core.config_registry import setting


def api_setting(name: str) -> int:
    if setting(name).type is not int:  # an unknown name raises KeyError here
        raise TypeError(f"{name} is not an integer setting")
    return int(getattr(settings, name))
