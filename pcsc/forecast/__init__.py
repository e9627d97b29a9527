"""Forecasts over time (docs/forecast.md): freeze ranked routes into a hash-chained ledger, resolve
milestones against later outcomes, evaluate (AUC, lift, Brier, calibration), and the
learning loop (policy fit / compare). numpy is imported only by the metrics."""
