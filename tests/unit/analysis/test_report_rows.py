"""What the report reads besides the per-clip counts, and how it reads them: ranking rows carry
each system's PSDS, mAUC and mpAUC with the audit's bootstrap draws, so the report's intervals
and paired differences are those of ``psds``/``paired_psds`` and ``segment_auroc``/
``paired_auroc`` bit for bit; setting rows carry the policy; zero rows are left out without
changing any number; the fast reader and the csv module read the same rows; bad ranking and
setting rows are named; macro F1 follows a plain-loop oracle."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

import sedcontract
from sedcontract.analysis.ranking import rankings
from sedcontract.analysis.report import overview, report_files, report_tables
from sedcontract.analysis.source_rows import SourceRows, _fast, read_rows
from sedcontract.cli import main
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.guard import ScoreSettings, to_csv
from sedcontract.guard.render import policy_id
from sedcontract.resampling import resample_indices
from sedcontract.scores.psds.request import paired_psds, psds
from sedcontract.scores.segment_roc import paired_auroc, segment_auroc
from sedcontract.traces import EventList, read_events, write_durations, write_events
from tests.helpers.examples import random_reference
from tests.helpers.score_tables import corpus, write_tables


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """Two systems' score folders of one generated corpus (the second a noisier copy) and
    their rows, written by ``audit --format csv --bootstrap 60``."""
    root = tmp_path_factory.mktemp("scored")
    ref, noisy, durations, _ = corpus(11, clips=30, frames=150)
    tables = {}  # scores near 1 where a reference event of the class lies: PSDS well above 0
    rng = np.random.default_rng(4)
    for clip, t in noisy.items():
        s = t.scores / 2
        for c, on, off, label in ref.to_rows():
            if c == clip:
                inside = (t.onset < off) & (t.offset > on)
                s[inside, t.classes.index(label)] = rng.uniform(0.0, 1.0, int(inside.sum()))
        tables[clip] = type(t)(t.onset, t.offset, t.classes, np.round(s, 4), t.lines)
    write_events(root / "ref.tsv", ref)
    write_durations(root / "durations.tsv", durations)
    folders = {"a": write_tables(root / "a", tables), "b": write_tables(root / "b", noisy)}
    for name, folder in folders.items():
        assert main(["audit", "--ref", str(root / "ref.tsv"), "--durations",
                     str(root / "durations.tsv"), "--pred-scores", str(folder),
                     "--with-scores", "--bootstrap", "60", "--format", "csv", "--system", name,
                     "--out", str(root / f"{name}.csv")]) == 0
    return root, ref, durations, {"a": tables, "b": noisy}


def test_ranking_rows_give_the_audits_intervals_and_paired_differences_bit_for_bit(scored):
    root, _, durations, tables = scored
    ref = read_events(root / "ref.tsv")  # the clips in the order the audits read them
    rows = read_rows([root / "a.csv", root / "b.csv"])
    ov = overview(rows, resamples=60, seed=0, baseline="b")
    assert ov.ranking == ("psds1", "psds2", "mauc", "mpauc")
    for name in ("a", "b"):
        cells = ov.cells[next(k for k in ov.cells if k[0] == name)]["typed"]
        expected = psds(tables[name], ref, durations, resamples=60, seed=0)
        auroc = segment_auroc(tables[name], ref, durations, resamples=60, seed=0)
        for metric in ("psds1", "psds2"):
            want = expected[metric]["interval"]
            assert name == "b" or metric == "psds1" or want["lo"] < want["hi"]  # not flat
            got = cells[metric]
            assert (got.point, got.lo, got.hi, got.defined) == (
                expected[metric]["value"], want["lo"], want["hi"], want["defined"]), metric
        for metric in ("mauc", "mpauc"):
            want = auroc["intervals"][metric]
            assert (cells[metric].point, cells[metric].lo, cells[metric].hi) == (
                auroc[metric], want["lo"], want["hi"]), metric
        curves = rankings(rows)[next(k for k in ov.cells if k[0] == name)].curves["psds1"]
        for cls, staircase in expected["psds1"]["roc"]["classes"].items():
            efpr = np.asarray(staircase["efpr"])
            keep = efpr <= expected["psds1"]["settings"]["max_efpr"]
            assert np.array_equal(curves[cls][0], efpr[keep])
            assert np.array_equal(curves[cls][1], np.asarray(staircase["tpr"])[keep])
    difference = ov.comparison[next(k for k in ov.cells if k[0] == "a")]["typed"]
    paired = {**paired_psds(tables["a"], tables["b"], ref, durations, resamples=60, seed=0),
              **paired_auroc(tables["a"], tables["b"], ref, durations, resamples=60, seed=0)}
    for metric, want in paired.items():
        got = difference[metric]
        assert (got.point, got.lo, got.hi) == (want["point"], want["lo"], want["hi"]), metric
    # another seed in the report: its own draws for the counts, the audits' for the ranking
    key = next(k for k in ov.cells if k[0] == "a")
    other = overview(rows, resamples=60, seed=1)
    assert other.cells[key]["typed"]["psds1"] == ov.cells[key]["typed"]["psds1"]
    assert other.cells[key]["typed"]["onset"] != ov.cells[key]["typed"]["onset"]


def test_the_report_page_names_data_settings_and_ranking_metrics(scored):
    root, *_ = scored
    rows = read_rows([root / "a.csv", root / "b.csv"])
    files = report_files(rows, resamples=60, baseline="b")
    page = files["report.html"]
    assert "<h1>Guard vectors of 2 systems on 30 clips × 4 classes</h1>" in page
    assert "Settings: contract standard; eps 200ms; hop 0.02 s; matching (m) exact; decision " \
           "active iff score &gt; 0.5." in page
    assert ">PSDS1</th>" in page and ">mpAUC</th>" in page and "what DCASE ranks on" in page
    assert files["psd_roc_psds1.png"][:8] == b"\x89PNG\r\n\x1a\n"
    assert "psds1," in files["overview.csv"] and "event_macro_f1," in files["overview.csv"]
    assert "Ranking metrics (intervals from the audits' bootstrap draws, seed 0)" in \
        files["overview.md"]
    # each coordinate in words, on the baseline's counts
    assert "<li>b, typed traces — onset " in page and " reference onsets (" in page
    # without draws: values, no intervals, and said so
    no_draws = [r for r in rows if not r["clip"].startswith("resample:")]
    text = report_files(no_draws, resamples=60)["overview.md"]
    assert "the audits wrote no draws" in text


def full_rows(report, system):
    """Every (mode, clip, class, coordinate) row of a report, zero rows included: the rows
    before zero rows were left out (the oracle)."""
    policy = policy_id(report.policy)
    out = []
    for name, mode in report.modes.items():
        coordinates = [*((c, "guard") for c in report.coordinates),
                       *((c, "diagnostic") for c in mode.diagnostics)]
        for coordinate, role in coordinates:
            for i, (clip, cls) in enumerate(mode.rows):
                out.append({"system": system, "policy": policy, "mode": name, "clip": clip,
                            "class": "*" if cls is None else cls, "coordinate": coordinate,
                            "role": role, "sort": mode.sorts[coordinate],
                            "satisfied": int(mode.satisfied[coordinate][i]),
                            "obligations": int(mode.obligations[coordinate][i])})
    return out


def test_zero_rows_are_left_out_and_no_number_changes(tmp_path):
    ref = random_reference(3, 9)
    silent = EventList.from_rows(ref.to_rows(), clips=(*ref.clips, "silent_clip"))
    pred = EventList.from_rows([r for r in ref.to_rows() if r[3] != "tone"], clips=silent.clips)
    report = sedcontract.audit(silent, pred, durations=dict.fromkeys(silent.clips, 10.0))
    (tmp_path / "rows.csv").write_text(to_csv(report, "s"))
    sparse = read_rows([tmp_path / "rows.csv"])
    full = SourceRows.of(full_rows(report, "s"))
    counted = [r for r in sparse if r["role"] in ("guard", "diagnostic")]
    assert len(counted) < len(full)
    first = report.coordinates[0]
    zero = [r for r in counted if r["satisfied"] == r["obligations"] == 0]
    assert all(r["coordinate"] == first or r["clip"] == report.clips[0] for r in zero)
    # every clip (the silent one too) and class keeps its place, every coordinate is named
    assert [r["clip"] for r in counted if r["coordinate"] == first and r["mode"] == "typed"
            ][::len(report.facts.classes)] == list(report.clips)
    assert {r["coordinate"] for r in counted} == {r["coordinate"] for r in full}
    ours = {t.name: t.markdown() for t in report_tables(SourceRows.of(counted))}
    theirs = {t.name: t.markdown() for t in report_tables(full)}
    for name in ("logic", "vectors", "typed_vs_union", "per_class"):
        assert ours[name] == theirs[name], name
    assert overview(SourceRows.of(counted), resamples=40).cells == \
        overview(full, resamples=40).cells



def test_a_coordinate_zero_everywhere_keeps_its_rows_on_the_first_clip(tmp_path):
    """A system that detects nothing owes no ``false`` or ``merge`` obligation anywhere: those
    coordinates are 0 of 0 on every clip, yet each keeps its rows on the first clip, so the
    report still names them (as NaN of 0) rather than dropping them."""
    ref = random_reference(4, 6)
    nothing = EventList.from_rows([], clips=ref.clips)
    report = sedcontract.audit(ref, nothing, durations=dict.fromkeys(ref.clips, 10.0))
    full = full_rows(report, "s")
    zero = {c for c in {r["coordinate"] for r in full}
            if all(r["satisfied"] == r["obligations"] == 0 for r in full
                   if r["coordinate"] == c)}
    assert {"false", "merge"} <= zero and report.coordinates[0] not in zero
    (tmp_path / "rows.csv").write_text(to_csv(report, "s"))
    sparse = read_rows([tmp_path / "rows.csv"])
    for coordinate in zero:
        kept = [(r["mode"], r["clip"], r["class"]) for r in sparse
                if r["coordinate"] == coordinate]
        assert kept == [(r["mode"], r["clip"], r["class"]) for r in full
                        if r["coordinate"] == coordinate and r["clip"] == report.clips[0]]
    ours = {t.name: t.markdown() for t in report_tables(SourceRows.of(
        [r for r in sparse if r["role"] in ("guard", "diagnostic")]))}
    theirs = {t.name: t.markdown() for t in report_tables(SourceRows.of(full))}
    assert ours["vectors"] == theirs["vectors"] and "false" in ours["vectors"]

def test_the_fast_reader_and_the_csv_module_read_the_same_rows(tmp_path):
    """The file as written (fast path), with CRLF line ends and with a class name holding a
    comma and quotes (the csv module) give the same rows, settings and error-free read."""
    ref = random_reference(1, 5)
    renamed = EventList.from_rows([(c, a, b, 'tone, "loud"' if lab == "tone" else lab)
                                   for c, a, b, lab in ref.to_rows()], clips=ref.clips)
    report = sedcontract.audit(renamed, renamed, durations=dict.fromkeys(ref.clips, 10.0),
                               scores=ScoreSettings())
    text = to_csv(report, "s")
    (tmp_path / "lf.csv").write_text(text)
    (tmp_path / "crlf.csv").write_bytes(text.replace("\n", "\r\n").encode())
    assert _fast(text, tmp_path / "lf.csv") is not None  # quotes read line by line
    assert _fast(text.replace("\n", "\r\n"), tmp_path / "crlf.csv") is None  # the csv module
    a, b = read_rows([tmp_path / "lf.csv"]), read_rows([tmp_path / "crlf.csv"])
    assert a.vocab == b.vocab
    assert len(a) == len(b) and a.settings == b.settings and a.settings
    assert all(x == y or (math.isnan(x["value"]) and math.isnan(y["value"])
                          and {**x, "value": 0} == {**y, "value": 0})
               for x, y in zip(a, b, strict=True))
    assert 'tone, "loud"' in a.vocab["class"]


def test_bad_ranking_and_setting_rows_are_named(scored, tmp_path):
    root, *_ = scored
    lines = (root / "a.csv").read_text().splitlines()
    header, count = lines[0], lines[1]
    ranking = next(line for line in lines if ",ranking:psds1,ranking," in line)
    setting = next(line for line in lines if ",setting:eps," in line)
    cases = {
        "inf": (ranking.rsplit(",", 1)[0] + ",inf", "not a finite number", "value"),
        "above one": (ranking.rsplit(",", 1)[0] + ",7.5",  # a curve area of 7.5 once passed
                      r"ranking:psds1 7\.5: a ranking metric lies in \[0, 1\]", "value"),
        "below zero": (ranking.rsplit(",", 1)[0] + ",-0.1", "lies in", "value"),
        "counted": (ranking.replace(",ranking,corpus,,,", ",ranking,corpus,1,2,"),
                    "holds its number in value", "satisfied"),
        "valued": (count.rstrip(",") + ",0.5", "value is for ranking rows", "value"),
        "setting": (setting.replace(",setting,corpus,,,", ",setting,corpus,3,,"),
                    "holds its text in value", "satisfied"),
    }
    for name, (line, message, column) in cases.items():
        path = tmp_path / f"{name}.csv"
        path.write_text("\n".join([header, line]) + "\n")
        with pytest.raises(TraceFormatError, match=message) as info:
            read_rows([path])
        assert (info.value.path, info.value.row, info.value.column) == (str(path), 2, column)
    other = tmp_path / "other.csv"
    other.write_text("\n".join([header, setting.replace(",200ms", ",100ms")]) + "\n")
    with pytest.raises(TraceFormatError, match=r"setting:eps of system a .* is '100ms' here "
                                               r"and '200ms' in .*a\.csv row ") as info:
        read_rows([root / "a.csv", other])
    assert (info.value.path, info.value.row) == (str(other), 2)
    draw = next(line for line in lines if ",resample:3,*,ranking:mauc," in line)
    hostile = {  # each refused by file, row and column, before anything is allocated for it
        "far": (draw.replace("resample:3", "resample:1000000000000"), "clip", "draw 10"),
        "zero": (draw.replace("resample:3", "resample:03"), "clip", "no leading zero"),
        "digit": (draw.replace("resample:3", "resample:\u00b3"), "clip", "no leading zero"),
        "union": (draw.replace(",typed,", ",union,"), "mode", "of mode typed"),
        "class": (draw.replace(",*,ranking:mauc,", ",c0,ranking:mauc,"), "class", "class \\*"),
        "name": (draw.replace("ranking:mauc", "ranking:x/../../y/efpr"), "coordinate",
                 "letters, digits"),
    }
    settings = [line for line in lines if ",setting," in line]
    for name, (line, column, message) in hostile.items():
        path = tmp_path / f"{name}.csv"
        path.write_text("\n".join([header, *settings, line]) + "\n", encoding="utf-8")
        with pytest.raises(TraceFormatError, match=message) as info:
            read_rows([path])
        assert (info.value.path, info.value.row, info.value.column) == \
            (str(path), len(settings) + 2, column), name
    # a setting row in a file without the value column, and the value column named twice
    short = tmp_path / "short.csv"
    short.write_text("\n".join([header.rsplit(",", 1)[0], setting.rsplit(",", 1)[0]]) + "\n")
    with pytest.raises(TraceFormatError, match="which this file lacks") as info:
        read_rows([short])
    assert (info.value.row, info.value.column) == (2, "value")
    twice = tmp_path / "twice.csv"
    twice.write_text("\n".join([header + ",value", count + ","]) + "\n")
    with pytest.raises(TraceFormatError, match="names column 'value' twice"):
        read_rows([twice])


def test_the_draws_seed_is_kept_exactly_and_hostile_counts_do_not_wrap(scored, tmp_path):
    """The seed of the ranking draws is a setting (text), so a seed past 2^53 reads back as
    itself; counts whose resampled sums could pass 2^63 − 1 are refused, not wrapped."""
    root, *_ = scored
    text = (root / "a.csv").read_text().replace("setting:draws.seed,setting,corpus,,,0",
                                                "setting:draws.seed,setting,corpus,,,"
                                                "9007199254740993")
    (tmp_path / "seeded.csv").write_text(text)
    assert rankings(read_rows([tmp_path / "seeded.csv"]))[
        next(iter(rankings(read_rows([root / "a.csv"]))))].seed == 9007199254740993
    lines = (root / "a.csv").read_text().splitlines()
    count = next(line for line in lines if ",onset,guard," in line)
    fields = count.split(",")
    big = ",".join([*fields[:-3], str(2**62), str(2**62), ""])
    other = ",".join([*fields[:3], "other_clip", *fields[4:-3], "0", "1", ""])
    (tmp_path / "big.csv").write_text("\n".join([lines[0], big, other]) + "\n")
    rows = read_rows([tmp_path / "big.csv"])
    with pytest.raises(SedContractError, match="too large to resample"):
        overview(rows, resamples=50)


def test_a_systems_intervals_do_not_depend_on_the_other_files_given(tmp_path):
    """Two systems whose rows name the clips in different orders: each one's intervals are
    its own audit's (drawn in its own order) whether it is reported alone or beside the
    other, and the paired difference draws both in the baseline's order."""
    ref = random_reference(5, 12)
    reversed_ref = EventList.from_rows(ref.to_rows(), clips=tuple(reversed(ref.clips)))
    pred = EventList.from_rows([r for r in ref.to_rows() if r[1] > 2], clips=ref.clips)
    durations = dict.fromkeys(ref.clips, 10.0)
    a = sedcontract.audit(ref, pred, durations=durations)
    b = sedcontract.audit(reversed_ref, EventList.from_rows(pred.to_rows(),
                                                            clips=reversed_ref.clips),
                          durations=durations)
    (tmp_path / "a.csv").write_text(to_csv(a, "a"))
    (tmp_path / "b.csv").write_text(to_csv(b, "b"))
    alone = overview(read_rows([tmp_path / "b.csv"]), resamples=50, seed=3)
    both = overview(read_rows([tmp_path / "a.csv", tmp_path / "b.csv"]), resamples=50, seed=3,
                    baseline="a")
    key = next(k for k in both.cells if k[0] == "b")
    assert both.cells[key] == alone.cells[key]
    from sedcontract.guard import bootstrap_intervals

    assert both.cells[key]["typed"]["onset"] == bootstrap_intervals(
        b, resamples=50, seed=3)["onset"]
    same = {m: iv for m, iv in both.comparison[key]["typed"].items()}
    assert same["missed"].point == 0 and same["missed"].lo == same["missed"].hi == 0


def test_macro_f1_is_the_mean_over_classes_with_references_and_resamples_like_it(tmp_path):
    ref = random_reference(2, 14)
    pred = EventList.from_rows([r for r in ref.to_rows() if r[3] != "speech" or r[1] > 3],
                               clips=ref.clips)
    report = sedcontract.audit(ref, pred, durations=dict.fromkeys(ref.clips, 10.0),
                               scores=ScoreSettings())
    (tmp_path / "rows.csv").write_text(to_csv(report, "s"))
    ov = overview(read_rows([tmp_path / "rows.csv"]), resamples=80, seed=2)
    cells = ov.cells[next(iter(ov.cells))]["typed"]
    for name, result in report.scores.items():
        iv = cells[f"{name}_macro_f1"]
        assert iv.point == result.macro("f1")[0], name  # bit for bit
        values = []
        for draw in resample_indices(len(ref.clips), 80, 2):
            tp, n_ref, n_sys = (getattr(result, k)[draw].sum(axis=0)
                                for k in ("tp", "ref", "sys"))
            f1 = [2 * t / (r + s) for t, r, s in zip(tp, n_ref, n_sys, strict=True) if r]
            values.append(sum(f1) / len(f1) if f1 else math.nan)
        known = [v for v in values if not math.isnan(v)]
        lo, hi = np.quantile(known, (0.025, 0.975))
        assert iv.lo == pytest.approx(lo, abs=1e-12) and iv.hi == pytest.approx(hi, abs=1e-12)


def test_a_count_above_its_obligations_is_refused_by_the_fast_reader_too(scored, tmp_path):
    """Blind spot: a file the fast reader takes whole (plain counts, no blank cell) with one
    ``satisfied`` above its ``obligations`` is refused by row and column, not read."""
    root, *_ = scored
    header, *body = (root / "a.csv").read_text().splitlines()
    columns = header.split(",")
    k = next(i for i, line in enumerate(body)
             if (cells := line.split(","))[columns.index("obligations")] not in ("", "0"))
    cells = body[k].split(",")
    cells[columns.index("satisfied")] = str(int(cells[columns.index("obligations")]) + 1)
    body[k] = ",".join(cells)
    path = tmp_path / "over.csv"
    path.write_text("\n".join([header, *body]) + "\n")
    with pytest.raises(TraceFormatError, match="satisfied") as info:
        read_rows([path])
    assert (info.value.path, info.value.row) == (str(path), k + 2)


def test_the_per_class_table_gives_each_classs_f1_and_ranking_metrics(scored, tmp_path):
    """Beside each class's guard vector, each standard score's F1 of the class and its PSDS
    and (partial) AUROC: the per-class values ``scores`` and ``psds`` / ``segment_auroc``
    give on the same files, read from the rows alone."""
    root, ref, durations, systems = scored
    assert main(["report", str(root / "a.csv"), str(root / "b.csv"), "--out",
                 str(tmp_path / "r"), "--bootstrap", "0"]) == 0
    table = {(r["class"], r["system"]): r for r in
             csv.DictReader((tmp_path / "r" / "per_class.csv").open())}
    classes = sorted({c for c, _ in table})
    columns = next(iter(table.values()))
    assert [c for c in columns if c.endswith("_f1")][:3] == ["event_f1", "frame_f1",
                                                             "intersection_f1"]
    assert {"psds1", "psds2", "mauc", "mpauc"} <= set(columns)
    for name, tables in systems.items():
        assert main(["scores", "--ref", str(root / "ref.tsv"), "--durations",
                     str(root / "durations.tsv"), "--pred-scores", str(root / name),
                     "--format", "json", "--out", str(tmp_path / f"{name}.json")]) == 0
        scores = json.loads((tmp_path / f"{name}.json").read_text())
        psds = sedcontract.psds(tables, ref, durations)
        auroc = segment_auroc(tables, ref, durations)
        for cls in classes:
            row = table[(cls, name)]
            for score in ("event", "intersection", "segment"):
                want = scores["scores"][score]["per_class"][cls]["f1"]
                assert float(row[f"{score}_f1"]) == pytest.approx(want, abs=1e-4), (cls, score)
            for scenario in ("psds1", "psds2"):
                assert float(row[scenario]) == pytest.approx(
                    psds[scenario]["per_class"][cls], abs=1e-4), (cls, scenario)
            assert float(row["mpauc"]) == pytest.approx(
                auroc["per_class"][cls]["pauc"], abs=1e-4), cls
