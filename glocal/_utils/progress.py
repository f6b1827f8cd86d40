"""Progress bars (tqdm), shown on a terminal only, that count work of known cost (fits,
rounds) and show the time left only once they can measure it; and the words of the lines
that say what a command or a search did."""

import math
import sys
import time

# The loops of a fit, as its bar names them.
_LOOPS = {"init": "initialisation", "main": "Algorithm 1"}


def progress_bar(total, description, verbose, unit="fit", file=None, bar_format=None):
    """A tqdm bar on standard error (or ``file``) when ``verbose`` and the stream is a
    terminal; otherwise a bar that shows nothing."""
    from tqdm import tqdm

    file = sys.stderr if file is None else file
    shown = bool(verbose) and getattr(file, "isatty", lambda: False)()
    return tqdm(total=total, desc=description, unit=unit, file=file, disable=not shown,
                leave=False, dynamic_ncols=True, bar_format=bar_format)


class RoundsClock:
    """The time left of ``n_rounds`` rounds of at most the same ``n_steps`` steps, such as a
    search's folds, each fitting the same settings in the same order (a search that races
    drops steps from the later rounds: `drop`).

    The steps of a round differ in cost (a fit from scratch heads each path, warm-started
    fits follow it), but a step costs about the same in every round. So nothing is guessed
    until the first round is done (a rate over its first steps is off by the ratio of a
    cold fit to a warm one); then the time left is the first round's times of the steps to
    come, scaled by how long the later rounds' steps took against the first round's times
    of the same steps. ``clock`` gives the time in seconds.
    """

    def __init__(self, n_rounds, n_steps, clock=time.perf_counter):
        self.total = n_rounds * n_steps
        self.n_steps = n_steps
        self.clock = clock
        self.first = []  # the first round's step times
        self.to_come = [n_rounds - 1] * n_steps  # each step's count in later rounds
        self.taken = self.expected = 0.0  # the later steps' times, and the first's for them
        self.done = 0
        self.last = clock()

    def step_done(self, step=None):
        """Count one more step, done now: step number ``step`` of its round (None: the one
        after the last, rounds being whole)."""
        now = self.clock()
        step = self.done % self.n_steps if step is None else step
        if self.done < self.n_steps:
            self.first.append(now - self.last)
        else:
            self.taken += now - self.last
            self.expected += self.first[step]
            self.to_come[step] -= 1
        self.last = now
        self.done += 1

    def drop(self, steps, n_rounds):
        """Steps ``steps`` are no longer made in ``n_rounds`` of the rounds to come."""
        for step in steps:
            self.to_come[step] -= n_rounds
        self.total -= len(steps) * n_rounds

    def time_left(self):
        """Seconds left, or None before the first round is done."""
        if self.done < self.n_steps:
            return None
        left = float(sum(seconds * count for seconds, count in zip(self.first, self.to_come)))
        return left * (self.taken / self.expected if self.expected > 0 else 1.0)


class SearchProgress:
    """A bar over the fits of a search (``n_folds`` folds of at most ``n_per_fold`` fits)
    that shows the time left of `RoundsClock` once it knows it, else the time elapsed
    only."""

    def __init__(self, n_folds, n_per_fold, verbose, clock=time.perf_counter, file=None):
        self.bar = progress_bar(n_folds * n_per_fold, "GLOCALCV search", verbose, file=file,
                                bar_format="{desc}: {percentage:3.0f}%|{bar}| "
                                           "{n_fmt}/{total_fmt} fits [{elapsed}{postfix}]")
        self.clock = RoundsClock(n_folds, n_per_fold, clock)

    def fit_done(self, step=None):
        """One more fit of the folds in the order they are walked, one at a time: step
        ``step`` of its fold (None: the one after the last, every fold making every fit)."""
        self.clock.step_done(step)
        left = self.clock.time_left()
        if left is not None:
            # Whole seconds rounded up: a bar with fits to go never shows 00:00 left.
            self.bar.set_postfix_str(f"{self.bar.format_interval(math.ceil(left))} left",
                                     refresh=False)
        self.bar.update(1)

    def fold_done(self, n_fits):
        """A fold's ``n_fits`` fits at once (folds fitted in parallel: no time left)."""
        self.bar.update(n_fits)

    def drop(self, steps, n_folds):
        """The fits at positions ``steps`` of a fold will not be made in ``n_folds`` of the
        folds to come: the bar's total shrinks by as many."""
        self.clock.drop(steps, n_folds)
        self.bar.total -= len(steps) * n_folds
        self.bar.refresh()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.bar.close()


class FitProgress:
    """A ``callback(stage, iteration, objective)`` of `glocal.GLOCAL.fit` that shows the
    round of each loop and the time elapsed, without a time left: a loop runs until its
    objective's decrease falls below ``tol``, which is known only when it happens (a guess
    from the decrease so far was many times too short, then too long: measured in the
    documentation)."""

    def __init__(self, bar, init_max_iter, max_iter):
        self.bar = bar
        self.caps = {"init": init_max_iter, "main": max_iter}

    def __call__(self, stage, iteration, value):
        self.bar.set_postfix_str(f"{_LOOPS[stage]} round {iteration} of at most "
                                 f"{self.caps[stage]}", refresh=False)
        self.bar.update(1)

    def finish(self):
        self.bar.close()


def fit_progress(model, description, verbose, file=None):
    """A `FitProgress` for a fit of the GLOCAL estimator ``model``, shown as `progress_bar`
    shows a bar."""
    bar = progress_bar(None, description, verbose, unit="round", file=file,
                       bar_format="{desc} [{elapsed}{postfix}]")
    return FitProgress(bar, model.init_max_iter, model.max_iter)


def counted(n, noun):
    """``1 fold``, ``3 folds``: a count with its noun."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def settings_text(params):
    """``lam2=4, normalize_rows=True`` from a dict of values (or of lists of values)."""
    return ", ".join(f"{name}={value}" for name, value in sorted(params.items()))


def iterations_text(model):
    """``10 initialisation rounds, 3 outer iterations`` of a fitted GLOCAL."""
    return (f"{counted(model.n_init_iter_, 'initialisation round')}, "
            f"{counted(model.n_iter_, 'outer iteration')}")
