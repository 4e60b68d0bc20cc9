"""Form helpers every app's views share: post/redirect/get for refused forms, and a typed
look-up of a form's ChoiceField.

A form posted the plain way (no htmx) that is refused must not leave the browser on the
POST-only address: reloading or pressing Enter there would ask for a page that does not exist.
The refusing view stashes what was typed (and any reasons found beyond the form's own
validation) in the session and redirects to the page that shows the form; that page rebuilds
the bound form, which validates again and shows the same errors. htmx posts keep answering
with the re-rendered partial (the address bar does not change for them).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponseRedirect, QueryDict

_KEY = "refused-form:"


def form_refused_redirect(request: HttpRequest, *, key: str, to: str, errors: list[str] | None = None) -> HttpResponseRedirect:
    """Keep the refused submission under `key` and send the browser to `to` (303)."""
    data = {name: values for name, values in request.POST.lists() if name != "csrfmiddlewaretoken"}
    request.session[_KEY + key] = {"data": data, "errors": list(errors or [])}
    return HttpResponseRedirect(to, status=303)


def form_refused_pop(request: HttpRequest, *, key: str) -> tuple[QueryDict | None, list[str]]:
    """The submission kept under `key` (once), as a QueryDict a form can be bound to, and the
    extra reasons; (None, []) when there is none."""
    kept: dict[str, Any] | None = request.session.pop(_KEY + key, None)
    if not kept:
        return None, []
    data = QueryDict(mutable=True)
    for name, values in kept.get("data", {}).items():
        data.setlist(name, [str(v) for v in values])
    return data, [str(e) for e in kept.get("errors", [])]


def choice_field(form: forms.BaseForm, name: str) -> forms.ChoiceField:
    """One of the form's ChoiceFields (`form.fields` is typed as holding any Field)."""
    field = form.fields[name]
    assert isinstance(field, forms.ChoiceField)
    return field
