"""Hydra configuration of ``train.py`` / ``evaluate.py`` (a package so installed console
scripts find it as ``pkg://sedcontract.configs``)."""
