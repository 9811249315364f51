"""Over time: history of runs, rolling baselines and regression gates."""
