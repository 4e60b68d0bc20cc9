"""Content-Security-Policy hashes for the inline scripts of third-party staff pages.

Our pages have no inline script. django-rq's dashboard (`/rq/`, staff only) has one, the same
in each of its job-list templates; rather than allowing inline scripts, the policy allows
exactly that script by its SHA-256, computed from the installed package so an upgrade that
changes it keeps working (or, if it stops being inline, allows nothing extra).
"""

from __future__ import annotations

import base64
import hashlib
import re
from importlib.util import find_spec
from pathlib import Path

_INLINE = re.compile(r"<script(?:\s+type=\"text/javascript\")?>(.*?)</script>", re.S)


def inline_script_hashes(package: str = "django_rq") -> list[str]:
    spec = find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return []
    bodies: set[str] = set()
    for root in spec.submodule_search_locations:
        for template in Path(root, "templates").rglob("*.html"):
            for body in _INLINE.findall(template.read_text(encoding="utf-8")):
                if "{%" not in body and "{{" not in body:  # only scripts the template prints as written
                    bodies.add(body)
    return sorted(f"'sha256-{base64.b64encode(hashlib.sha256(b.encode()).digest()).decode()}'" for b in bodies)
