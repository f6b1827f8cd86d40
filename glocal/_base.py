"""What every multi-label estimator of glocal shares: predict, score and tags."""

from sklearn.base import MultiOutputMixin


class MultiLabelMixin(MultiOutputMixin):
    """For estimators with ``decision_function(X)`` returning (n_samples, n_labels) scores."""

    def predict(self, X):
        """Label indicator: 1 where the score is positive (the paper's sign), else 0."""
        return (self.decision_function(X) > 0).astype(int)

    def score(self, X, Y):
        """Average precision of the label ranking (the paper's Ap), higher is better.

        Rows of Y without a positive label are skipped (see `glocal.metrics`).
        """
        from .metrics import average_precision

        return average_precision(Y, self.decision_function(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = False
        tags.target_tags.two_d_labels = True
        tags.target_tags.one_d_labels = False
        return tags
