"""Exporters: native (lossless JSON lines), hardtests (parquet pair), training, verl (two flavours), icpc packages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from problems.exporters.hardtests import hardtests_export
from problems.exporters.icpc import icpc_export
from problems.exporters.native import native_export
from problems.exporters.training import training_export
from problems.exporters.verl import verl_export, verl_sandbox_fusion_export

EXPORTERS: dict[str, Callable[..., dict[str, Any]]] = {
    "native": native_export,
    "hardtests": hardtests_export,
    "training": training_export,
    "verl": verl_export,
    "verl-sandbox-fusion": verl_sandbox_fusion_export,
    "icpc": icpc_export,
}
