"""``glocal evaluate``: the measures of a saved model on a data file."""

import warnings

from .._utils.progress import counted
from ._common import _check_data, _load_data, _read_model, _row_digests


def run(args):
    import numpy as np

    saved = _read_model(args.model)
    data = _load_data(args.data, args, "test", model=saved)
    _check_data(saved, data, args.data)
    X, Y = data.X, data.Y
    if not Y.shape[1]:
        raise ValueError(f"{args.data} has no labels to evaluate against; 'glocal predict' "
                         "scores it")
    n_rows, dropped = X.shape[0], ""
    observed = ~np.isnan(Y)
    positive = "a positive label" if observed.all() else "an observed positive label"
    if not args.keep_unlabeled:  # as the paper does
        keep = (Y == 1).any(axis=1)
        X, Y, observed = X[keep], Y[keep], observed[keep]
        dropped = (f"; dropped {counted(n_rows - X.shape[0], 'row')} without {positive} "
                   "(--keep-unlabeled keeps them)")
        if not X.shape[0]:
            raise ValueError(f"no row of {args.data} has a positive label")
    notes = []
    if saved.get("training_rows") is not None:
        seen = int(np.isin(_row_digests(X), saved["training_rows"]).sum())
        if seen == X.shape[0]:
            warnings.warn(f"the {X.shape[0]} rows scored are rows the model was fitted on: "
                          "these are training scores, higher than on new data")
        elif seen:  # public data sets hold duplicate rows across their splits
            notes.append(f"{seen} of them have the features of a training row")
    scores, predicted = saved["model"].decision_function(X), saved["model"].predict(X)
    print(f"{counted(X.shape[0], 'row')} of {data.described}{dropped}"
          + "".join(f"; {note}" for note in notes))
    if not observed.all():
        print(f"missing labels: {int((~observed).sum())} of {Y.size} label entries; every "
              "measure below is of the observed entries only (P@k and nDCG, which need every "
              "label, are left out)")
    for short, name, value in _measures(Y, scores, predicted, observed):
        print(f"{short:<8}{name:<24}{value:.4f}")
    if args.per_label:
        _print_label_report(Y, scores, predicted, saved["label_names"])
    return 0


def _measures(Y, scores, predicted, observed):
    """(short name, name, value) of every measure 'glocal evaluate' prints, on the
    ``observed`` entries of ``Y`` (NaN elsewhere)."""
    import numpy as np

    from ..metrics import (
        PAPER_NAMES,
        evaluate,
        evaluate_masked,
        macro_f1,
        micro_f1,
        ndcg_at_k,
        precision_at_k,
    )

    complete = observed.all()
    ranking = evaluate(Y, scores) if complete else evaluate_masked(Y, scores, observed)
    rows = [(short, name, ranking[name]) for short, name in PAPER_NAMES.items()]
    rows.append(("", "label_auc (mean)", ranking["label_auc"]))
    if complete:  # the top of a ranking with missing labels in it is not known
        for k in (1, 3, 5):
            rows.append((f"P@{k}", "precision_at_k", precision_at_k(Y, scores, k)))
        for k in (3, 5):
            rows.append((f"nDCG@{k}", "ndcg_at_k", ndcg_at_k(Y, scores, k)))
    rows += [("", "micro_f1", micro_f1(Y, predicted)),
             ("", "macro_f1", macro_f1(Y, predicted)),
             ("", "rows with no label", float(np.mean(predicted.sum(axis=1) == 0)))]
    return rows


def _print_label_report(Y, scores, predicted, label_names):
    """One line per label: support, AUC, precision, recall and F1 of the predicted sets."""
    from ..metrics import label_report

    report = label_report(Y, scores, predicted, label_names)
    width = max(8, *(len(name) for name in report["label"]))
    print(f"\n{'label':<{width}} {'support':>8} {'auc':>7} {'precision':>9} {'recall':>7} "
          f"{'f1':>7}")
    for j, name in enumerate(report["label"]):
        print(f"{name:<{width}} {report['support'][j]:>8} {report['auc'][j]:>7.4f} "
              f"{report['precision'][j]:>9.4f} {report['recall'][j]:>7.4f} "
              f"{report['f1'][j]:>7.4f}")
