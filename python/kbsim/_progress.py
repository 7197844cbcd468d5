"""Progress of a long run or sweep (docs/python.md): a tqdm bar where tqdm is installed, a plain line otherwise;
shown only when someone is watching (a terminal, or a Jupyter kernel) and only once the run has taken a second."""

import sys
import time


def _interactive():
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _Display:
    """Called with the run's progress (a dict: sim_time_ns, events, points_done, points_total) about every 100 ms."""

    def __init__(self, what):
        self._what = what
        self._start = time.monotonic()
        self._bar = None
        self._plain = False
        self._shown = 0

    def __call__(self, p):
        if time.monotonic() - self._start < 1.0:
            return
        sweeping = p["points_total"] > 0
        text = "sim time {:,.1f} ns, {:,} events".format(p["sim_time_ns"], p["events"])
        if self._bar is None and not self._plain:
            try:
                from tqdm.auto import tqdm
                self._bar = tqdm(total=p["points_total"] if sweeping else None, desc=self._what,
                                 unit=" points" if sweeping else " beats", leave=False, file=sys.stderr)
            except ImportError:
                self._plain = True
        if self._bar is not None:
            if sweeping:
                self._bar.total = p["points_total"]
                self._bar.update(p["points_done"] - self._shown)
                self._shown = p["points_done"]
            else:
                self._bar.set_postfix_str(text, refresh=True)
            return
        line = "{}: {} of {} points".format(self._what, p["points_done"], p["points_total"]) if sweeping else \
            "{}: {}".format(self._what, text)
        sys.stderr.write("\r  " + line + "  ")
        sys.stderr.flush()
        self._shown = 1

    def close(self):
        if self._bar is not None:
            self._bar.close()
        elif self._plain and self._shown:
            sys.stderr.write("\r" + " " * 78 + "\r")
            sys.stderr.flush()


def display(what, progress):
    """A display for a run (``progress``: True, False, or None for 'when interactive'), or None for none."""
    if progress is None:
        progress = _interactive()
    return _Display(what) if progress else None
