"""The experiments of the held-out protocol (docs/results/protocol.md) as a library: the arms
and choices of each round, the lock that freezes them before held-out data is read, a trained
run's readings, the intervals over seeds and clips, the verdicts, and the committed pages
rendered from their source rows. ``scripts/contract_losses.py`` and
``scripts/contract_tradeoff.py`` train the runs and call it."""
