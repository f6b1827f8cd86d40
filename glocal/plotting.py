"""Figures of the GLOCAL paper from fitted estimators or result records (matplotlib).

* `plot_correlations`: the model's global and local correlations of its label scores (the
  paper's Figure 3), beside the training labels' own (`label_correlations`) with their
  agreement;
* `plot_convergence`: objective per outer iteration (Figure 4);
* `plot_sensitivity` with `sensitivity`: the four measures against a hyperparameter
  (Figures 5-9);
* `plot_measure_vs_observed`: measures against the observed fraction rho;
* `save_figure`: atomic saving that refuses to overwrite unless asked to.

matplotlib is imported only inside these functions (``import glocal`` never loads it), and
every figure is a `matplotlib.figure.Figure` made without pyplot: no backend or window is
involved and nothing stays registered in pyplot after the figure is dropped. A notebook shows
a returned figure when it is the value of a cell.
"""

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ._utils.io import atomic_output
from .estimator import GLOCAL
from .metrics import GREATER_IS_BETTER, PAPER_NAMES, evaluate

__all__ = [
    "plot_convergence",
    "plot_correlations",
    "label_correlations",
    "plot_measure_vs_observed",
    "plot_sensitivity",
    "save_figure",
    "sensitivity",
]

# The paper's symbols of GLOCAL's hyperparameters, and its short names g and k.
_SYMBOLS = {"n_groups": "$g$", "n_latent": "$k$", "lam": r"$\lambda$", "lam2": r"$\lambda_2$",
            "lam3": r"$\lambda_3$", "lam4": r"$\lambda_4$"}
_ALIASES = {"g": "n_groups", "k": "n_latent"}
_SHORT_NAMES = {**{name: short for short, name in PAPER_NAMES.items()}, "label_auc": "label AUC"}
# Prefixes of the measure columns written by `glocal.reproduce`.
_PARTS = {"prediction_": "test labels", "recovery_": "missing training labels"}
# Up to this many labels the heatmaps carry label names, and up to this many their values.
_MAX_NAMED_LABELS = 25
_MAX_ANNOTATED_LABELS = 8


def save_figure(fig, path, *, overwrite=False, dpi=None):
    """Save a figure atomically: readers see no file or the complete one, never a part.

    The figure is written to a temporary file in the same directory, which then replaces
    ``path`` (`os.replace` is atomic within one file system).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : path-like
        Output file; its extension gives the format (PNG when it has none).
    overwrite : bool, default=False
        Replace an existing file; otherwise an existing ``path`` raises FileExistsError.
    dpi : float, optional
        Resolution; by default the figure's own, so the image is ``figsize * fig.dpi`` pixels.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    path = Path(path)
    file_format = path.suffix[1:].lower() or "png"
    with atomic_output(path, overwrite=overwrite, binary=True) as file:
        # A file object, not a name: savefig would append the format to a name without it.
        fig.savefig(file, format=file_format, dpi=dpi or "figure")
    return path


def _new_figure(width, height):
    try:
        from matplotlib.figure import Figure
    except ModuleNotFoundError as exc:  # an optional dependency: say how to install it
        raise ModuleNotFoundError('figures need matplotlib: pip install "glocal[plot]"',
                                  name=exc.name) from None

    return Figure(figsize=(width, height), layout="constrained")


def _finish(fig, path, overwrite):
    if path is not None:
        save_figure(fig, path, overwrite=overwrite)
    return fig


def label_correlations(Y, groups=None, *, directed=False):
    """The labels' own correlations: Pearson's over the observed entries, or for directed
    correlations the empirical implication P(label j relevant | label i relevant).

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_labels)
        1 relevant, 0 not, NaN missing. Each pair of labels is read on the rows where both
        are observed.
    groups : array-like of shape (n_samples,), optional
        A group id per row (e.g. a fitted model's ``groups_``): also every group's matrix.
    directed : bool, default=False
        Entry (i, j) is the fraction of the rows where label i is relevant (and j observed)
        where label j is relevant, instead of the Pearson correlation.

    Returns
    -------
    global_correlation : ndarray of shape (n_labels, n_labels)
        Over all rows, 1 on the diagonal; NaN where undefined (a label constant, or without
        a relevant row, on the rows read).
    local_correlations : ndarray of shape (n_groups, n_labels, n_labels)
        The same within every group (omitted, shape (0, l, l), without ``groups``).
    """
    Y = np.asarray(Y, dtype=float)
    if Y.ndim != 2:
        raise ValueError(f"Y must be 2-D (n_samples, n_labels), got shape {Y.shape}")
    parts = [Y]
    if groups is not None:
        groups = np.asarray(groups)
        if groups.shape != (Y.shape[0],):
            raise ValueError(f"groups has shape {groups.shape}; expected one group per row "
                             f"of Y, ({Y.shape[0]},)")
        parts += [Y[groups == m] for m in range(int(groups.max()) + 1)]
    matrices = np.stack([_pairwise(part, directed) for part in parts])
    return matrices[0], matrices[1:]


def _pairwise(Y, directed):
    """`label_correlations` of one set of rows."""
    observed = ~np.isnan(Y)
    values = np.where(observed, Y, 0.0)
    both = observed.T.astype(float) @ observed  # rows where i and j are observed
    with np.errstate(invalid="ignore", divide="ignore"):
        if directed:
            out = (values.T @ values) / (values.T @ observed)  # P(j | i), rows where both
        else:
            sums = values.T @ observed  # sum of label i over the rows where j is observed
            squares = (values ** 2).T @ observed
            cross = values.T @ values
            spread = np.maximum(both * squares - sums ** 2, 0.0)  # n^2 var of i, where j
            out = (both * cross - sums * sums.T) / np.sqrt(spread * spread.T)
    np.fill_diagonal(out, np.where(np.isnan(np.diag(out)), np.nan, 1.0))
    return out


def plot_correlations(model, label_names=None, *, labels=None, path=None, overwrite=False):
    """Heatmaps of a model's global and local label correlations (the paper's Figure 3),
    beside the training labels' own when given them, with how far the two agree.

    A model's correlations describe how its scores of two labels go together, not how the
    labels do (see `glocal.GLOCAL`'s ``local_correlations_``), and the figure is titled so.
    Given ``labels``, every panel of the labels' correlations also prints their agreement
    with the model's panel above it: Spearman's rank correlation over the label pairs, and
    the fraction of the pairs on which the two have the same sign.

    Parameters
    ----------
    model : fitted GLOCAL, GLObal, loCAL or GLOCALCV, or tuple (global_correlation, \
            local_correlations)
        An estimator with ``global_correlation_`` (l x l) and ``local_correlations_``
        (g x l x l), a refitted `glocal.GLOCALCV` (its ``best_estimator_``), or those two
        arrays, e.g. the planted correlations of `glocal.datasets.make_glocal_data`. A model
        fitted with ``correlation="asymmetric"`` has directed matrices, entry (i, j) the
        weight of "label i implies label j" (rows sum to one), drawn on [0, 1].
    label_names : sequence of str, optional
        Names of the l labels (e.g. a dataset's ``label_names``); 1, 2, ... by default.
        Names are shown for up to 25 labels, values in the cells for up to 8.
    labels : array-like of shape (n_samples, n_labels), optional
        The labels the model was fitted on (1, 0, NaN missing): a second row of panels
        shows their own correlations, globally and within the model's groups
        (`label_correlations`: Pearson's over the observed entries, or P(j relevant | i
        relevant) beside directed matrices; undefined entries grey), with their agreement
        (for directed matrices, whose entries are all positive, Spearman's only).
    path : path-like, optional
        Also save the figure there (see `save_figure`).
    overwrite : bool, default=False
        Replace an existing ``path``.

    Returns
    -------
    matplotlib.figure.Figure
        One panel for the global matrix, then one per group (none for a single group), on
        the diverging scale [-1, 1]
        (red positive, blue negative; directed matrices on [0, 1]) with a shared colorbar;
        with ``labels``, the labels' matrices in the panels below. Titled "label
        correlations" when given arrays, "correlations of the model's label scores" when
        given a model.
    """
    directed = False
    if isinstance(model, tuple):
        global_corr, local_corrs = (np.asarray(a, dtype=float) for a in model)
        sizes = groups = None
        if labels is not None:
            raise ValueError("labels needs a fitted model (its groups), not arrays")
    else:
        if hasattr(model, "best_estimator_") or hasattr(model, "param_grid"):
            if not hasattr(model, "best_estimator_"):
                raise ValueError("plot_correlations needs a fitted GLOCALCV with refit=True "
                                 "(its best_estimator_)")
            model = model.best_estimator_
        global_corr, local_corrs = model.global_correlation_, model.local_correlations_
        groups = model.groups_
        sizes = np.bincount(groups, minlength=len(local_corrs))
        directed = getattr(model, "correlation", "laplacian") == "asymmetric"
    n_labels = global_corr.shape[0]
    if global_corr.shape != (n_labels, n_labels) or local_corrs.shape[1:] != global_corr.shape:
        raise ValueError(f"expected an l x l global and g x l x l local correlations, got "
                         f"shapes {global_corr.shape} and {local_corrs.shape}")
    if label_names is None:
        label_names = [str(i + 1) for i in range(n_labels)]
    elif len(label_names) != n_labels:
        raise ValueError(f"{len(label_names)} label names for {n_labels} labels")
    # One group: its matrix is the global one, drawn once.
    shown = [] if len(local_corrs) == 1 else list(local_corrs)
    titles = ["global"] + [f"group {m + 1}" + ("" if sizes is None else f" ($n_m$={sizes[m]})")
                           for m in range(len(shown))]
    learned = [global_corr, *shown]
    sets = [("", learned, titles)]
    if labels is not None:
        labels = np.asarray(labels, dtype=float)
        if labels.shape != (len(groups), n_labels):
            raise ValueError(f"labels has shape {labels.shape}; expected the model's "
                             f"training labels, ({len(groups)}, {n_labels})")
        empirical, local_empirical = label_correlations(labels, groups, directed=directed)
        own = [empirical, *(local_empirical if shown else [])]
        sets = [("model: ", learned, titles),
                ("labels: ", own, [f"{title}\n{_agreement_text(ours, theirs, directed)}"
                                   for title, ours, theirs in zip(titles, learned, own)])]
    n_panels = len(titles)
    n_cols = min(n_panels, 5)
    rows_per_set = math.ceil(n_panels / n_cols)
    n_rows = rows_per_set * len(sets)
    named = n_labels <= _MAX_NAMED_LABELS
    panel = float(np.clip(0.16 * n_labels, 2.6, 4.0))  # inches per matrix
    # Room for the slanted names under every row of panels (about 0.06 inch per character).
    names_height = 0.06 * max(map(len, label_names)) if named else 0.0
    fig = _new_figure(panel * n_cols + 1.0, (panel + names_height) * n_rows + 0.6)
    axes = fig.subplots(n_rows, n_cols, squeeze=False)
    scale = dict(cmap="Reds", vmin=0.0, vmax=1.0) if directed else dict(
        cmap="RdBu_r", vmin=-1.0, vmax=1.0)
    for s, (prefix, matrices, set_titles) in enumerate(sets):
        block = list(axes[s * rows_per_set:(s + 1) * rows_per_set].flat)
        for i, (ax, matrix, title) in enumerate(zip(block, matrices, set_titles)):
            image = ax.imshow(np.ma.masked_invalid(matrix), **scale)
            ax.set_facecolor("0.85")  # undefined entries
            ax.set_title(prefix + title, fontsize=9)
            ax.tick_params(labelsize=10 if n_labels <= 12 else 7)
            ticks = np.arange(n_labels) if named else []
            ax.set_xticks(ticks, [label_names[j] for j in ticks], rotation=45, ha="right",
                          rotation_mode="anchor")
            # Rows share the labels of the first column: names there only.
            ax.set_yticks(ticks, [label_names[j] for j in ticks] if i % n_cols == 0 else [])
            if n_labels <= _MAX_ANNOTATED_LABELS:
                for (r, c), value in np.ndenumerate(matrix):
                    if np.isfinite(value):
                        ax.text(c, r, f"{value:.2f}", ha="center", va="center", fontsize=7,
                                color="white" if abs(value) > 0.6 else "black")
        for ax in block[n_panels:]:
            ax.set_axis_off()
    fig.colorbar(image, ax=axes, shrink=0.8, label=(
        ("weight of row implies column" + (" (labels: P(column | row))" if len(sets) > 1
                                           else "")) if directed else "correlation"))
    kind = "directed correlations" if directed else "correlations"
    title = (f"Label {kind}" if groups is None else
             f"{kind.capitalize()} of the model's label scores")
    if len(sets) > 1:
        title += ", above those of its training labels"
    fig.suptitle(title + (": global and per group" if shown else ""))
    return _finish(fig, path, overwrite)


def _agreement(learned, own, directed):
    """How far two l x l correlation matrices agree over the label pairs where both are
    defined (i < j; every i != j when directed): (Spearman's rho, fraction of the pairs of
    the same sign, number of pairs). NaN where undefined (fewer than two pairs, a constant
    matrix)."""
    from scipy.stats import spearmanr

    n = learned.shape[0]
    pairs = ~np.eye(n, dtype=bool) if directed else np.triu(np.ones((n, n), dtype=bool), 1)
    a, b = learned[pairs], own[pairs]
    kept = np.isfinite(a) & np.isfinite(b)
    a, b = a[kept], b[kept]
    rho = np.nan
    if a.size >= 2 and np.ptp(a) > 0 and np.ptp(b) > 0:
        rho = float(spearmanr(a, b).statistic)
    same_sign = float(np.mean(np.sign(a) == np.sign(b))) if a.size else np.nan
    return rho, same_sign, int(a.size)


def _agreement_text(learned, own, directed):
    """The agreement of a labels panel with the model's, as printed on the figure."""
    rho, same_sign, n_pairs = _agreement(learned, own, directed)
    text = f"Spearman {'n/a' if np.isnan(rho) else f'{rho:+.2f}'} over {n_pairs} pairs"
    if directed or not n_pairs:  # directed weights and P(j | i) are never negative
        return text
    return f"{text}\nsame sign on {same_sign:.0%} of them"


def plot_convergence(source, *, logy=False, path=None, overwrite=False):
    """The objective after the basic-model initialisation and every outer iteration (the
    paper's Figure 4).

    Parameters
    ----------
    source : fitted GLOCAL, sequence of float, or mapping of str to either
        A fitted estimator contributes its ``objective_history_`` and, between iterations,
        the objective after each of its Z, V, U and W updates
        (``block_objective_history_``); a mapping draws one curve per entry (e.g. several
        datasets). The axis names the objective of the models' loss: the paper's Eq. (4)
        for ``loss="squared"``, else Eq. (4) with that loss's label-fit term.
    logy : bool, default=False
        Logarithmic objective axis.
    path : path-like, optional
        Also save the figure there (see `save_figure`).
    overwrite : bool, default=False
        Replace an existing ``path``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not isinstance(source, Mapping):
        source = {"GLOCAL" if hasattr(source, "objective_history_") else "objective": source}
    ylabel = _objective_label({getattr(history, "loss", None) for history in source.values()})
    fig = _new_figure(5.0, 3.6)
    from matplotlib.ticker import MaxNLocator
    ax = fig.subplots()
    for name, history in source.items():
        blocks = getattr(history, "block_objective_history_", None)
        history = np.asarray(getattr(history, "objective_history_", history), dtype=float)
        line, = ax.plot(np.arange(history.size), history, marker="o", label=name)
        if blocks is not None and len(blocks):
            # iteration i's blocks sit at i - 3/4, i - 1/2, i - 1/4 and i
            steps = np.arange(1, blocks.size + 1) / blocks.shape[1]
            ax.plot(np.concatenate([[0], steps]), np.concatenate([history[:1], blocks.ravel()]),
                    linewidth=0.8, marker=".", color=line.get_color(), alpha=0.6,
                    label=f"{name}: after each block (Z, V, U, W)")
            source = {**source, "blocks": None}  # a legend is worth drawing now
    if logy:
        ax.set_yscale("log")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("outer iteration (0: after the basic-model initialisation)")
    ax.set_ylabel(ylabel)
    ax.set_title("Convergence of GLOCAL")
    ax.grid(alpha=0.3)
    if len(source) > 1:
        ax.legend()
    return _finish(fig, path, overwrite)


def _objective_label(losses):
    """The objective axis's label for fitted models of these losses: the paper's Eq. (4)
    for its squared loss, Eq. (4) with the label-fit term of another loss."""
    if len(losses) != 1 or None in losses:  # plain values, or models of different losses
        return "objective"
    loss, = losses
    if loss == "squared":
        return "objective (Eq. (4))"
    return f"objective (Eq. (4) with the {loss.replace('_', ' ')} loss)"


def sensitivity(X_train, Y_train, X_test, Y_test, parameter, values, **base_params):
    """Fit GLOCAL for every value of one hyperparameter and measure it on a test set.

    Parameters
    ----------
    X_train, Y_train : array-like
        Training data; ``Y_train`` may hold NaN for missing labels.
    X_test, Y_test : array-like
        Test data with complete {0, 1} labels (as in the paper, drop rows without a
        positive label first: `glocal.protocol.drop_unlabeled_rows`).
    parameter : str
        A GLOCAL parameter (e.g. ``"lam3"``), or the paper's ``"g"`` (``n_groups``) or
        ``"k"`` (``n_latent``).
    values : sequence
        The values to try.
    **base_params
        The other GLOCAL parameters, e.g. ``random_state=0``.

    Returns
    -------
    results : list of dict
        One record per value: ``{parameter: value}`` plus the measures of
        `glocal.metrics.evaluate`; the input of `plot_sensitivity`.
    """
    name = _ALIASES.get(parameter, parameter)
    results = []
    for value in values:
        model = GLOCAL(**{**base_params, name: value}).fit(X_train, Y_train)
        results.append({parameter: value,
                        **evaluate(Y_test, model.decision_function(X_test))})
    return results


def plot_sensitivity(results, parameter, *, path=None, overwrite=False):
    """The four measures of the paper against one hyperparameter (Figures 5-9).

    Parameters
    ----------
    results : list of dict, or mapping of value to dict (or to list of dict)
        Records holding ``parameter`` and the measures of `glocal.metrics.evaluate`, as
        returned by `sensitivity`; or measures keyed by parameter value. Several records
        of one value (e.g. repetitions) are drawn as their mean with a standard-deviation
        bar.
    parameter : str
        The key of the parameter in the records (``"g"``, ``"k"``, ``"lam2"``, ...).
    path : path-like, optional
        Also save the figure there (see `save_figure`).
    overwrite : bool, default=False
        Replace an existing ``path``.

    Returns
    -------
    matplotlib.figure.Figure
        Rkl, Auc, Cvg and Ap side by side; a logarithmic axis when the positive values
        span two decades or more (symmetric-log when one value is 0).
    """
    if isinstance(results, Mapping):
        results = [{parameter: value, **record} for value, records in results.items()
                   for record in ([records] if isinstance(records, Mapping) else records)]
    name = _ALIASES.get(parameter, parameter)
    xlabel = f"{_SYMBOLS[name]} ({parameter})" if name in _SYMBOLS else parameter
    fig = _new_figure(12.0, 3.2)
    for ax, measure in zip(fig.subplots(1, len(PAPER_NAMES)), PAPER_NAMES.values()):
        x, mean, std = _mean_std(results, parameter, measure)
        ax.errorbar(x, mean, yerr=std, marker="o", capsize=3)
        positive = x[x > 0]
        if positive.size and x.min() >= 0 and positive.max() >= 100 * positive.min():
            # symlog keeps a value of 0 (a term switched off) on the axis
            ax.set_xscale("log" if x.min() > 0 else "symlog", **(
                {} if x.min() > 0 else {"linthresh": positive.min()}))
        ax.set_xlabel(xlabel)
        ax.set_title(_measure_label(measure))
        ax.grid(alpha=0.3)
    fig.suptitle(f"Sensitivity of GLOCAL to {parameter}")
    return _finish(fig, path, overwrite)


def plot_measure_vs_observed(results, measure="average_precision", *, path=None,
                             overwrite=False):
    """Measures against the observed fraction rho of the training labels.

    Parameters
    ----------
    results : list of dict
        Records with ``"rho"`` and the measure, and optionally ``"method"`` (one curve
        each) and ``"dataset"`` (one row of panels each), such as the rows of
        `glocal.reproduce.read_results`. Records of the same dataset, method and rho
        (repetitions) are drawn as their mean with a standard-deviation bar; NaN values
        are ignored.
    measure : str or sequence of str, default="average_precision"
        Record keys, one column of panels each: a measure of `glocal.metrics.evaluate`,
        or one prefixed by ``prediction_`` or ``recovery_`` as in
        `glocal.reproduce.read_results`.
    path : path-like, optional
        Also save the figure there (see `save_figure`).
    overwrite : bool, default=False
        Replace an existing ``path``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    measures = [measure] if isinstance(measure, str) else list(measure)
    missing = [key for key in measures if any(key not in record for record in results)]
    if missing:
        raise ValueError(f"the results lack {missing} (their keys: "
                         f"{sorted(set().union(*results))})")
    datasets = list(dict.fromkeys(record.get("dataset") for record in results))
    methods = list(dict.fromkeys(record.get("method") for record in results))
    fig = _new_figure(4.2 * len(measures), 3.4 * len(datasets))
    axes = fig.subplots(len(datasets), len(measures), squeeze=False)
    for row, dataset in zip(axes, datasets):
        for ax, key in zip(row, measures):
            for method in methods:
                records = [r for r in results
                           if r.get("dataset") == dataset and r.get("method") == method]
                x, mean, std = _mean_std(records, "rho", key)
                if x.size:
                    ax.errorbar(x, mean, yerr=std, marker="o", capsize=3, label=method)
            ax.set_xlim(0, 1.05)
            ax.set_xlabel(r"observed fraction $\rho$")
            ax.set_ylabel(_measure_label(key))
            if dataset is not None:
                ax.set_title(dataset)
            ax.grid(alpha=0.3)
    if methods != [None]:
        axes[0, 0].legend()
    return _finish(fig, path, overwrite)


def _mean_std(records, key, measure):
    """Sorted ``key`` values with the mean and standard deviation of ``measure`` at each.

    Non-finite measures are ignored, and values left without any are dropped.
    """
    samples = {}
    for record in records:
        value = float(record[measure])
        if np.isfinite(value):
            samples.setdefault(record[key], []).append(value)
    x = sorted(samples)
    return (np.array(x, dtype=float), np.array([np.mean(samples[v]) for v in x]),
            np.array([np.std(samples[v]) for v in x]))


def _measure_label(key):
    """'Ap', 'Rkl (lower is better)', 'Ap, missing training labels', ... for a record key."""
    part = next((prefix for prefix in _PARTS if key.startswith(prefix)), None)
    name = key[len(part):] if part else key
    label = _SHORT_NAMES.get(name, name)
    if part:
        label += f", {_PARTS[part]}"
    if not GREATER_IS_BETTER.get(name, True):
        label += " (lower is better)"
    return label
