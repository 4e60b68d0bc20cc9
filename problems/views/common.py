"""What the problem pages share (defined where other apps can reach them too)."""

from core.htmx import STOP_POLLING, htmx_target
from core.permissions import require_maintainer
from problems.tabs import render_tab

__all__ = ["STOP_POLLING", "htmx_target", "render_tab", "require_maintainer"]
