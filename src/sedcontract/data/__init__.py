"""Data: calibration pathology sets (and, later, the controlled benchmark and corpora)."""

from sedcontract.data.pathologies import (
    PATHOLOGIES,
    PathologySet,
    corrupt,
    pathology_set,
    write_pathology_set,
)

__all__ = ["PATHOLOGIES", "PathologySet", "corrupt", "pathology_set", "write_pathology_set"]
