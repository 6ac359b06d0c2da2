"""The guard vector: report types, the audit pipeline, shards, the bootstrap and the renderings."""

from sedcontract.contracts.policy import AGGREGATIONS, AuditPolicy, ScoreSettings
from sedcontract.guard.bootstrap import (
    bootstrap_intervals,
    hierarchical_bootstrap,
    paired_bootstrap,
    score_intervals,
    stratified_bootstrap,
)
from sedcontract.guard.csv_rows import to_csv, to_rows
from sedcontract.guard.pipeline import audit, score
from sedcontract.guard.render import to_dict, to_json, to_markdown
from sedcontract.guard.report import Cell, GuardReport, ModeReport, ScoresReport
from sedcontract.resampling import Interval

__all__ = ["AGGREGATIONS", "AuditPolicy", "Cell", "GuardReport", "Interval", "ModeReport",
           "ScoreSettings", "ScoresReport", "audit", "bootstrap_intervals",
           "hierarchical_bootstrap", "paired_bootstrap", "score", "score_intervals",
           "stratified_bootstrap",
           "to_csv", "to_dict", "to_json", "to_markdown", "to_rows"]
