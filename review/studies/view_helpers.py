"""What the study views share: the maintainer check (a styled 403 with the reason), loading a
study or item the user may see, and which page of each kind's tests to show."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404

from core.permissions import is_maintainer
from review.models import Study, StudyItem
from review.studies import selectors

STOP_POLLING = 286


def maintainer_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not is_maintainer(request.user):
            raise PermissionDenied("This page is for maintainers.")
        return view(request, *args, **kwargs)

    return wrapped


def _study(request: HttpRequest, pk: int) -> Study:
    study = get_object_or_404(Study, pk=pk)
    if not selectors.can_view_study(study, request.user):
        raise Http404("no such study")  # annotators do not learn which studies exist
    return study


def _item(study: Study, item_pk: int) -> StudyItem:
    return get_object_or_404(StudyItem.objects.select_related("problem", "validator", "suite", "study"),
                             pk=item_pk, study=study)


def _kind_pages(request: HttpRequest) -> dict[str, str]:
    """?page_hacking=3 and the like: which page of each kind's tests to show."""
    return {key[5:]: request.GET[key] for key in request.GET if key.startswith("page_")}
