"""``glocal demo``: GLOCAL, GLOCALCV and a one-vs-rest baseline on built-in synthetic data."""

import time

#: Parameters of :func:`glocal.datasets.make_glocal_data` for the demo, set from the method's
#: premise (see :func:`demo_data`), not from which model wins.
DEMO_DATA = dict(n_samples=600, n_features=24, n_labels=30, n_groups=3, group_dim=8,
                 cluster_size=5, n_shared_clusters=6, positive_rate=0.3, separation=3.0,
                 noise=0.3, label_noise=0.05)
#: The four measures the demo prints: key, heading, column width, whether higher is better.
MEASURES = [("ranking_loss", "Rkl (lower)", 13, False), ("instance_auc", "Auc", 9, True),
            ("coverage", "Cvg (lower)", 13, False), ("average_precision", "Ap", 9, True)]


def demo_data(seed):
    """The demo's data: 30 labels that are noisy copies of 6 latent labels.

    ``make_glocal_data(**DEMO_DATA, random_state=seed)``, whose parameters follow GLOCAL's
    premise that the labels share a low-rank structure:

    - ``n_labels=30, cluster_size=5, n_shared_clusters=6``: the labels form 6 clusters of
      5 copies, the same clusters in every group, so the complete label matrix has rank 6
      (before label noise), well below the number of labels;
    - ``label_noise=0.05``: every label entry is flipped with probability 0.05, so copies
      are near copies, as real labels that share a cause are;
    - ``n_groups=3, group_dim=8, n_features=24``: the features are three orthogonal
      8-dimensional group subspaces, and each cluster label is a threshold of a linear
      score of them, so the features see the labels only through the 6 latent scores of
      each group;
    - ``n_samples=600, positive_rate=0.3, separation=3.0, noise=0.3``: the generator's
      defaults.

    By default the demo then hides 70 % of the training labels (``sample_observed``), so
    most labels are missing, and fits the same models again with every label observed.

    Parameters
    ----------
    seed : int
        Seed of the generator.

    Returns
    -------
    data : Bunch
        What :func:`glocal.datasets.make_glocal_data` returns.
    """
    from ..datasets import make_glocal_data

    return make_glocal_data(**DEMO_DATA, random_state=seed)


def run(args):
    from sklearn.model_selection import train_test_split

    from .. import GLOCAL, GLOCALCV
    from ..baselines import BR
    from ..metrics import evaluate
    from ..protocol import sample_observed

    data = demo_data(args.seed)
    X_train, X_test, Y_train, Y_test = train_test_split(
        data.X, data.Y, test_size=0.4, random_state=args.seed)
    keep = Y_test.sum(axis=1) > 0  # the paper scores only test rows with a positive label
    n, d = data.X.shape
    print(f"Synthetic data (glocal.datasets.make_glocal_data, seed {args.seed}): {n} samples, "
          f"{d} features, {data.Y.shape[1]} labels that are noisy copies of "
          f"{data.Y.shape[1] // DEMO_DATA['cluster_size']} latent labels (a low-rank label "
          "matrix); 60/40 split.\n"
          "BR: one LinearSVC per label, trained on the rows where that label is observed.\n"
          "GLOCAL(): the paper's model. GLOCALCV(): the recommended model (squared hinge, "
          "tuned by 3-fold CV).")
    header = "".join(f"{heading:>{width}}" for _, heading, width, _ in MEASURES)
    header = f"{'method':<12}{header}{'fit (s)':>10}"
    table = {}
    for rho in ([args.observed] if args.observed is not None else [0.3, 1.0]):
        Y_observed = (sample_observed(Y_train, rho, random_state=args.seed) if rho < 1
                      else Y_train)
        print(f"\n{rho:.0%} of training labels observed:\n{header}\n{'-' * len(header)}")
        models = [("BR", BR(random_state=args.seed)),
                  ("GLOCAL()", GLOCAL(random_state=args.seed)),
                  ("GLOCALCV()", GLOCALCV(random_state=args.seed))]
        table[rho] = {}
        for name, model in models:
            tic = time.perf_counter()
            model.fit(X_train, Y_observed)
            seconds = time.perf_counter() - tic
            s = evaluate(Y_test[keep], model.decision_function(X_test[keep]))
            table[rho][name] = s
            cells = "".join(f"{s[key]:>{width}.4f}" for key, _, width, _ in MEASURES)
            print(f"{name:<12}{cells}{seconds:>10.3f}", flush=True)
    print("\nAuc is the per-instance AUC; Cvg is the paper's coverage (minus one).")
    print(read_table(table))
    return 0


def read_table(table):
    """One sentence saying which model wins where in the demo's table, and by how much.

    Parameters
    ----------
    table : dict
        ``table[rho][method]`` is the dict of measures of ``method`` with a fraction ``rho``
        of the training labels observed; it holds ``"BR"`` and ``"GLOCALCV()"``.

    Returns
    -------
    sentence : str
        For every ``rho``: the model with the best Ap and its lead over the next best,
        GLOCALCV()'s Ap against BR's, and on how many of the four measures GLOCALCV() beats
        BR. Values are compared as printed (rounded to 4 decimals), so a tie on the page is
        a tie here.
    """
    parts = []
    for rho, scores in table.items():
        printed = {name: {key: round(s[key], 4) for key, *_ in MEASURES}
                   for name, s in scores.items()}
        ap = {name: s["average_precision"] for name, s in printed.items()}
        best, second = sorted(ap, key=ap.get, reverse=True)[:2]
        if ap[best] == ap[second]:
            top = f"{best} and {second} tie on Ap ({ap[best]:.4f})"
        else:
            top = (f"{best} has the best Ap ({ap[best]:.4f}, "
                   f"{ap[best] - ap[second]:.4f} above {second})")
        cv, br = printed["GLOCALCV()"], printed["BR"]
        gain = ap["GLOCALCV()"] - ap["BR"]
        against = ("equal to" if gain == 0
                   else f"{abs(gain):.4f} {'above' if gain > 0 else 'below'}")
        wins = sum(cv[key] > br[key] if higher else cv[key] < br[key]
                   for key, _, _, higher in MEASURES)
        parts.append(f"with {rho:.0%} of the labels observed, {top}, and GLOCALCV()'s Ap is "
                     f"{against} BR's (better on {wins} of the {len(MEASURES)} measures)")
    return "Reading the table: " + "; ".join(parts) + "."
