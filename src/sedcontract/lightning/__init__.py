"""Lightning at the edge of the networks: one detector module composed of parts (front end,
network, losses, batch transform), the datamodules, the ``ContractMonitor`` and soft clause
metrics, callbacks that show guard vectors, and checkpoint reading. No Hydra here; ``models``
holds the plain networks."""

from sedcontract.lightning.datamodule import ControlledDataModule
from sedcontract.lightning.losses import ContractObjective, FrameBCE
from sedcontract.lightning.metric import ContractMonitor
from sedcontract.lightning.module import DetectorModule, NonFiniteLoss
from sedcontract.lightning.transforms import FeatureMasks, Perturb

__all__ = ["ContractMonitor", "ContractObjective", "ControlledDataModule", "DetectorModule",
           "FeatureMasks", "FrameBCE", "NonFiniteLoss", "Perturb"]
