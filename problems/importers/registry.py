"""Every dataset format `import_dataset` knows, by name.

Apart from formats.py, which each format imports for its helpers, so that nothing imports in
a circle.
"""

from __future__ import annotations

from problems.importers import codecontests, hardtests, klear, native_format, taco
from problems.importers.formats import DatasetFormat


def formats() -> dict[str, DatasetFormat]:
    found = [native_format.FORMAT, hardtests.FORMAT, codecontests.FORMAT, taco.FORMAT, klear.FORMAT]
    return {f.name: f for f in found}


# Problem packages (folders, not row files): imported by problems/packages/importer.py.
PACKAGE_FORMATS = {"icpc": "ICPC/Kattis problem packages (legacy, 2023-07, 2025-09): folders or .zip",
                   "polygon": "Polygon packages (problem.xml): folders or .zip"}
