"""Data: the controlled benchmark (synthetic sources, scenes, perturbations, build) and
calibration pathology sets."""

from sedcontract.data.pathologies import (
    PATHOLOGIES,
    PathologySet,
    corrupt,
    pathology_set,
    write_pathology_set,
)

__all__ = ["PATHOLOGIES", "PathologySet", "corrupt", "pathology_set", "write_pathology_set"]
