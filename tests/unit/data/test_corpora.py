"""Real corpora on miniature fixtures in their exact public layouts: MAESTRO Real soft labels
to hard references (hand-computed), windows and their merge, the DCASE 2024 Task 4 baseline's
score directory ingested with a class map (a hand-computed vector), and every bad input named
by file and row."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
import soundfile

from sedcontract.analysis.confidence import STRATA, by_confidence
from sedcontract.cli import main
from sedcontract.data.dcase_baseline import CLASS_MAPS
from sedcontract.data.desed import CLASSES as DESED_CLASSES
from sedcontract.data.maestro import CLASSES, EVALUATED, folds, index_corpus, read_corpus
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.guard import AuditPolicy, audit
from sedcontract.traces import EventList, read_events
from sedcontract.traces.classmap import read_class_map
from sedcontract.traces.score_files import (
    DecisionPolicy,
    read_score_dir,
    scores_tsv,
    tables_to_events,
)
from sedcontract.traces.soft import read_soft_tsv
from sedcontract.traces.windows import Piece, overlap_average, parse_window_id, window_starts
from tests.helpers.corpora import (
    BASELINE_COLUMNS,
    MAESTRO_EVENTS,
    MAESTRO_FILES,
    write_baseline,
    write_maestro,
)

DESED_MAP, MAESTRO_MAP = CLASS_MAPS["desed"], CLASS_MAPS["maestro"]
MAESTRO_DURATIONS = {f: d for f, (_, d, _) in MAESTRO_FILES.items()}


def events_of(rows):
    return sorted((c, round(a, 6), round(b, 6), lab) for c, a, b, lab in rows)


def maestro_by_file():
    out: dict[str, list] = {}
    for clip, on, off, label in MAESTRO_EVENTS:
        out.setdefault(clip, []).append((on, off, label))
    return out


@pytest.fixture
def maestro(tmp_path, capsys):
    """The MAESTRO tree, what ``sedcontract data maestro`` makes of it, and what it says."""
    root = write_maestro(tmp_path / "maestro")
    out = tmp_path / "prepared"
    assert main(["data", "maestro", "--root", str(root), "--out", str(out)]) == 0
    return root, out, capsys.readouterr().out


# -- MAESTRO Real ------------------------------------------------------------------------------
def test_soft_labels_give_the_hand_computed_reference(maestro):
    root, out, said = maestro
    assert "2 files, 11 classes, 5 hard reference events" in said
    ref = read_events(out / "maestro_real.tsv")
    assert events_of(ref.to_rows()) == events_of(MAESTRO_EVENTS)
    durations = (out / "maestro_real_durations.tsv").read_text().split()
    assert durations[2:] == ["cafe_restaurant_00.wav", "12.0", "metro_station_01.wav", "9.5"]
    # soft > 0.5 strictly: the 0.5 segment of 'people talking' (3–4 s) splits its events
    corpus = read_corpus(root, classes="all")
    assert ("cafe_restaurant_00", 6.0, 7.0, "furniture dragging") in corpus.reference.to_rows()
    assert corpus.soft.classes == CLASSES and len(EVALUATED) == 11
    # each event names the annotation file and row of its first segment
    rows = corpus.reference.to_rows()
    talking = corpus.reference.where(rows.index(("cafe_restaurant_00", 0.0, 3.0,
                                                 "people talking")))
    assert talking["path"].endswith("soft_labels_cafe_restaurant/cafe_restaurant_00.txt")
    assert talking["row"] == 1
    dishes = corpus.reference.where(rows.index(("cafe_restaurant_00", 3.0, 5.0,
                                                "cutlery and dishes")))
    assert dishes["row"] == 6  # rows by segment: talking 0.9, 1.0, 0.6, dishes 0.4, talking 0.5


def test_the_soft_tsv_round_trips_to_the_same_files(maestro, tmp_path):
    _, out, _ = maestro
    again = tmp_path / "again"
    assert main(["data", "maestro", "--soft", str(out / "maestro_real_soft.tsv"),
                 "--durations", str(out / "maestro_real_durations.tsv"),
                 "--out", str(again)]) == 0
    for name in ("maestro_real.tsv", "maestro_real_durations.tsv", "maestro_real_soft.tsv"):
        assert (again / name).read_bytes() == (out / name).read_bytes()


def test_union_and_typed_counts_of_the_fixture(maestro):
    """Typed: 5 reference intervals; union: people talking 0–3 and 4–6 s and cutlery 3–5 s
    join into 0–6 s, metro 0–3 and 7–9.5 s stay apart: 3 intervals. A system that names the
    cutlery 'people talking' passes the union trace and fails the typed one."""
    _, out, _ = maestro
    ref, durations = out / "maestro_real.tsv", out / "maestro_real_durations.tsv"
    same = audit(ref, ref, durations=durations, classes=EVALUATED)
    assert same.modes["typed"].micro("missed").obligations == 5
    assert same.modes["union"].micro("missed").obligations == 3
    swapped = EventList.from_rows([(c, a, b, "people talking" if lab == "cutlery and dishes"
                                    else lab) for c, a, b, lab in MAESTRO_EVENTS])
    report = audit(ref, swapped, durations=durations, classes=EVALUATED)
    typed, union = report.modes["typed"], report.modes["union"]
    assert (typed.micro("missed").satisfied, typed.micro("missed").obligations) == (4, 5)
    assert (union.micro("missed").satisfied, union.micro("missed").obligations) == (3, 3)
    assert union.micro("false").satisfied == union.micro("false").obligations


def test_folds_deal_the_files_in_scene_order(maestro):
    files = index_corpus(maestro[0])
    assert [f.scene for f in files] == ["cafe_restaurant", "metro_station"]
    assert folds(files) == {"cafe_restaurant_00": 0, "metro_station_01": 1}
    assert all(f.audio is not None for f in files)


def test_folds_order_files_by_scene_before_their_ids():
    """File ids that do not follow the scenes: the folds deal by scene first, then by id."""
    from pathlib import Path

    from sedcontract.data.maestro import MaestroFile

    files = [MaestroFile("metro_station", "a_metro", Path("a_metro.txt"), None),
             MaestroFile("cafe_restaurant", "c_cafe", Path("c_cafe.txt"), None),
             MaestroFile("cafe_restaurant", "b_cafe", Path("b_cafe.txt"), None),
             MaestroFile("city_center", "z_city", Path("z_city.txt"), None)]
    assert folds(files) == {"b_cafe": 0, "c_cafe": 1, "z_city": 2, "a_metro": 3}
    assert folds(files, count=2) == {"b_cafe": 0, "c_cafe": 1, "z_city": 0, "a_metro": 1}


# -- windows -----------------------------------------------------------------------------------
def test_windows_cover_the_file_and_name_themselves():
    assert window_starts(12.0, 10.0, 5.0) == [(0.0, 10.0), (5.0, 12.0)]
    assert window_starts(9.5, 10.0, 5.0) == [(0.0, 9.5)]
    assert window_starts(25.0, 10.0, 10.0) == [(0.0, 10.0), (10.0, 20.0), (20.0, 25.0)]
    assert parse_window_id("cafe_restaurant_13-000500-001500") == ("cafe_restaurant_13", 5, 15)
    assert parse_window_id("Y-abc_0") is None and parse_window_id("a-000500-000100") is None
    with pytest.raises(TraceFormatError, match="0 < hop <= length"):
        window_starts(10.0, 5.0, 6.0)


def test_overlap_average_means_the_covering_frames():
    first = Piece(np.array([0.0, 1.0]), np.array([1.0, 2.0]), np.array([[0.2], [0.8]]))
    second = Piece(np.array([1.5]), np.array([3.0]), np.array([[0.4]]))
    merged = overlap_average([first, second])
    assert merged.onset.tolist() == [0.0, 1.0, 1.5, 2.0]
    assert merged.offset.tolist() == [1.0, 1.5, 2.0, 3.0]
    assert merged.scores[:, 0].tolist() == pytest.approx([0.2, 0.8, 0.6, 0.4])
    gap = Piece(np.array([4.0]), np.array([5.0]), np.array([[1.0]]))
    with pytest.raises(TraceFormatError, match="no window covers 3–4 s"):
        overlap_average([first, second, gap], where="scores")


def test_a_gap_inside_one_window_adds_nothing_there():
    """A window whose frames skip 1–2 s contributes nothing to that span: the mean there is
    the other window's alone, and with no other window the gap is an error."""
    gappy = Piece(np.array([0.0, 2.0]), np.array([1.0, 3.0]), np.array([[0.2], [0.6]]))
    filler = Piece(np.array([1.0]), np.array([2.0]), np.array([[0.4]]))
    merged = overlap_average([gappy, filler])
    assert merged.onset.tolist() == [0.0, 1.0, 2.0] and merged.offset.tolist() == [1.0, 2.0, 3.0]
    assert merged.scores[:, 0].tolist() == pytest.approx([0.2, 0.4, 0.6])
    with pytest.raises(TraceFormatError, match="no window covers 1–2 s"):
        overlap_average([gappy], where="scores")


def test_windowed_grid_scores_merge_back_to_the_reference():
    """Frame scores of each 10 s window (hop 20 ms), cut from the reference's activity, merged
    back to file time and decided, give the reference events exactly."""
    hop, pieces = 0.02, {}
    for file, duration in MAESTRO_DURATIONS.items():
        for start, end in window_starts(duration, 10.0, 5.0):
            frames = round((end - start) / hop)
            centres = start + (np.arange(frames) + 0.5) * hop
            scores = np.zeros((frames, len(EVALUATED)))
            for clip, on, off, label in MAESTRO_EVENTS:
                if clip == file:
                    scores[(centres >= on) & (centres < off), EVALUATED.index(label)] = 1.0
            onset = start + np.arange(frames) * hop
            pieces.setdefault(file, []).append(Piece(onset, onset + hop, scores))
    rows = []
    for file, parts in pieces.items():
        merged = overlap_average(parts)
        active = merged.scores > 0.5
        for j, label in enumerate(EVALUATED):
            padded = np.r_[False, active[:, j], False].astype(int)
            for s, e in zip(np.flatnonzero(np.diff(padded) == 1),
                            np.flatnonzero(np.diff(padded) == -1), strict=True):
                rows.append((file, merged.onset[s], merged.offset[e - 1], label))
    assert events_of(rows) == events_of(MAESTRO_EVENTS)


# -- the DCASE 2024 Task 4 baseline ------------------------------------------------------------
DESED_REF = ("filename\tonset\toffset\tevent_label\n"
             "Y1.wav\t0.64\t1.92\tDog\nY1.wav\t3.2\t5.12\tSpeech\n")
DESED_DURATIONS = "filename\tduration\nY1.wav\t10.0\nY2.wav\t10.0\n"  # Y2 has no events


@pytest.fixture
def baseline(tmp_path):
    """A baseline score folder holding DESED clips (Y1: Dog found, Speech missed; Y2: a false
    Cat) and MAESTRO chunks (scores from the reference), with the DESED ground truth."""
    folder = write_baseline(tmp_path / "exp", {"Y1": [(0.64, 1.92, "Dog")],
                                               "Y2": [(2.0, 3.0, "Cat")]},
                            maestro_by_file(), MAESTRO_DURATIONS)
    (tmp_path / "desed.tsv").write_text(DESED_REF)
    (tmp_path / "desed_durations.tsv").write_text(DESED_DURATIONS)
    return folder


def vector(report_json):
    return {(m, name): (c["satisfied"], c["obligations"])
            for m, mode in report_json["modes"].items()
            for name, c in mode["coordinates"].items()}


def test_the_desed_track_vector_equals_the_hand_computation(baseline, tmp_path, capsys):
    """At hop 0.064 s (the baseline's frames; eps 200 ms = 3 frames, 157 frames a clip):
    typed rows are Cat, Dog, Speech of Y1 and Y2. Silence obligations are the frames farther
    than 3 frames from reference activity: Y1 Dog 157 − 26, Y1 Speech 157 − 36, Y1 Cat 157,
    Y2 3 × 157: 880, of which the false Cat (frames 31–46) breaks 16. Union: Y1 157 − 62,
    Y2 157: 252, 16 broken."""
    args = ["audit", "--ref", str(tmp_path / "desed.tsv"), "--durations",
            str(tmp_path / "desed_durations.tsv"), "--clips", "durations", "--pred-scores",
            str(baseline), "--class-map", str(DESED_MAP), "--skip-unlisted", "--hop", "64ms",
            "--classes", "Cat,Dog,Speech", "--format", "json"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "skipped 3 score file(s)" in captured.err  # the MAESTRO chunks
    got = vector(json.loads(captured.out))
    expected = {"missed": (1, 2), "false": (1, 2), "onset": (1, 2), "offset": (1, 2),
                "duration": (1, 1), "fragmentation": (1, 1)}
    for mode in ("typed", "union"):
        for name, counts in expected.items():
            assert got[(mode, name)] == counts, (mode, name)
    assert got[("typed", "silence")] == (864, 880)
    assert got[("union", "silence")] == (236, 252)


def test_the_maestro_track_merges_the_chunks(baseline, maestro, capsys):
    _, out, _ = maestro
    args = ["audit", "--ref", str(out / "maestro_real.tsv"), "--durations",
            str(out / "maestro_real_durations.tsv"), "--pred-scores", str(baseline),
            "--windows", "--class-map", str(MAESTRO_MAP), "--skip-unlisted", "--format", "json"]
    assert main(args) == 0
    got = vector(json.loads(capsys.readouterr().out))
    assert got[("typed", "missed")] == (5, 5) and got[("union", "missed")] == (3, 3)
    assert all(s == o for s, o in got.values())
    # the short last chunks (7–12 s, 0–9.5 s) were scored on 156 frames: cut at their ends
    tables = read_score_dir(baseline, ["cafe_restaurant_00", "metro_station_01"],
                            class_map=read_class_map(MAESTRO_MAP), windows=True, skipped=[])
    assert tables["cafe_restaurant_00"][0].offset[-1] == 12.0
    assert tables["metro_station_01"][0].offset[-1] == 9.5
    assert tables["metro_station_01"][0].classes == read_class_map(MAESTRO_MAP).kept
    events = tables_to_events(tables, DecisionPolicy(), baseline)
    assert {(c, lab) for c, _, _, lab in events.to_rows()} == \
        {(c, lab) for c, _, _, lab in MAESTRO_EVENTS}


def test_baseline_detection_tsv_header_order_is_read(tmp_path):
    """The baseline writes ``event_label onset offset filename`` (and an index column)."""
    path = tmp_path / "predictions_th_0.49.tsv"
    path.write_text("event_label\tonset\toffset\tfilename\tindex\nDog\t0.5\t1.2\tY1.wav\t1\n")
    assert read_events(path).to_rows() == [("Y1", 0.5, 1.2, "Dog")]


def test_softness_rows_and_the_mechanism_column(maestro, tmp_path, capsys):
    """cutlery and dishes: segments 0.4, 0.8, 0.8 → ambiguity 0.8 + 0.4 + 0.4 = 1.6 of 3. The
    report also rebuilds the vector by annotation confidence from the rows."""
    _, out, _ = maestro
    ref = str(out / "maestro_real.tsv")
    assert main(["audit", "--ref", ref, "--durations", str(out / "maestro_real_durations.tsv"),
                 "--pred", ref, "--format", "csv", "--soft",
                 str(out / "maestro_real_soft.tsv"), "--out", str(tmp_path / "rows.csv")]) == 0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "rows.csv").read_text())))
    soft = {(r["clip"], r["class"]): (int(r["satisfied"]), int(r["obligations"]))
            for r in rows if r["coordinate"] == "softness"}
    assert soft[("cafe_restaurant_00", "cutlery and dishes")] == (1600, 3000)
    assert soft[("metro_station_01", "metro approaching")] == (600, 3000)
    report = tmp_path / "report"
    assert main(["report", str(tmp_path / "rows.csv"), "--out", str(report)]) == 0
    table = list(csv.DictReader(io.StringIO((report / "mechanism.csv").read_text())))
    by_class = {r["class"]: r["softness"] for r in table}
    assert float(by_class["cutlery and dishes"]) == pytest.approx(1600 / 3000, abs=1e-4)
    # people talking: 0.9 1.0 0.6 0.5 0.7 0.8 0.2 → 0.2 0 0.8 1 0.6 0.4 0.4 = 3.4 of 7
    assert float(by_class["people talking"]) == pytest.approx(3.4 / 7, abs=1e-4)
    strata = {r["coordinate"]: r for r in csv.DictReader(
        io.StringIO((report / "by_confidence.csv").read_text()))}
    assert [strata["missed"][f"soft {s}"] for s in STRATA] == ["", "", "1.0000", "1.0000"]
    assert [strata["offset"][f"soft {s}"] for s in STRATA] == ["1.0000", "1.0000", "", ""]


# -- bad input ---------------------------------------------------------------------------------
def annotation(tmp_path, text):
    folder = tmp_path / "m" / "development_annotation" / "soft_labels_city_center"
    folder.mkdir(parents=True)
    (folder / "city_center_00.txt").write_text(text)
    return tmp_path / "m"


@pytest.mark.parametrize("text, message", [
    ("0.0\t1.0\tcar\t1.3\n", "row 1, column 'soft': soft value '1.3' is outside [0, 1]"),
    ("0.0\t1.0\tcar\t-0.1\n", "outside [0, 1]"),
    ("0.0\t1.0\tcar\t0.7\n0.0\t1.0\tcar\t0.4\n",
     "row 2, column 'confidence': segment 0–1 s of 'car' has soft value 0.4 here and 0.7 on "
     "row 1"),
    ("0.0\t1.0\tdragon\t0.7\n", "row 1, column 'event_label': unknown class 'dragon'"),
    ("0.3\t1.3\tcar\t0.7\n", "row 1, column 'onset': onset '0.3' is not on the 1 s grid"),
    ("0.0\t2.0\tcar\t0.7\n", "not one segment of at most 1 s"),
    ("0.0\t1.0\tcar\n", "row 1: 3 columns"),
    ("0.0\t1.0\tcar\tmuch\n", "'much' is not a finite number"),
    ("1000000000000.0\t1000000000001.0\tcar\t0.1\n",
     "row 1, column 'offset': time '1000000000001.0' s is past the latest supported time"),
])
def test_bad_soft_labels_name_file_and_row(tmp_path, text, message):
    root = annotation(tmp_path, text)
    with pytest.raises(TraceFormatError) as info:
        read_corpus(root, classes="all")
    assert message in str(info.value)
    assert "city_center_00.txt" in str(info.value)


def test_repeated_identical_rows_are_counted_not_refused(tmp_path):
    root = annotation(tmp_path, "0.0\t1.0\tcar\t0.7\n0.0\t1.0\tcar\t0.7\n")
    corpus = read_corpus(root)
    assert corpus.soft.duplicates == 1
    assert corpus.reference.to_rows() == [("city_center_00", 0.0, 1.0, "car")]


def test_soft_values_of_exactly_zero_and_one_are_valid(tmp_path):
    root = annotation(tmp_path, "0.0\t1.0\tcar\t0\n1.0\t2.0\tcar\t1\n2.0\t3.0\tcar\t0.0\n")
    corpus = read_corpus(root)
    assert corpus.reference.to_rows() == [("city_center_00", 1.0, 2.0, "car")]
    assert corpus.durations == {"city_center_00": 3.0}  # the last annotated segment's end


def test_an_annotation_may_end_within_one_segment_after_the_audio(tmp_path):
    """Annotated up to 5 s: a file of 4.2 s (within one segment) is read, its last event cut at
    4.2 s; a file of 3.9 s (more than one segment short) is refused."""
    root = annotation(tmp_path, "3.0\t4.0\tcar\t0.7\n4.0\t5.0\tcar\t0.8\n")
    durations = tmp_path / "durations.tsv"
    durations.write_text("filename\tduration\ncity_center_00.wav\t4.2\n")
    corpus = read_corpus(root, durations=durations)
    assert corpus.reference.to_rows() == [("city_center_00", 3.0, 4.2, "car")]
    assert corpus.durations == {"city_center_00": 4.2}
    durations.write_text("filename\tduration\ncity_center_00.wav\t3.9\n")
    with pytest.raises(TraceFormatError, match=r"annotated up to 5 s but the file lasts 3\.9 s"):
        read_corpus(root, durations=durations)


def test_a_missing_tree_and_a_soft_file_as_reference_are_refused(tmp_path, maestro):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SedContractError, match="no MAESTRO Real annotations under"):
        read_corpus(tmp_path / "empty")
    soft = maestro[1] / "maestro_real_soft.tsv"
    with pytest.raises(TraceFormatError, match=r"soft labels .* sedcontract data maestro"):
        read_events(soft)
    with pytest.raises(TraceFormatError, match="header"):
        read_soft_tsv(maestro[1] / "maestro_real.tsv")


def test_class_map_errors_name_file_row_and_column(tmp_path, baseline, capsys):
    incomplete = tmp_path / "map.tsv"
    incomplete.write_text("source\ttarget\nDog\tDog\n")
    with pytest.raises(TraceFormatError) as info:
        read_score_dir(baseline, class_map=read_class_map(incomplete), skipped=None)
    assert "column 'Alarm_bell_ringing': class 'Alarm_bell_ringing' is not in the class map" \
        in str(info.value)
    twice = tmp_path / "twice.tsv"
    twice.write_text("source\ttarget\nDog\tDog\nCat\t-\nDog\tCat\n")
    with pytest.raises(TraceFormatError, match=r"twice.tsv, row 4, column 'source': class 'Dog'"
                                               r" is mapped twice \(first on row 2\)"):
        read_class_map(twice)
    for text, message in (("Dog\tDog\n", "header 'source<TAB>target'"),
                          ("source\ttarget\nDog\n", "row 2: expected 'source<TAB>target'"),
                          ("source\ttarget\nDog\t-\n", "keeps no class")):
        bad = tmp_path / "bad.tsv"
        bad.write_text(text)
        with pytest.raises(TraceFormatError, match=message):
            read_class_map(bad)
    # an event file whose label the map does not name: the event file's row
    pred = tmp_path / "pred.tsv"
    pred.write_text("filename\tonset\toffset\tevent_label\nY1.wav\t0\t1\tDog\nY1.wav\t2\t3\tOwl\n")
    assert main(["audit", "--ref", str(tmp_path / "desed.tsv"), "--pred", str(pred),
                 "--class-map", str(DESED_MAP)]) == 2
    assert "pred.tsv, row 3, column 'event_label': class 'Owl' is not in the class map" in \
        capsys.readouterr().err
    # a reference label the map's targets do not declare
    assert main(["audit", "--ref", str(tmp_path / "desed.tsv"), "--durations",
                 str(tmp_path / "desed_durations.tsv"), "--pred-scores", str(baseline),
                 "--class-map", str(MAESTRO_MAP), "--skip-unlisted"]) == 2
    assert "desed.tsv, row 2, column 'event_label': label 'Dog' is not one of the declared" in \
        capsys.readouterr().err


def test_several_sources_of_one_target_give_their_maximum_score():
    from sedcontract.traces.classmap import ClassMap

    mapping = ClassMap({"Dog": "animal", "Cat": "animal", "Fan": None, "Speech": "voice"})
    scores = np.array([[0.9, 0.2, 0.7, 0.1],
                       [0.3, 0.8, 0.7, 0.5],
                       [0.4, 0.4, 0.1, 0.6]])
    kept, out = mapping.columns(["Dog", "Cat", "Fan", "Speech"], scores, path="scores.tsv")
    assert kept == ("animal", "voice")
    assert out.tolist() == [[0.9, 0.1], [0.8, 0.5], [0.4, 0.6]]
    # the order of the sources does not matter
    _, swapped = mapping.columns(["Cat", "Dog", "Fan", "Speech"], scores[:, [1, 0, 2, 3]],
                                 path="scores.tsv")
    assert swapped.tolist() == out.tolist()


def test_a_window_frame_starting_at_the_window_end_adds_nothing_to_the_merge(tmp_path):
    """Window scores are cut at the window's end: a frame starting exactly there (0.99 here)
    and the later frames of a short last window scored as a whole leave no time and no score
    in the merged file; a frame across the end is cut at it."""
    folder = tmp_path / "scores"
    folder.mkdir()
    frames = {"f-000000-000100": ([0.1, 0.1, 0.1, 0.1, 0.99], 0.25),  # 0–1 s; 1–1.25 s past
              "f-000100-000150": ([0.3, 0.3, 0.4, 0.99, 0.99], 0.2)}  # 1–1.5 s scored to 2 s
    for name, (column, hop) in frames.items():
        (folder / f"{name}.tsv").write_text(scores_tsv(np.array(column)[:, None], ["Dog"], hop))
    table, path = read_score_dir(folder, windows=True, durations={"f": 1.5})["f"]
    assert path == str(folder / "f-000000-000100.tsv") and table.classes == ("Dog",)
    assert table.onset.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0, 1.2, 1.4]
    assert table.offset.tolist() == [0.25, 0.5, 0.75, 1.0, 1.2, 1.4, 1.5]
    assert table.scores[:, 0].tolist() == [0.1, 0.1, 0.1, 0.1, 0.3, 0.3, 0.4]


def test_score_folder_mistakes_are_refused(baseline, tmp_path, capsys):
    ref, durations = str(tmp_path / "desed.tsv"), str(tmp_path / "desed_durations.tsv")
    # without --skip-unlisted the MAESTRO chunks are clips the DESED reference does not list
    assert main(["audit", "--ref", ref, "--durations", durations, "--clips", "durations",
                 "--pred-scores", str(baseline), "--class-map", str(DESED_MAP)]) == 2
    assert "which the reference does not list" in capsys.readouterr().err
    assert main(["audit", "--ref", ref, "--pred", ref, "--windows"]) == 2
    assert "--windows merges score files" in capsys.readouterr().err
    assert main(["audit", "--ref", ref, "--pred", ref, "--clips", "durations"]) == 2
    assert "--clips durations needs --durations" in capsys.readouterr().err
    # a chunk missing from the middle of a file leaves time no window covers
    chunks = sorted(baseline.glob("cafe_restaurant_00-*.tsv"))
    longer = baseline / "cafe_restaurant_00-001500-002000.tsv"
    longer.write_text(chunks[0].read_text())
    with pytest.raises(TraceFormatError, match="no window covers 12–15 s"):
        read_score_dir(baseline, class_map=read_class_map(DESED_MAP), windows=True)


def test_same_class_overlaps_in_a_ground_truth_are_merged_and_named(tmp_path, capsys):
    ref = tmp_path / "gt.tsv"
    ref.write_text("filename\tonset\toffset\tevent_label\nY1.wav\t0.5\t2\tDog\n"
                   "Y1.wav\t1.5\t3\tDog\nY1.wav\t3\t4\tDog\nY1.wav\t3.5\t4.5\tCat\n")
    assert main(["audit", "--ref", str(ref), "--pred", str(ref), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "2 reference event(s) overlap or touch an earlier event of their clip and class " \
           f"and are merged with it (first: {ref}, row 3)" in captured.err
    assert json.loads(captured.out)["traces"]["merged"]["ref"] == 2
    assert read_events(ref).overlapping().tolist() == [1, 2]


def test_the_shipped_maps_name_the_baseline_columns_in_order():
    """The baseline's 27 columns: the 10 DESED classes, then the 17 MAESTRO ones; each map
    names every one and keeps its corpus's evaluated classes."""
    assert len(BASELINE_COLUMNS) == 27 and BASELINE_COLUMNS[10:] == CLASSES
    for path, kept in ((DESED_MAP, DESED_CLASSES), (MAESTRO_MAP, EVALUATED)):
        mapping = read_class_map(path)
        assert tuple(mapping.targets) == BASELINE_COLUMNS
        assert sorted(mapping.kept) == sorted(kept)
        assert all(t in (s, None) for s, t in mapping.targets.items())


def test_psds_of_the_mapped_scores_equals_psds_of_files_with_those_columns(baseline, tmp_path,
                                                                          capsys):
    """PSDS from the baseline's 27-column files through the class map and the declared classes
    equals PSDS from score files holding only those columns (sed_scores_eval reads both)."""
    common = ["--ref", str(tmp_path / "desed.tsv"), "--durations",
              str(tmp_path / "desed_durations.tsv"), "--classes", "Dog,Speech",
              "--with-scores", "--format", "json"]
    assert main(["audit", *common, "--pred-scores", str(baseline), "--class-map",
                 str(DESED_MAP), "--skip-unlisted"]) == 0
    mapped = json.loads(capsys.readouterr().out)
    plain = tmp_path / "plain"
    plain.mkdir()
    for clip in ("Y1",):
        table = read_score_dir(baseline, ["Y1"], class_map=read_class_map(DESED_MAP),
                               skipped=[])[clip][0]
        keep = [table.classes.index(c) for c in ("Dog", "Speech")]
        lines = ["onset\toffset\tDog\tSpeech"] + [
            f"{float(a)!r}\t{float(b)!r}\t" + "\t".join(repr(float(v)) for v in row[keep])
            for a, b, row in zip(table.onset, table.offset, table.scores, strict=True)]
        (plain / f"{clip}.tsv").write_text("\n".join(lines) + "\n")
    assert main(["audit", *common, "--pred-scores", str(plain)]) == 0
    direct = json.loads(capsys.readouterr().out)
    assert mapped["psds"] == direct["psds"] and "value" in mapped["psds"]["psds1"]
    assert mapped["modes"] == direct["modes"]


def test_obligations_by_annotation_confidence(maestro, tmp_path, capsys):
    """Event strata by the mean soft value over the event: people talking 0–3 s (0.83),
    cutlery 3–5 s (0.8), metro approaching (0.9) are firm; people talking 4–6 s (0.75) and
    metro leaving 7–9.5 s (0.55, 0.75, 0.75 over 50, 50, 25 frames: 0.67) are soft. A system
    missing people talking 0–3 s and metro leaving misses one of each."""
    _, out, _ = maestro
    ref, durations = out / "maestro_real.tsv", out / "maestro_real_durations.tsv"
    soft = read_soft_tsv(out / "maestro_real_soft.tsv")
    kept = [e for e in MAESTRO_EVENTS if e[1:] not in ((0.0, 3.0, "people talking"),
                                                       (7.0, 9.5, "metro leaving"))]
    pred = EventList.from_rows(kept, clips=tuple(MAESTRO_FILES))
    policy = AuditPolicy()
    table = by_confidence(ref, pred, policy, soft, durations=durations, classes=EVALUATED)
    assert STRATA == ("0", "(0, 0.5]", "(0.5, 0.75]", "(0.75, 1]")
    sat, obl = table.total("missed")
    assert obl.tolist() == [0, 0, 2, 3] and sat.tolist() == [0, 0, 1, 2]
    # every clause's strata add up to the guard report's counts
    report = audit(ref, pred, policy, durations=durations, classes=EVALUATED, mode="typed")
    for name in table.coordinates:
        sat, obl = table.total(name)
        cell = report.modes["typed"].micro(name)
        assert (int(sat.sum()), int(obl.sum())) == (cell.satisfied, cell.obligations), name
    # the same through the command line, in Markdown and as rows for the report
    args = ["audit", "--ref", str(ref), "--durations", str(durations), "--pred", str(ref),
            "--soft", str(out / "maestro_real_soft.tsv"), "--classes", ",".join(EVALUATED)]
    assert main(args) == 0
    assert "| missed | vacuous (0/0) | vacuous (0/0) | 1.000 (2/2) | 1.000 (3/3) |" in \
        capsys.readouterr().out
    assert main([*args, "--format", "json"]) == 2
    assert "--soft adds the table by annotation confidence" in capsys.readouterr().err
    other = tmp_path / "other_soft.tsv"
    other.write_text("filename\tonset\toffset\tevent_label\tconfidence\nx.wav\t0\t1\tcar\t1\n")
    assert main([*args[:-4], "--soft", str(other)]) == 2
    assert "the soft labels name none of the audited clips (first: 'cafe_restaurant_00')" in \
        capsys.readouterr().err


def test_frames_take_the_soft_value_of_the_segment_holding_their_centre(tmp_path):
    """At the DCASE baseline's hop of 64 ms frames straddle the 1 s segments: frame 31 covers
    1.984–2.048 s, its centre (2.016 s) lies in segment 2. Reference 0–3 s, soft values 1.0,
    0.6, 0.3: frames 0–15, 16–30 and 31–46 by their centres (16, 15, 16 frames)."""
    from sedcontract.contracts import parse_contract

    (tmp_path / "soft.tsv").write_text(
        "filename\tonset\toffset\tevent_label\tconfidence\n"
        "a.wav\t0.0\t1.0\tcar\t1.0\na.wav\t1.0\t2.0\tcar\t0.6\na.wav\t2.0\t3.0\tcar\t0.3\n")
    soft = read_soft_tsv(tmp_path / "soft.tsv")
    ref = EventList.from_rows([("a", 0.0, 3.0, "car")])
    pred = EventList.from_rows([("a", 0.0, 2.0, "car")])  # active up to frame 30 (centre 1.952)
    contract = parse_contract("clause act: on ref.active require pred.active\n", name="test")
    table = by_confidence(ref, pred, AuditPolicy(hop=0.064, contract=contract), soft,
                          durations={"a": 4.0})
    sat, obl = table.total("act")
    assert obl.tolist() == [0, 16, 15, 16]  # strata 0, (0, 0.5], (0.5, 0.75], (0.75, 1]
    assert sat.tolist() == [0, 0, 15, 16]


def test_a_file_annotated_with_no_rows_is_a_file_without_events(tmp_path, capsys):
    root = write_maestro(tmp_path / "m")
    folder = root / "development_annotation" / "soft_labels_city_center"
    folder.mkdir()
    (folder / "city_center_05.txt").write_text("")
    with pytest.raises(SedContractError, match=r"city_center_05\.txt has no rows and the file "
                                               r"has no audio or listed duration"):
        read_corpus(root)
    wav = root / "development_audio" / "city_center" / "city_center_05.wav"
    wav.parent.mkdir()
    soundfile.write(wav, np.zeros(16_000 * 4), 16_000, subtype="PCM_16")
    out = tmp_path / "prepared"
    assert main(["data", "maestro", "--root", str(root), "--out", str(out)]) == 0
    ref = read_events(out / "maestro_real.tsv")
    assert "city_center_05" in ref.clips and len(ref.select(clips=["city_center_05"])) == 0
    rows = tmp_path / "rows.csv"
    assert main(["audit", "--ref", str(out / "maestro_real.tsv"), "--pred",
                 str(out / "maestro_real.tsv"), "--durations",
                 str(out / "maestro_real_durations.tsv"), "--soft",
                 str(out / "maestro_real_soft.tsv"), "--format", "csv", "--out", str(rows)]) == 0
    records = list(csv.DictReader(io.StringIO(rows.read_text())))
    soft = [r for r in records
            if r["coordinate"] == "softness" and r["clip"] == "city_center_05"]
    # no annotated segment: its softness rows are 0/0 and left out, the clip is still counted
    assert all(r["obligations"] == "0" for r in soft)
    assert any(r["clip"] == "city_center_05" and r["coordinate"] == "activity"
               for r in records)


def test_soft_labels_far_out_cost_their_rows_not_their_span(tmp_path):
    """One row at 1e8 s (a soft tsv, and an annotation file of a tree) is kept as rows, not as
    a per-second array of 8 GiB: reading, the hard reference and writing fit in 600 MiB."""
    from tests.helpers.limits import run_limited

    soft = tmp_path / "soft.tsv"
    soft.write_text("filename\tonset\toffset\tevent_label\tconfidence\nf.wav\t0\t1\tcar\t0.9\n"
                    "f.wav\t100000000\t100000001\tcar\t0.7\nf.wav\t100000001\t100000002\tcar\t"
                    "0.6\nf.wav\t5\t6\tcar\t0.4\n")
    root = annotation(tmp_path, "0.0\t1.0\tcar\t0.9\n100000000.0\t100000001.0\tcar\t0.8\n")
    code = (
        "from sedcontract.data.maestro import read_corpus, write_corpus_files\n"
        f"a = read_corpus(soft={str(soft)!r})\n"
        f"b = read_corpus({str(root)!r})\n"
        f"write_corpus_files({str(tmp_path / 'out')!r}, a)\n"
        "print(a.reference.to_rows(), b.reference.to_rows())\n"
        "print(a.soft.softness(['f'], ['car'])[1].tolist(), len(a.soft.rows()))\n")
    result = run_limited(["-c", code], limit_mb=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.splitlines() == [
        "[('f', 0.0, 1.0, 'car'), ('f', 100000000.0, 100000002.0, 'car')] "
        "[('city_center_00', 0.0, 1.0, 'car'), ('city_center_00', 100000000.0, 100000001.0, "
        "'car')]", "[[4]] 4"]
    assert "f.wav\t100000001.0\t100000002.0\tcar\t0.6" in \
        (tmp_path / "out" / "maestro_real_soft.tsv").read_text()


def test_confidence_strata_cost_the_rows_and_runs_not_the_span(tmp_path):
    """Soft rows and a reference event at 1e8 s (5e9 frames at 20 ms): strata are counted
    from the soft rows and the obligations' runs, not from per-segment or per-frame arrays of
    the span, in 600 MiB; each clause's strata still add up to the guard report's counts."""
    from tests.helpers.limits import run_limited

    soft = tmp_path / "soft.tsv"
    soft.write_text("filename\tonset\toffset\tevent_label\tconfidence\nf.wav\t0\t1\tcar\t0.9\n"
                    "f.wav\t100000000\t100000001\tcar\t0.7\nf.wav\t100000001\t100000002\tcar\t"
                    "0.6\nf.wav\t5\t6\tcar\t0.4\n")
    code = (
        "from sedcontract.guard import AuditPolicy, audit\n"
        "from sedcontract.analysis.confidence import by_confidence\n"
        "from sedcontract.traces import EventList\n"
        "from sedcontract.traces.soft import read_soft_tsv\n"
        f"soft = read_soft_tsv({str(soft)!r})\n"
        "ref, policy = soft.hard(), AuditPolicy(max_frames=10**11)\n"
        "pred = EventList.from_rows([('f', 0.0, 1.0, 'car'), ('f', 5.0, 6.0, 'car')])\n"
        "report = audit(ref, pred, policy, mode='typed').modes['typed']\n"
        "table = by_confidence(ref, pred, policy, soft)\n"
        "for name in table.coordinates:\n"
        "    sat, obl = table.total(name)\n"
        "    cell = report.micro(name)\n"
        "    assert (sat.sum(), obl.sum()) == (cell.satisfied, cell.obligations), name\n"
        "print(*(a.tolist() for a in table.total('missed')))\n")
    result = run_limited(["-c", code], limit_mb=600)
    assert result.returncode == 0, result.stderr[-2000:]
    # missed: 0–1 s (0.9) found, 1e8–1e8 + 2 s (mean 0.65) missed
    assert result.stdout.splitlines() == ["[0, 0, 0, 1] [0, 0, 1, 1]"]


@pytest.mark.parametrize("name", ["development_annotation/soft_labels_city_center/x.txt",
                                  "development_audio/city_center/city_center_00.wav"])
def test_a_pipe_in_a_maestro_tree_is_refused_not_read(tmp_path, name):
    """A FIFO named like an annotation or audio file would block the reader forever: only
    regular files are read, anything else is an error naming it."""
    import os

    from tests.helpers.limits import run_limited

    root = annotation(tmp_path, "0.0\t1.0\tcar\t0.9\n")
    pipe = root / name
    pipe.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(pipe)
    code = ("from sedcontract.data.maestro import read_corpus\n"
            "from sedcontract.errors import SedContractError\n"
            "try:\n"
            f"    read_corpus({str(root)!r})\n"
            "except SedContractError as exc:\n"
            "    print(exc)\n")
    result = run_limited(["-c", code], limit_mb=1000, timeout=20)
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"{pipe}: not a regular file" in result.stdout


def test_a_missing_first_or_last_window_or_a_window_scored_twice_is_refused(tmp_path):
    """Uncovered time at a file's start (always) or end (with its duration) is an error naming
    the file and the span; two files of one window are refused naming both, not averaged."""
    from tests.helpers.corpora import baseline_scores, write_score_file

    def folder(name, *chunks):
        out = tmp_path / name
        for chunk in chunks:
            write_score_file(out / f"{chunk}.tsv", baseline_scores([], 0.0))
        return out

    read = {"class_map": read_class_map(DESED_MAP), "windows": True}
    late = folder("late", "f-000500-001500")
    with pytest.raises(TraceFormatError, match=r"f-000500-001500\.tsv: no window covers 0–5 s "
                                               r"of file 'f'"):
        read_score_dir(late, **read)
    short = folder("short", "f-000000-001000")
    with pytest.raises(TraceFormatError, match=r"f-000000-001000\.tsv: no window covers "
                                               r"10–15 s of file 'f' \(its duration 15 s\)"):
        read_score_dir(short, durations={"f": 15.0}, **read)
    assert read_score_dir(short, durations={"f": 10.004}, **read)  # names are centiseconds
    assert read_score_dir(short, **read)  # no duration known: only the start is checked
    twice = folder("twice", "f-000000-001000", "f-000000-001000.wav")
    with pytest.raises(TraceFormatError, match=r"f-000000-001000\.tsv and f-000000-001000\.wav"
                                               r"\.tsv are both the scores of window 0–10 s "
                                               r"of file 'f'"):
        read_score_dir(twice, **read)
