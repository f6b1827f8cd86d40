"""Progress bars (tqdm) with an estimate of the time left, shown on a terminal only, and the
words of the lines that say what a command or a search did."""

import math
import sys

# A fit's progress is counted in thousandths, so that tqdm's rate gives the time left.
_STEPS = 1000


def progress_bar(total, description, verbose, unit="fit", file=None, bar_format=None):
    """A tqdm bar on standard error (or ``file``) when ``verbose`` and the stream is a
    terminal; otherwise a bar that shows nothing."""
    from tqdm import tqdm

    file = sys.stderr if file is None else file
    shown = bool(verbose) and getattr(file, "isatty", lambda: False)()
    return tqdm(total=total, desc=description, unit=unit, file=file, disable=not shown,
                leave=False, dynamic_ncols=True, bar_format=bar_format)


class FitProgress:
    """A ``callback(stage, iteration, objective)`` of `glocal.GLOCAL.fit` moving a bar through
    the fit, for an estimate of the time left.

    How far a loop is, is estimated from the relative decrease of the objective, which the
    loop runs until it falls below ``tol``: after a first decrease r_1, a decrease r_t is
    taken as ``log(r_1 / r_t) / log(r_1 / tol)`` of the way, or ``t / max_iter`` when that is
    further. The basic-model initialisation and the main loop are each half of the bar.
    """

    def __init__(self, bar, tol, init_max_iter, max_iter):
        self.bar = bar
        self.tol = tol
        self.caps = {"init": init_max_iter, "main": max(max_iter, 1)}
        self.stage = None
        self.done = 0.0

    def __call__(self, stage, iteration, value):
        if stage != self.stage:  # a new loop starts from its own first value
            self.stage, self.last, self.first_decrease = stage, value, None
            self.start = 0.0 if stage == "init" else 0.5
            self.advance(self.start)  # the main loop starts when the initialisation ended
            return
        decrease = (self.last - value) / max(abs(self.last), 1e-300)
        self.last = value
        fraction = iteration / self.caps[stage]
        if decrease > 0:
            if self.first_decrease is None:
                self.first_decrease = decrease
            elif self.tol > 0 and self.first_decrease > max(decrease, self.tol):
                fraction = max(fraction, math.log(self.first_decrease / max(decrease, self.tol))
                               / math.log(self.first_decrease / self.tol))
        self.advance(self.start + 0.5 * min(fraction, 1.0))

    def advance(self, done):
        """Move the bar to ``done`` (a fraction of the fit), never back."""
        if done > self.done:
            self.bar.update(int(_STEPS * done) - int(_STEPS * self.done))
            self.done = done

    def finish(self):
        self.advance(1.0)
        self.bar.close()


def fit_progress(model, description, verbose, file=None):
    """A `FitProgress` for a fit of the GLOCAL estimator ``model``, shown as `progress_bar`
    shows a bar."""
    bar = progress_bar(_STEPS, description, verbose, file=file,
                       bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]")
    return FitProgress(bar, model.tol, model.init_max_iter, model.max_iter)


def counted(n, noun):
    """``1 fold``, ``3 folds``: a count with its noun."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def settings_text(params):
    """``lam2=4, normalize_rows=True`` from a dict of values (or of lists of values)."""
    return ", ".join(f"{name}={value}" for name, value in sorted(params.items()))
