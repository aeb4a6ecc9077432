"""The checker runs a learner's function with a time limit (:mod:`course_attention.exercises`).

Introduced with the exercises of chapter 1. On the main thread a SIGALRM timer interrupts an
endless loop; elsewhere (or without SIGALRM, as on Windows) a worker thread is waited for at most
the limit, and the function may go on in the background (:attr:`_Run.still_running`).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__: list[str] = []  # the checker's own machinery: exercises.core imports it by name


class _TimedOut(BaseException):
    """Raised by the alarm inside a learner's function (a BaseException: `except Exception` in
    the learner's code cannot swallow it)."""


@dataclass
class _Run:
    """What one call of a function gave: a value, an error, or no answer in time."""

    value: Any = None
    error: BaseException | None = None
    timed_out: bool = False
    still_running: bool = False  # the thread fallback could not stop it


def _call(fn: Callable[..., Any], args: tuple) -> _Run:
    with np.errstate(all="ignore"):
        return _Run(value=fn(*args))


def _call_with_alarm(fn: Callable[..., Any], args: tuple, limit: float) -> _Run:
    """On the main thread: SIGALRM interrupts the function; any earlier timer is put back."""

    def on_alarm(signum: int, frame: Any) -> None:
        raise _TimedOut

    old_handler = signal.signal(signal.SIGALRM, on_alarm)
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, limit)
    start = time.monotonic()
    try:
        try:
            return _call(fn, args)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)  # nothing fires after we return
    except _TimedOut:
        return _Run(timed_out=True)
    except KeyboardInterrupt:  # the learner pressed stop: let it stop the cell
        raise
    except BaseException as error:  # noqa: BLE001 - the learner's code may raise anything
        return _Run(error=error)
    finally:
        signal.signal(signal.SIGALRM, old_handler)
        if old_delay > 0:  # someone else's timer (e.g. pytest-timeout): give back what is left
            left = max(old_delay - (time.monotonic() - start), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, left, old_interval)


def _call_in_thread(fn: Callable[..., Any], args: tuple, limit: float) -> _Run:
    """Off the main thread (or without SIGALRM): wait at most ``limit`` s for a worker thread."""
    outcome: list[_Run] = []

    def work() -> None:
        try:
            outcome.append(_call(fn, args))
        except BaseException as error:  # noqa: BLE001 - handed back to the caller
            outcome.append(_Run(error=error))

    worker = threading.Thread(target=work, name="course-attention-check", daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive() or not outcome:
        return _Run(timed_out=True, still_running=True)
    return outcome[0]


def _run_limited(fn: Callable[..., Any], args: tuple, limit: float) -> _Run:
    """Call ``fn(*args)``; stop waiting after ``limit`` seconds."""
    on_main = threading.current_thread() is threading.main_thread()
    if on_main and hasattr(signal, "setitimer") and hasattr(signal, "SIGALRM"):
        try:
            return _call_with_alarm(fn, args, limit)
        except ValueError:  # signals unavailable here (e.g. a sub-interpreter): use a thread
            pass
    return _call_in_thread(fn, args, limit)
