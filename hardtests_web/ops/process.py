"""Ending a long-running process quickly once its work is done.

A Django process's interpreter teardown (freeing every module and object it imported) took
2-3 s of CPU at a load of 30 on two cores, in each of gunicorn's workers, each RQ worker, the
janitor and `serve` itself; one after another they made an idle node take 12-15 s to stop. A
process whose last duty is done (its registration removed, its answers sent, its logs
flushed) has nothing left that teardown would do for it.
"""

from __future__ import annotations

import logging
import os
import sys


def exit_fast(code: int) -> None:
    """Flush the logs and the standard streams, then end the process with `code` at once."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def exit_fast_enabled() -> bool:
    """Only in a process this project started for one command (never in a test that calls the
    code in its own process): `manage.py rqworker|janitor|serve`."""
    return sys.argv[1:2] in (["rqworker"], ["janitor"], ["serve"])
