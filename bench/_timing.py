"""The one timing helper of the bench scripts (run as `python bench/<script>.py`, so this folder is on sys.path)."""

import time


def best_time(fn, repeat, clock=time.process_time):
    """(best of ``repeat`` timings of ``fn()`` on ``clock``, its last result).  The default clock is this process's
    CPU time: the machine is shared, and CPU time excludes the time the process is descheduled."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = clock()
        out = fn()
        best = min(best, clock() - t0)
    return best, out
