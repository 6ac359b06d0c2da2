"""Frame grids, intervals, event lists and DCASE file formats (numpy only)."""

from sedcontract.traces.activity import EDGES, offset, onset, runs
from sedcontract.traces.events import EventList
from sedcontract.traces.grid import PROJECTIONS, Grid, project
from sedcontract.traces.traceset import MODES, TraceSet
from sedcontract.traces.tsv import read_durations, read_events, write_durations, write_events

__all__ = ["EDGES", "MODES", "PROJECTIONS", "EventList", "Grid", "TraceSet", "offset", "onset",
           "project", "read_durations", "read_events", "runs", "write_durations",
           "write_events"]
