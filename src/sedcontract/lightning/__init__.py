"""Lightning at the edge of the networks: the detector module (losses and validation by the
exact monitor), the benchmark datamodule, the ``ContractMonitor`` metric, callbacks that show
guard vectors, and checkpoint reading. No Hydra here; ``models`` holds the plain networks."""

from sedcontract.lightning.contract_aware import ContractAwareModule
from sedcontract.lightning.datamodule import ControlledDataModule
from sedcontract.lightning.metric import ContractMonitor
from sedcontract.lightning.module import DetectorModule, NonFiniteLoss, ThresholdModule

__all__ = ["ContractAwareModule", "ContractMonitor", "ControlledDataModule", "DetectorModule",
           "NonFiniteLoss", "ThresholdModule"]
