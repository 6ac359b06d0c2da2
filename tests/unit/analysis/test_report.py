"""Reports regenerated from source rows: the same rows give the same bytes; the HTML parses,
embeds its figure and shows the numbers the audit computed; groups split the vectors; bad
rows (missing columns, counts out of range, repeated rows, mixed policies) name file and row.
The overview's bootstrap intervals and paired differences from rows are the audit's own
(bit for bit), logic per resample follows a plain-loop oracle, the page opens with the
overview, the figure fits its page and the colours keep text readable."""

from __future__ import annotations

import csv
import io
import math
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import sedcontract
from sedcontract.analysis.report import (
    colour,
    overview,
    overview_csv,
    overview_markdown,
    read_groups,
    read_rows,
    report_tables,
    vectors_figure,
    vectors_png,
)
from sedcontract.cli import main
from sedcontract.data import pathology_set, write_pathology_set
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.figures import pyplot
from sedcontract.guard import (
    ScoreSettings,
    bootstrap_intervals,
    paired_bootstrap,
    to_csv,
    to_markdown,
)
from sedcontract.guard.render import table_text
from sedcontract.resampling import resample_indices
from tests.helpers.examples import DURATION, reference


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
        "range.csv": ([lines[0], lines[1].rsplit(",", 3)[0] + ",5,3,"], "outside 0", 2),
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
    settings = [line for line in lines if ",setting," in line]  # kept apart, not as rows
    both = read_rows([root / "corrupt.csv", tmp_path / "other.csv"], several_policies=True)
    assert len(both) == len(lines) - len(settings) and settings
    assert both.settings[("corrupt", lines[1].split(",")[1])]["setting:eps"] == "200ms"
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
    from sedcontract.analysis.sweep import read_sweep, sweep_csv

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
    with pytest.raises(TraceFormatError, match="3 fields; the header has 11") as info:
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
        fields[-2 if column == "obligations" else -3] = "" if value is None else str(value)
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


# -- the overview: intervals from the rows ---------------------------------------------------


def test_the_overview_is_the_audits_bootstrap_bit_for_bit(systems):
    """From rows alone, each system's intervals (coordinates, logic, standard-score F1, both
    modes) are bootstrap_intervals of its audit: the same draws, the same definition."""
    root, audits = systems
    rows = read_rows([root / "corrupt.csv", root / "perfect.csv"])
    ov = overview(rows, resamples=300, seed=5, level=0.9)
    assert ov.guard == tuple(audits["corrupt"].coordinates) and ov.resamples == 300
    for name, audit in audits.items():
        key = next(k for k in ov.cells if k[0] == name)
        for mode in ("typed", "union"):
            want = bootstrap_intervals(audit, mode=mode, resamples=300, seed=5, level=0.9)
            got = ov.cells[key][mode]
            expected = want if mode == "typed" else \
                {n: iv for n, iv in want.items() if not n.endswith("_f1")}
            assert {n: iv for n, iv in got.items() if not n.endswith("_macro_f1")} == \
                expected, (name, mode)
    assert any(iv.lo < iv.hi for iv in ov.cells[("corrupt", key[1])]["typed"].values())


def test_the_comparison_is_the_paired_bootstrap_of_the_audits(systems, tmp_path):
    """--baseline perfect: corrupt − perfect per coordinate and logic, typed and union, is
    paired_bootstrap of the two audits; comparison.csv holds the same numbers."""
    root, audits = systems
    assert report(root, tmp_path / "c", "--baseline", "perfect", "--bootstrap", "400",
                  "--bootstrap-seed", "3") == 0
    with open(tmp_path / "c" / "comparison.csv") as f:
        found = {(r["mode"], r["name"]): r for r in csv.DictReader(f)}
    assert {r["system"] for r in found.values()} == {"corrupt"}
    for mode in ("typed", "union"):
        want = paired_bootstrap(audits["corrupt"], audits["perfect"], mode=mode,
                                resamples=400, seed=3)
        for name, iv in want.items():
            row = found[(mode, name)]
            got = [float(row[c]) if row[c] else math.nan for c in ("score", "lo", "hi")]
            assert all((math.isnan(x) and math.isnan(y)) or x == y
                       for x, y in zip(got, (iv.point, iv.lo, iv.hi), strict=True)), name
            assert (int(row["defined"]), int(row["resamples"])) == (iv.defined, 400)
    assert float(found[("typed", "onset")]["hi"]) < 0  # the late onsets cost onset score
    text = (tmp_path / "c" / "overview.md").read_text()
    assert "**Paired differences: each system minus perfect**" in text and " ↓ |" in text



def test_the_comparison_pairs_micro_and_macro_f1_on_the_same_draws(systems):
    """Each standard score's micro and macro F1, corrupt − perfect, with a paired interval:
    a plain loop over the same draws (resample_indices, in the baseline's clip order) sums
    each system's per-clip counts of the score rows (per class for macro: the mean over
    classes with references) and takes the percentile interval of the differences; rows
    naming the clips in another order are drawn in the baseline's."""
    root, _ = systems
    rows = read_rows([root / "corrupt.csv", root / "perfect.csv"])
    classes = sorted({r["class"] for r in rows if r["role"] == "score"})

    def per_clip(rows, clips):
        per: dict = {}  # (system, score) -> [clips, classes, (tp, ref, sys)]
        for r in rows:
            if r["role"] == "score":
                name, part = r["coordinate"].removeprefix("score:").split("/")
                cell = per.setdefault((r["system"], name),
                                      np.zeros((len(clips), len(classes), 3)))
                at = (clips.index(r["clip"]), classes.index(r["class"]))
                cell[at][0] = r["satisfied"]
                cell[at][1 if part == "recall" else 2] = r["obligations"]
        return per

    def f1s(counts):
        tp, ref, sys_ = counts.sum(axis=0).T
        macro = np.mean([2 * t / (r + s) for t, r, s in zip(tp, ref, sys_, strict=True) if r])
        return 2 * tp.sum() / (ref.sum() + sys_.sum()), macro

    def check(rows, baseline_clips):
        ov = overview(rows, resamples=300, seed=4, level=0.9, baseline="perfect")
        got = next(v for k, v in ov.comparison.items() if k[0] == "corrupt")["typed"]
        per = per_clip(rows, baseline_clips)
        for name in ov.scores:
            a, b = per[("corrupt", name)], per[("perfect", name)]
            diffs = np.array([np.subtract(f1s(a[d]), f1s(b[d]))
                              for d in resample_indices(len(baseline_clips), 300, 4)])
            for column, label in enumerate((f"{name}_f1", f"{name}_macro_f1")):
                iv = got[label]
                assert iv.point == pytest.approx(np.subtract(f1s(a), f1s(b))[column])
                lo, hi = np.percentile(diffs[:, column], [5, 95])
                assert (iv.lo, iv.hi) == (pytest.approx(lo), pytest.approx(hi)), label
        return got

    clips = list(dict.fromkeys(r["clip"] for r in rows if r["clip"] != "*"))
    got = check(rows, clips)
    assert got["event_macro_f1"].hi < 0 and len([n for n in got if n.endswith("_f1")]) == 12
    perfect = sorted((r for r in rows if r["system"] == "perfect"),
                     key=lambda r: r["clip"] != clips[-1])  # the baseline in another order
    moved = [clips[-1], *clips[:-1]]
    check([*(r for r in rows if r["system"] == "corrupt"), *perfect], moved)

def rows_with(rows: list[dict], changes: dict[str, set[str] | None]) -> list[dict]:
    """The rows with the named coordinates' counts zeroed, in every clip (None) or in every
    clip but the given ones."""
    out = []
    for row in rows:
        keep = changes.get(row["coordinate"], ())
        if row["coordinate"] in changes and (keep is None or row["clip"] not in keep):
            row = {**row, "satisfied": 0, "obligations": 0}
        out.append(row)
    return out


def test_logic_per_resample_is_the_mean_of_its_non_vacuous_coordinates(systems):
    """A plain-loop oracle from the rows: each resample sums the drawn clips' counts (the
    draws of resample_indices), scores them and takes logic as the mean of the coordinates
    with obligations in it. Fragmentation obliged in two clips only is vacuous in some
    resamples (left out, counted) and duration in none (vacuous: NaN, never 1)."""
    root, _ = systems
    rows = read_rows([root / "corrupt.csv"])
    clips = list(dict.fromkeys(r["clip"] for r in rows))
    rows = rows_with(rows, {"fragmentation": {clips[0], clips[1]}, "duration": None})
    ov = overview(rows, resamples=200, seed=9)
    cells = next(iter(ov.cells.values()))["typed"]
    guard = [r for r in rows if r["role"] == "guard" and r["mode"] == "typed"]
    names = list(dict.fromkeys(r["coordinate"] for r in guard))
    per_clip = np.zeros((len(clips), 2, len(names)), dtype=np.int64)
    for r in guard:
        cell = per_clip[clips.index(r["clip"]), :, names.index(r["coordinate"])]
        cell += (r["satisfied"], r["obligations"])
    values = {n: [] for n in (*names, "logic")}
    for draw in resample_indices(len(clips), 200, 9):
        sat, obl = per_clip[draw].sum(axis=0)
        scores = [s / o for s, o in zip(sat, obl, strict=True) if o]
        for name, s, o in zip(names, sat, obl, strict=True):
            if o:
                values[name].append(s / o)
        values["logic"].append(sum(scores) / len(scores))
    for name, got in values.items():
        iv = cells[name]
        assert iv.defined == len(got), name
        if got:
            lo, hi = np.quantile(got, (0.025, 0.975))
            assert iv.lo == pytest.approx(lo, abs=1e-12) and iv.hi == pytest.approx(hi,
                                                                                   abs=1e-12)
    assert 0 < cells["fragmentation"].undefined < 200
    duration = cells["duration"]
    assert math.isnan(duration.point) and math.isnan(duration.lo) and duration.defined == 0
    others = [iv.point for n, iv in cells.items() if n in names and n != "duration"]
    assert cells["logic"].point == pytest.approx(sum(others) / len(others), abs=1e-15)
    text = overview_csv(ov)
    assert ",typed,duration,,,,0.95,0,200\n" in text
    assert "| vacuous |" in overview_markdown(ov)


def test_the_html_opens_with_the_overview_then_figures_then_folded_tables(systems, tmp_path):
    """The first table is the overview (a cell per system, mode and coordinate or logic,
    score and interval, a background by value); the figure comes after it; every other table
    is inside a <details>, folded."""
    root, _ = systems
    assert report(root, tmp_path / "h", "--baseline", "perfect", "--bootstrap", "200") == 0
    page = Outline()
    page.feed((tmp_path / "h" / "report.html").read_text())
    tables = [e for e in page.events if e[0] == "table"]
    assert tables[0][1].get("class") == "overview" and "details" not in tables[0][2]
    overviews = [t for t in tables if t[1].get("class") == "overview"]
    assert len(overviews) == 6  # guard vectors, standard scores, typed and union differences,
    # and the standard scores' micro and macro F1 differences
    assert all("details" in t[2] for t in tables if t[1].get("class") != "overview")
    first_image = next(i for i, e in enumerate(page.events) if e[0] == "img")
    details = [(i, e) for i, e in enumerate(page.events) if e[0] == "details"]
    # the per-class vectors come unfolded before the figures; every other table after, folded
    assert [e[1].get("id") for _, e in details if "open" in e[1]] == ["per_class"]
    assert page.events.index(tables[3]) < details[0][0] < first_image < details[1][0]
    cells = [e[1] for e in page.events if e[0] == "td" and "overview" in e[3]]
    # vectors, micro and macro F1 of 6 scores, differences of both
    assert len(cells) == 2 * 2 * 8 + 2 * 6 * 2 + 2 * 8 + 6 * 2
    coloured = [c for c in cells if c.get("class", "").startswith("cell")]
    assert all(c["style"].startswith("background:#") and "interval" in c["title"]
               for c in coloured)
    first = next(e[1] for e in page.events if e[0] == "td" and "overview" in e[3])
    assert first["title"].startswith("corrupt, typed onset: ")


class Outline(HTMLParser):
    """Start tags in order, each with its attributes, the tags it sits in and the classes of
    the tables it sits in."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, dict, tuple[str, ...], tuple[str, ...]]] = []
        self.stack: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        attributes = {k: v or "" for k, v in attrs}
        self.events.append((tag, attributes, tuple(t for t, _ in self.stack),
                            tuple(c for t, c in self.stack if t == "table")))
        if tag not in ("meta", "img", "br"):
            self.stack.append((tag, attributes.get("class", "")))

    def handle_endtag(self, tag):
        assert self.stack.pop()[0] == tag


def test_without_intervals_and_with_another_seed(systems, tmp_path):
    """--bootstrap 0: the overview shows the scores alone; another seed changes the
    intervals and nothing else."""
    root, audits = systems
    assert report(root, tmp_path / "none", "--bootstrap", "0") == 0
    html_text = (tmp_path / "none" / "report.html").read_text()
    assert "No intervals (--bootstrap 0)" in html_text and 'class="iv"' not in html_text
    with open(tmp_path / "none" / "overview.csv") as f:
        rows = list(csv.DictReader(f))
    assert all(r["lo"] == r["hi"] == "" and r["resamples"] == "0" for r in rows)
    onset = next(r for r in rows if (r["system"], r["mode"], r["name"]) ==
                 ("corrupt", "typed", "onset"))
    assert float(onset["score"]) == audits["corrupt"].vector("typed")["onset"]
    assert report(root, tmp_path / "s1", "--bootstrap-seed", "1") == 0
    assert report(root, tmp_path / "s2", "--bootstrap-seed", "2") == 0
    differ = {p.name for p in (tmp_path / "s1").iterdir()
              if p.read_bytes() != (tmp_path / "s2" / p.name).read_bytes()}
    assert differ == {"overview.md", "overview.csv", "report.html", "vectors.png"}


def test_a_baseline_that_cannot_be_compared_is_refused_by_name(systems, tmp_path, capsys):
    root, _ = systems
    rows = read_rows([root / "corrupt.csv", root / "perfect.csv"])
    clips = list(dict.fromkeys(r["clip"] for r in rows))
    with pytest.raises(SedContractError, match=r"no system of that name .*corrupt, perfect"):
        overview(rows, baseline="nobody")
    fewer = [r for r in rows if not (r["system"] == "corrupt" and r["clip"] in clips[:7])]
    with pytest.raises(SedContractError) as info:
        overview(fewer, baseline="perfect")
    message = str(info.value)
    assert "system corrupt is not of the baseline's clips" in message
    assert f"lacks 7 clip(s) of the baseline: {clips[0]!r}" in message and "(7 in all)" in message
    with pytest.raises(SedContractError, match=r"has 7 clip\(s\) the baseline lacks"):
        overview(fewer, baseline="corrupt")
    with pytest.raises(SedContractError, match="no other system"):
        overview([r for r in rows if r["system"] == "perfect"], baseline="perfect")
    with pytest.raises(SedContractError, match="give --bootstrap N"):
        overview(rows, resamples=0, baseline="perfect")
    assert report(root, tmp_path / "r", "--bootstrap", "-1") == 2
    assert "argument --bootstrap: -1 resamples: give 0 (none)" in capsys.readouterr().err
    assert report(root, tmp_path / "r", "--level", "1.5") == 2
    assert "level must be a number strictly between 0 and 1" in capsys.readouterr().err


def many_systems(rows: list[dict], count: int) -> list[dict]:
    """``count`` copies of a system's rows under other names, each with other counts."""
    rng = np.random.default_rng(0)
    out = []
    for s in range(count):
        for row in rows:
            obl = row["obligations"]
            out.append({**row, "system": f"system_{s:02d}",
                        "satisfied": int(rng.integers(0, obl + 1)) if obl else 0})
    return out


def test_the_figure_fits_a_1200_px_page_and_its_legend_covers_no_bar(systems):
    """Both panels and their tick labels inside the figure, the legend outside every panel,
    1200 px wide however many systems; a vacuous score draws no bar."""
    root, _ = systems
    rows = many_systems(read_rows([root / "corrupt.csv"]), 10)
    rows = rows_with(rows, {"duration": None})
    tables = report_tables(rows)
    vectors = next(t for t in tables if t.name == "vectors")
    fig = vectors_figure(vectors, overview(rows, resamples=50))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert fig.get_size_inches()[0] * 100 == 1200 and len(fig.axes) == 2
    legend = fig.legends[0].get_window_extent(renderer)
    page = fig.bbox
    for ax in fig.axes:
        box = ax.get_tightbbox(renderer)
        assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 <= box.y1 <= page.y1
        assert not legend.overlaps(ax.get_window_extent(renderer))
        bars = [p for p in ax.patches if p.get_height() > 0]
        assert len(bars) == 10 * 6  # duration is vacuous: no bar for any system
    assert len(fig.legends[0].get_texts()) == 10
    assert [t.get_text() for t in fig.legends[0].get_texts()][:2] == ["system_00", "system_06"]
    pyplot().close(fig)
    assert vectors_png(vectors)[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_colour_scale_keeps_black_text_readable():
    """0 light orange, 0.5 near white, 1 light blue, linear between, clipped; vacuous grey;
    black text on any of them has a WCAG contrast of at least 7."""
    assert (colour(0.0), colour(0.5), colour(1.0)) == ("#f4a582", "#f7f7f7", "#92c5de")
    assert colour(-1.0) == colour(0.0) and colour(2.0) == colour(1.0)
    assert colour(math.nan) == "#e4e4e4" and colour(0.25) == "#f6cebc"  # halfway, 188.5 to even

    def luminance(hex_colour: str) -> float:
        c = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        c = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
    for value in [*np.linspace(0, 1, 101), math.nan]:
        assert (luminance(colour(value)) + 0.05) / 0.05 >= 7, value


def test_the_overview_of_ten_systems_over_420_clips_is_the_audits_bootstrap():
    """1000 resamples for 10 systems × 420 clips × 3 classes from their rows: the interval of
    each system is bootstrap_intervals of its audit."""
    from sedcontract.guard import to_rows
    from tests.helpers.reports import random_counts, synthetic

    rng = np.random.default_rng(2)
    rows = []
    for s in range(10):
        report_s = synthetic(420, random_counts(rng, 420, 0.1))
        rows += [{**r, "system": f"s{s}"} for r in to_rows(report_s)]
    ov = overview(rows, resamples=1000, seed=0, baseline="s0")
    assert len(ov.cells) == 10 and len(ov.comparison) == 9
    assert all(iv.resamples == 1000 for c in ov.cells.values() for iv in c["union"].values())
    want = bootstrap_intervals(synthetic(420, random_counts(np.random.default_rng(2), 420, 0.1)),
                               mode="union", resamples=1000)
    assert ov.cells[("s0", rows[0]["policy"])]["union"] == want


def test_a_difference_whose_interval_ends_exactly_at_zero_gets_no_direction_mark():
    """↑/↓ (and the HTML cell's green/orange) mark an interval strictly on one side of 0:
    [0, x] and [x, 0] include 0, so they are not marked; a hair past 0 is."""
    from sedcontract.analysis.report.html import html_cell
    from sedcontract.guard import Interval
    from sedcontract.guard.render import direction, interval_text

    def iv(lo: float, hi: float) -> Interval:
        return Interval((lo + hi) / 2, lo, hi, 0.95, 100, 100)

    plain = "#ffffff"
    for tie in (iv(0.0, 0.25), iv(-0.25, 0.0), iv(0.0, 0.0), iv(-0.0, 0.25)):
        assert direction(tie) == "" and not tie.excludes_zero, tie
        assert interval_text(tie, signed=True).endswith("]"), tie  # no mark after the bounds
        assert f"background:{plain}" in html_cell(tie, "x", signed=True), tie
    up, down = iv(1e-12, 0.25), iv(-0.25, -1e-12)
    assert direction(up) == " ↑" and direction(down) == " ↓"
    assert up.excludes_zero and down.excludes_zero
    assert interval_text(up, signed=True) == "+0.125 [+0.000, +0.250] ↑"
    assert interval_text(iv(0.0, 0.25), signed=True) == "+0.125 [+0.000, +0.250]"
    assert "background:#b8e0c2" in html_cell(up, "x", signed=True)
    assert "background:#f6c6a8" in html_cell(down, "x", signed=True)


def test_systems_whose_psd_rocs_coincide_each_stay_visible():
    """Two systems with the same PSD-ROC (the same scores thresholded apart: PSDS does not
    read the threshold) and a third: every system's colour is on the figure, because the
    lines are drawn widest first (a narrower line on top leaves the wider one's edges). Drawn
    at one width, the last system would hide the first."""
    from matplotlib.colors import to_rgb
    from matplotlib.image import imread

    from sedcontract.analysis.ranking import Ranking
    from sedcontract.analysis.report.figures import line_width, psd_roc_classes_png

    x, y = np.array([0.0, 20.0, 50.0]), np.array([0.2, 0.5, 0.8])
    same = {"psds1": {"Dog": (x, y)}}
    ranked = {("a", "p"): Ranking(per_class={"psds1": {"Dog": 0.5}}, curves=same),
              ("b", "p"): Ranking(per_class={"psds1": {"Dog": 0.5}}, curves=same),
              ("c", "p"): Ranking(per_class={"psds1": {"Dog": 0.4}},
                                  curves={"psds1": {"Dog": (x, y * 0.5)}})}
    colours = {"a": "#1f77b4", "b": "#ff7f0e", "c": "#2ca02c"}
    image = imread(io.BytesIO(psd_roc_classes_png(ranked, "psds1", colours, False, 100.0)))
    pixels = image[..., :3].reshape(-1, 3)
    for name, shade in colours.items():
        near = np.abs(pixels - np.array(to_rgb(shade))).max(axis=1) < 0.1
        assert near.sum() > 1000, name  # a line's worth of pixels, not a legend swatch alone
    assert line_width(0, 3) > line_width(1, 3) > line_width(2, 3) == line_width(0, 1) == 1.5
    assert line_width(0, 10) == 8.5
