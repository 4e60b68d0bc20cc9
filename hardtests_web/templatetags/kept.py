"""`{% kept_form as kept %}`: the fields a refused POST carried (hardtests_web.views.kept_form),
for the error pages a form can land on (403, 404, 405), so what was typed is never lost."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django import template

from hardtests_web.views import KeptForm, kept_form

register = template.Library()


@register.simple_tag(takes_context=True)
def kept_form_of(context: dict[str, Any], resend: bool = True) -> KeptForm | None:
    """resend=False where sending the same form again would be refused the same way (a 403 for
    a missing role, a 404 for a thing that is gone): the fields are shown to copy."""
    request = context.get("request")
    kept = kept_form(request) if request is not None else None
    return replace(kept, resend=False) if kept is not None and not resend else kept
