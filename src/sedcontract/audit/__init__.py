"""Aggregation of contract results into guard reports, and their renderings."""

from sedcontract.audit.guard import AGGREGATIONS, Cell, GuardReport, ModeReport, audit
from sedcontract.audit.render import to_csv, to_dict, to_json, to_markdown, to_rows

__all__ = ["AGGREGATIONS", "Cell", "GuardReport", "ModeReport", "audit", "to_csv", "to_dict",
           "to_json", "to_markdown", "to_rows"]
