"""Detectors and their front end (plain torch modules; Lightning wraps them at the edge)."""

from sedcontract.models.detectors import (
    DETECTORS,
    DilatedCNN,
    LogisticDetector,
    TemporalCNN,
    ThresholdDetector,
)
from sedcontract.models.frontend import LogMel

__all__ = ["DETECTORS", "DilatedCNN", "LogMel", "LogisticDetector", "TemporalCNN",
           "ThresholdDetector"]
