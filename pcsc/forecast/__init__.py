"""Forecasts over time (DESIGN §8): rank, freeze into a hash-chained ledger, resolve
milestones against later outcomes, evaluate (AUC, lift, Brier, calibration), and the
learning loop (policy fit / compare). numpy is imported only by the metrics."""
