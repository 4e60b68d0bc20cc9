"""The curation judge stand-in (tests/curation/conftest.py), for the demo's curation test."""

from __future__ import annotations

from tests.curation.conftest import fake_judge as fake_judge
