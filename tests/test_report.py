"""Reports regenerated from source rows: the same rows give the same bytes; the HTML parses,
embeds its figure and shows the numbers the audit computed; groups split the vectors; bad
rows (missing columns, counts out of range, repeated rows, mixed policies) name file and row."""

from __future__ import annotations

import csv
import io
import math
from html.parser import HTMLParser
from pathlib import Path

import pytest

import sedcontract
from sedcontract.audit import ScoreSettings, to_csv, to_markdown
from sedcontract.audit.render import table_text
from sedcontract.audit.report import read_groups, read_rows, report_tables
from sedcontract.cli import main
from sedcontract.data import pathology_set, write_pathology_set
from sedcontract.errors import TraceFormatError
from tests.test_selection import DURATION, reference


@pytest.fixture(scope="module")
def systems(tmp_path_factory):
    """Two systems' source rows (a pathology set audited as one system, the reference
    itself as another) and the audits behind them."""
    root = tmp_path_factory.mktemp("rows")
    ref = reference()
    data = pathology_set(ref, dict.fromkeys(ref.clips, DURATION), seed=2,
                         pathologies={"late_onset": [0.3], "fragmentation": [2],
                                      "missed": [1.0]})
    write_pathology_set(root / "cal", data)
    audits = {name: sedcontract.audit(data.ref, pred, durations=data.durations,
                                      scores=ScoreSettings())
              for name, pred in (("corrupt", data.pred), ("perfect", data.ref))}
    for name, report in audits.items():
        (root / f"{name}.csv").write_text(to_csv(report, name))
    return root, audits


def report(root: Path, out: Path, *extra: str) -> int:
    return main(["report", str(root / "corrupt.csv"), str(root / "perfect.csv"), "--out",
                 str(out), *extra])


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.images, self.cells, self.stack = [], [], []

    def handle_starttag(self, tag, attrs):
        if tag not in ("meta", "img", "br"):  # void elements have no end tag
            self.stack.append(tag)
        if tag == "img":
            self.images.append(dict(attrs)["src"])

    def handle_endtag(self, tag):
        assert self.stack.pop() == tag, f"unbalanced </{tag}>"

    def handle_data(self, data):
        if self.stack and self.stack[-1] == "td":
            self.cells.append(data)


def test_the_same_rows_give_the_same_bytes(systems, tmp_path):
    root, _ = systems
    assert report(root, tmp_path / "a") == 0 and report(root, tmp_path / "b") == 0
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert {"report.html", "vectors.png", "vectors.csv", "mechanism.md"} <= set(names)
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert report(root, tmp_path / "a") == 0  # an earlier report folder is rewritten


def test_the_html_parses_embeds_its_figure_and_shows_the_audits_numbers(systems, tmp_path):
    root, audits = systems
    assert report(root, tmp_path / "r") == 0
    page = Page()
    page.feed((tmp_path / "r" / "report.html").read_text())
    page.close()
    assert page.stack == [] and len(page.images) == 1
    assert page.images[0].startswith("data:image/png;base64,")
    with open(tmp_path / "r" / "vectors.csv") as f:
        vectors = list(csv.DictReader(f))
    for name, audit in audits.items():
        for mode in ("typed", "union"):
            for coordinate, value in audit.vector(mode).items():
                row = next(r for r in vectors if (r["system"], r["mode"], r["coordinate"]) ==
                           (name, mode, coordinate))
                assert float(row["score"]) == pytest.approx(value, abs=5e-5)
                assert f"{value:.4f}" in page.cells
    with open(tmp_path / "r" / "logic.csv") as f:
        logic = {r["system"]: r for r in csv.DictReader(f)}
    assert float(logic["corrupt"]["typed"]) == pytest.approx(audits["corrupt"].logic("typed"),
                                                              abs=5e-5)
    assert float(logic["perfect"]["union"]) == 1.0


def test_groups_split_the_vectors(systems, tmp_path):
    root, _ = systems
    assert report(root, tmp_path / "g", "--groups", str(root / "cal" / "labels.tsv")) == 0
    with open(tmp_path / "g" / "by_group.csv") as f:
        groups = list(csv.DictReader(f))
    corrupt = {r["group"]: r for r in groups if r["system"] == "corrupt"}
    assert set(corrupt) == {"late_onset", "fragmentation", "missed"}
    assert float(corrupt["fragmentation"]["fragmentation"]) < 1.0
    assert float(corrupt["late_onset"]["fragmentation"]) == 1.0


def test_the_mechanism_table_counts_support_per_class(systems):
    root, audits = systems
    rows = read_rows([root / "corrupt.csv"])
    mechanism = next(t for t in report_tables(rows) if t.name == "mechanism")
    support = {row[2]: row[3] for row in mechanism.rows}
    typed = audits["corrupt"].modes["typed"]
    assert support == {c: cell.obligations for c, cell in typed.per_class("missed").items()}
    # sparsity: the share of frames without the class (frame scores count active frames)
    frames = len(audits["corrupt"].clips) * round(DURATION / 0.02)
    frame = audits["corrupt"].scores["frame"].per_class
    assert {row[2]: row[6] for row in mechanism.rows} == pytest.approx(
        {c: 1 - frame[c].ref / frames for c in support})


def test_parquet_rows_give_the_csv_report(systems, tmp_path):
    pa_csv = pytest.importorskip("pyarrow.csv")
    import pyarrow.parquet as pq

    root, _ = systems
    options = pa_csv.ConvertOptions(column_types={"clip": "string", "class": "string",
                                                  "policy": "string", "system": "string"})
    for name in ("corrupt", "perfect"):
        pq.write_table(pa_csv.read_csv(root / f"{name}.csv", convert_options=options),
                       tmp_path / f"{name}.parquet")
    assert main(["report", str(tmp_path / "corrupt.parquet"), str(tmp_path / "perfect.parquet"),
                 "--out", str(tmp_path / "p")]) == 0
    assert report(root, tmp_path / "c") == 0
    for name in ("vectors.csv", "scores.csv", "mechanism.csv", "report.html"):
        assert (tmp_path / "p" / name).read_bytes() == (tmp_path / "c" / name).read_bytes()


def test_bad_rows_name_the_file_and_row(systems, tmp_path, capsys):
    root, _ = systems
    lines = (root / "corrupt.csv").read_text().splitlines()
    cases = {
        "missing.csv": ([lines[0].replace(",policy", ""), *lines[1:3]], "missing column",
                        1),
        "range.csv": ([lines[0], lines[1].rsplit(",", 2)[0] + ",5,3"], "outside 0", 2),
        "twice.csv": ([lines[0], lines[1], lines[1]], "repeats row 2", 3),
        "mode.csv": ([lines[0], lines[1].replace(",typed,", ",both,", 1)], "unknown mode", 2),
    }
    for name, (content, message, row) in cases.items():
        (tmp_path / name).write_text("\n".join(content) + "\n")
        with pytest.raises(TraceFormatError, match=message) as info:
            read_rows([tmp_path / name])
        assert (info.value.path, info.value.row) == (str(tmp_path / name), row), name
    other = [lines[0], lines[1].replace(lines[1].split(",")[1], "0123456789ab")]
    (tmp_path / "other.csv").write_text("\n".join(other) + "\n")
    with pytest.raises(TraceFormatError, match="several policies") as info:
        read_rows([root / "corrupt.csv", tmp_path / "other.csv"])
    assert (info.value.path, info.value.row) == (str(tmp_path / "other.csv"), 2)
    assert len(read_rows([root / "corrupt.csv", tmp_path / "other.csv"],
                         several_policies=True)) == len(lines)
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    assert report(root, tmp_path / "taken") == 2
    assert "not a report folder" in capsys.readouterr().err
    assert (tmp_path / "taken" / "notes.txt").read_text() == "mine"


def test_standard_scores_and_the_matching_audit_come_from_the_rows(systems, tmp_path):
    """The rows carry true positives over references and outputs per clip and class, and the
    greedy and exact pairs per row: the report's F1 and matching audit equal the audit's."""
    root, audits = systems
    assert report(root, tmp_path / "s") == 0
    with open(tmp_path / "s" / "scores.csv") as f:
        scores = {(r["system"], r["score"]): r for r in csv.DictReader(f)}
    with open(tmp_path / "s" / "matching.csv") as f:
        matching = {(r["system"], r["mode"]): r for r in csv.DictReader(f)}
    for name, audit in audits.items():
        for score, result in audit.scores.items():
            row = scores[(name, score)]
            assert (int(row["tp"]), int(row["references"]), int(row["outputs"])) == \
                (result.overall.tp, result.overall.ref, result.overall.sys), (name, score)
            assert float(row["F1"]) == pytest.approx(result.overall.f1, abs=5e-5)
        for mode, modes in audit.modes.items():
            m = modes.matchings["m"]
            row = matching[(name, mode)]
            assert (int(row["greedy"]), int(row["exact"])) == \
                (int(m.greedy_per_row.sum()), int(m.exact_per_row.sum()))
    assert float(scores[("perfect", "event")]["F1"]) == 1.0


def test_the_sweep_and_timelines_join_the_report(systems, tmp_path):
    """A sweep's rows and a folder of timelines go into report.html (figures embedded) and
    the sweep's tables beside it, regenerated from its rows."""
    from sedcontract.audit.sweep import read_sweep, sweep_csv

    root, _ = systems
    cal = root / "cal"
    assert main(["sweep", "--ref", str(cal / "ref.tsv"), "--pred", f"corrupt={cal / 'pred.tsv'}",
                 "--pred", f"perfect={cal / 'ref.tsv'}", "--durations",
                 str(cal / "durations.tsv"), "--eps", "0,100ms,200ms", "--csv",
                 str(tmp_path / "sweep.csv")]) == 0
    shown = tmp_path / "timelines"
    shown.mkdir()
    clip = next(c for c in (cal / "durations.tsv").read_text().split() if "late_onset" in c)
    assert main(["show", "--ref", str(cal / "ref.tsv"), "--pred", str(cal / "pred.tsv"),
                 "--durations", str(cal / "durations.tsv"), "--clip", clip.removesuffix(".wav"),
                 "--out", str(shown / "one.png")]) == 0
    assert report(root, tmp_path / "r", "--sweep", str(tmp_path / "sweep.csv"),
                  "--timelines", str(shown)) == 0
    page = Page()
    page.feed((tmp_path / "r" / "report.html").read_text())
    assert len(page.images) == 3 and all(i.startswith("data:image/png;base64,")
                                         for i in page.images)
    assert (tmp_path / "r" / "sweep.csv").read_text() == (tmp_path / "sweep.csv").read_text()
    assert sweep_csv(read_sweep(tmp_path / "sweep.csv")) == (tmp_path / "sweep.csv").read_text()
    assert report(root, tmp_path / "r2", "--timelines", str(tmp_path / "nothing")) == 2


def test_rows_and_groups_files_that_cannot_be_read_are_named(systems, tmp_path):
    """Non-UTF-8 bytes (the byte and its line), a field over the CSV field limit, a text file
    named .parquet and a clip grouped twice are errors naming the file, never tracebacks."""
    root, _ = systems
    lines = (root / "corrupt.csv").read_text().splitlines()
    data = ("\n".join(lines[:2]) + "\n").encode() + \
        lines[2].replace("corrupt", "corr\xfcpt", 1).encode("latin-1") + b"\n"
    (tmp_path / "latin1.csv").write_bytes(data)
    offset = data.index(b"\xfc")
    with pytest.raises(TraceFormatError, match=f"not UTF-8 .*byte {offset}") as info:
        read_rows([tmp_path / "latin1.csv"])
    assert (info.value.path, info.value.row) == (str(tmp_path / "latin1.csv"), 3)
    clip = lines[1].split(",")[3]
    (tmp_path / "long.csv").write_text("\n".join([lines[0], lines[1],
                                                  lines[2].replace(clip, "x" * 200_000)]))
    with pytest.raises(TraceFormatError, match="field larger than field limit") as info:
        read_rows([tmp_path / "long.csv"])
    assert (info.value.path, info.value.row) == (str(tmp_path / "long.csv"), 3)
    (tmp_path / "short.csv").write_text("\n".join([lines[0], "a,b,typed"]) + "\n")
    with pytest.raises(TraceFormatError, match="3 fields; the header has 10") as info:
        read_rows([tmp_path / "short.csv"])
    assert info.value.row == 2
    labels = (root / "cal" / "labels.tsv").read_bytes().splitlines(keepends=True)
    (tmp_path / "groups.tsv").write_bytes(b"".join(labels[:3]) + b"\xff\xfe" + labels[3])
    with pytest.raises(TraceFormatError, match="not UTF-8") as info:
        read_groups(tmp_path / "groups.tsv")
    assert info.value.path == str(tmp_path / "groups.tsv")
    (tmp_path / "twice.tsv").write_bytes(b"".join([*labels[:3], labels[1]]))
    with pytest.raises(TraceFormatError, match=r"grouped twice .*row 2") as info:
        read_groups(tmp_path / "twice.tsv")
    assert info.value.row == 4


def test_parquet_rows_are_checked_like_csv_rows(systems, tmp_path):
    """One checker for both formats: fractional or infinite counts in Parquet are refused as
    in CSV (never truncated), and a file that is not Parquet is named."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    root, _ = systems
    rows = read_rows([root / "corrupt.csv"])[:3]
    lines = (root / "corrupt.csv").read_text().splitlines()
    for column, value in (("satisfied", 0.5), ("obligations", 1.5), ("obligations", math.inf),
                          ("satisfied", None), ("obligations", True)):
        records = [{**row, column: value} for row in rows]
        path = tmp_path / "rows.parquet"
        pq.write_table(pa.Table.from_pylist(records), path)
        with pytest.raises(TraceFormatError, match="not a whole number") as info:
            read_rows([path])
        assert (info.value.path, info.value.row, info.value.column) == (str(path), 2, column)
        fields = lines[1].split(",")
        fields[-1 if column == "obligations" else -2] = "" if value is None else str(value)
        (tmp_path / "rows.csv").write_text("\n".join([lines[0], ",".join(fields)]) + "\n")
        with pytest.raises(TraceFormatError, match="not a whole number") as same:
            read_rows([tmp_path / "rows.csv"])
        assert same.value.message == info.value.message, value
    (tmp_path / "text.parquet").write_text("system,policy\n")
    with pytest.raises(TraceFormatError, match="not a Parquet file") as info:
        read_rows([tmp_path / "text.parquet"])
    assert info.value.path == str(tmp_path / "text.parquet")


def test_markdown_escapes_html_in_names_and_csv_keeps_them_exact(systems):
    """Markdown cells write &, <, > as entities (no renderer injects HTML from a name) and
    ordinary names byte for byte as before; CSV cells are the names exactly, formula-like or
    not (docs/report.md: the CSV files are data, not spreadsheets)."""
    root, _ = systems
    names = {"corrupt": "<script>alert(1)</script> & co", "perfect": "=HYPERLINK(\"x\")"}
    rows = [{**row, "system": names.get(row["system"], row["system"])}
            for row in read_rows([root / "corrupt.csv"])]
    vectors = next(t for t in report_tables(rows) if t.name == "vectors")
    markdown = vectors.markdown()
    assert "<script>" not in markdown and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" \
        in markdown
    assert {r["system"] for r in csv.DictReader(io.StringIO(vectors.csv()))} == \
        {names["corrupt"]}
    assert table_text("dog bark | cat's (1).wav") == "dog bark \\| cat's (1).wav"
    formula = [{**row, "system": names["perfect"]} for row in read_rows([root / "perfect.csv"])]
    logic = next(t for t in report_tables(formula) if t.name == "logic")
    assert logic.csv().splitlines()[1].startswith('"=HYPERLINK(""x"")",')
    # a coordinate name is a column of the group table; a class name is in the audit Markdown
    odd = [{**row, "coordinate": "<b>onset</b>"} if row["coordinate"] == "onset" else row
           for row in rows]
    groups = {row["clip"]: "g" for row in rows}
    by_group = next(t for t in report_tables(odd, groups) if t.name == "by_group")
    assert "<b>" not in by_group.markdown() and "&lt;b&gt;onset" in by_group.markdown()
    ref = sedcontract.EventList.from_rows([("a", 0.5, 1.0, "<img src=x onerror=alert(1)>")])
    text = to_markdown(sedcontract.audit(ref, ref, durations={"a": 4.0}))
    assert "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
