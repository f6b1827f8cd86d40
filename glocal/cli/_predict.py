"""``glocal predict``: scores, label sets, top labels or probabilities of a data file's
rows."""

from .._utils.io import atomic_output, csv_text
from .._utils.progress import counted
from ._common import _check_data, _load_data, _output, _read_model


def run(args):
    import csv

    import numpy as np

    from ..datasets.load import input_files

    _output(args.out, args, [args.model, *input_files(args.data, args.xml)])
    saved = _read_model(args.model)
    data = _load_data(args.data, args, "test", model=saved)
    _check_data(saved, data, args.data)
    model = saved["model"]  # what load_model returns: its outputs are written
    if args.top_k is not None:
        values, kind = model.predict_top_k(data.X, args.top_k), f"the top {args.top_k} labels"
    elif args.labels:
        values, kind = model.predict(data.X), "labels"
    elif args.proba:
        values, kind = _probabilities(model, data.X), "probabilities"
    else:
        values, kind = model.decision_function(data.X), "scores"
    with atomic_output(args.out, overwrite=args.force) as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow([csv_text(name) for name in saved["label_names"]])
        writer.writerows(np.asarray(values).tolist())
    print(f"wrote {kind} of {counted(values.shape[0], 'row')} x "
          f"{counted(values.shape[1], 'label')} to {args.out}")
    return 0


def _probabilities(model, X):
    """The model's ``predict_proba(X)``, or one line saying why it has none."""
    try:
        predict_proba = model.predict_proba
    except AttributeError as exc:
        raise ValueError(f"--proba: this model gives no probabilities ({exc}); 'glocal fit' "
                         "saves a model that does, and so does 'glocal fit --paper --loss "
                         "logistic'") from None
    return predict_proba(X)
