"""The C steps of redundancy.py (near_duplicates.c), compiled on first use.

The C compiler is one the sandbox needs anyway (scripts/bootstrap.sh installs g++). The
shared library is cached in this package's __pycache__ under a name that hashes the
source, the compiler ($CC, else cc or gcc), the flags and the platform; where that folder
is not writable it is built in a fresh private temporary folder instead. Without a
compiler `kernels()` returns None and redundancy.py does without them (same results,
slower).
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import shutil
import subprocess
import sysconfig
import tempfile
import threading
from pathlib import Path

SOURCE = Path(__file__).with_name("near_duplicates.c")
FLAGS = ("-O2", "-std=c99", "-shared", "-fPIC")

log = logging.getLogger(__name__)
_lock = threading.Lock()
_cache: dict[str, Kernels | None] = {}


class Kernels:
    """The two functions of near_duplicates.c with their ctypes signatures."""

    def __init__(self, library: ctypes.CDLL):
        i64, ptr = ctypes.c_int64, ctypes.c_void_p
        self.qgram_chain_bound = library.qgram_chain_bound
        self.qgram_chain_bound.restype = i64
        one_input: list[type[ctypes.c_void_p] | type[ctypes.c_int64]] = [ptr, ptr, ptr, i64, i64]
        self.qgram_chain_bound.argtypes = one_input * 2 + [i64] * 4
        self.lcs_at_least = library.lcs_at_least
        self.lcs_at_least.restype = i64
        self.lcs_at_least.argtypes = [ctypes.c_char_p, i64, ctypes.c_char_p, i64, i64]


def kernels() -> Kernels | None:
    """The compiled kernels, or None when they cannot be built."""
    with _lock:
        if "kernels" not in _cache:
            _cache["kernels"] = _build()
        return _cache["kernels"]


def _build() -> Kernels | None:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        log.warning("no C compiler: near-duplicates are computed without the C steps (slower)")
        return None
    source = SOURCE.read_bytes()
    tag = hashlib.sha256(
        b"\0".join([source, compiler.encode(), sysconfig.get_platform().encode(), " ".join(FLAGS).encode()])
    ).hexdigest()[:16]
    for folder in (SOURCE.parent / "__pycache__", None):
        try:
            where = folder if folder is not None else Path(tempfile.mkdtemp(prefix="hardtests-native-"))
            library = where / f"near_duplicates-{tag}.so"
            if not library.exists():
                where.mkdir(exist_ok=True)
                partial = where / f".{library.name}.{os.getpid()}.{threading.get_ident()}"
                subprocess.run(
                    [compiler, *FLAGS, "-o", str(partial), str(SOURCE)],
                    check=True,
                    capture_output=True,
                    timeout=120,
                )
                os.replace(partial, library)  # atomic: concurrent builders agree
            return Kernels(ctypes.CDLL(str(library)))
        except (OSError, AttributeError, subprocess.SubprocessError) as error:
            log.warning("building %s in %s failed: %s", SOURCE.name, folder or "a temporary folder", error)
    return None
