"""Machine evaluation: suites measured as classifiers against candidates with gold verdicts."""
