"""Authentication for clients that cannot send an Authorization header.

SandboxFusion's client, verl's built-in ``sandbox_fusion`` reward and OpenRLHF's remote
reward post JSON to a bare URL with no way to add a header. Two ways in, both off by
default: an API token as a path segment (``.../t/<token>/run_code``; the URL is then a
secret, so keep it out of shared logs), or a network allow-list of CIDRs whose requests
need no token at all (for a training cluster on a private network). A bearer header is
always accepted too. Every caller gets the same body-size check and rate limit as the
rest of the API; an allow-listed caller is limited per client address.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest

from api.auth import BearerGate, _check_body_size
from api.conf import api_setting
from api.models import ApiToken
from api.throttle import rate_limit_check

# Batches started by allow-listed callers belong to no user: nobody can read them back.
NETWORK_OWNER = 0
_PATH_TOKEN = re.compile(r"/t/([^/]+)/[^/]+/?$")


@dataclass(frozen=True)
class NetworkCaller:
    """An allow-listed caller without a token; user_id is what batches are owned by."""

    address: str
    user_id: int = NETWORK_OWNER


def trusted_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(item, strict=False) for item in settings.HARDTESTS_API_TRUSTED_NETWORKS]


def address_trusted(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in trusted_networks())


class HeaderlessRequest(HttpRequest):
    """The request an operation behind HeaderlessAuth receives (see TokenRequest)."""

    auth: ApiToken | NetworkCaller


class HeaderlessAuth(BearerGate):
    """Bearer header, else a token in the path (when enabled), else a trusted network."""

    def __call__(self, request: HttpRequest) -> ApiToken | NetworkCaller | None:
        found = self.bearer(request)
        if found is not None:
            return found
        if settings.HARDTESTS_API_URL_TOKENS:
            match = _PATH_TOKEN.search(request.path)
            if match:
                return self.authenticate(request, match[1])
        address = request.META.get("REMOTE_ADDR", "")
        if address_trusted(address):
            _check_body_size(request)
            rate_limit_check(f"net:{address}", api_setting("HARDTESTS_API_RATE_LIMIT"))
            return NetworkCaller(address)
        return None
