"""Detectors and their front end (plain torch modules; Lightning wraps them at the edge)."""

from sedcontract.models.boundary import BoundaryHead, ContractAwareDetector
from sedcontract.models.detectors import (
    DilatedCNN,
    LogisticDetector,
    TemporalCNN,
    ThresholdDetector,
)
from sedcontract.models.frontend import LogMel

DETECTORS = {"logistic": LogisticDetector, "temporal_cnn": TemporalCNN,
             "dilated_cnn": DilatedCNN, "threshold": ThresholdDetector,
             "contract_aware": ContractAwareDetector}

__all__ = ["DETECTORS", "BoundaryHead", "ContractAwareDetector", "DilatedCNN", "LogMel",
           "LogisticDetector", "TemporalCNN", "ThresholdDetector"]
