"""The guard vector: report types, the audit pipeline, shards, the bootstrap and the renderings."""

from sedcontract.audit.bootstrap import (
    bootstrap_intervals,
    hierarchical_bootstrap,
    paired_bootstrap,
    score_intervals,
    stratified_bootstrap,
)
from sedcontract.audit.guard import (
    AGGREGATIONS,
    Cell,
    GuardReport,
    ModeReport,
    ScoresReport,
    audit,
    score,
)
from sedcontract.audit.render import to_csv, to_dict, to_json, to_markdown, to_rows
from sedcontract.contracts.policy import AuditPolicy, ScoreSettings
from sedcontract.resampling import Interval

__all__ = ["AGGREGATIONS", "AuditPolicy", "Cell", "GuardReport", "Interval", "ModeReport",
           "ScoreSettings", "ScoresReport", "audit", "bootstrap_intervals",
           "hierarchical_bootstrap", "paired_bootstrap", "score", "score_intervals",
           "stratified_bootstrap",
           "to_csv", "to_dict", "to_json", "to_markdown", "to_rows"]
