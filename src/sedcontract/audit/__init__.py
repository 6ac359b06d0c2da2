"""Guard reports (aggregation, renderings) and the standard scores beside them."""

from sedcontract.audit.guard import AGGREGATIONS, Cell, GuardReport, ModeReport, audit
from sedcontract.audit.render import to_csv, to_dict, to_json, to_markdown, to_rows
from sedcontract.audit.scores import Counts, MetricResult, ScoreSettings, standard_scores

__all__ = ["AGGREGATIONS", "Cell", "Counts", "GuardReport", "MetricResult", "ModeReport",
           "ScoreSettings", "audit", "standard_scores", "to_csv", "to_dict", "to_json",
           "to_markdown", "to_rows"]
