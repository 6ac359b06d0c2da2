"""Reports regenerated from source rows (``audit --format csv``, the ``*_report.csv`` files of
training and evaluation runs): every table (Markdown and CSV), a figure and a self-contained
``report.html``, all pure functions of the rows, so the same rows give the same bytes. Tables
(``tables``), the resampled counts (``counts``), the overview (``overview``), the page's pieces
(``html``), the figures (``figures``) and the folder (``files``)."""

from sedcontract.analysis.report.figures import vectors_figure, vectors_png
from sedcontract.analysis.report.files import read_groups, report_files
from sedcontract.analysis.report.html import colour
from sedcontract.analysis.report.overview import (
    Overview,
    overview,
    overview_csv,
    overview_markdown,
)
from sedcontract.analysis.report.tables import Table, report_tables
from sedcontract.analysis.source_rows import read_rows

__all__ = ["Overview", "Table", "colour", "overview", "overview_csv", "overview_markdown",
           "read_groups", "read_rows", "report_files", "report_tables", "vectors_figure",
           "vectors_png"]
