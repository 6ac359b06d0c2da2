"""The real-data track: DESED validation and the DCASE baseline's own output files
(``tests/data/real_dcase``, copied unchanged from DCASE-REPO/DESED_task, MIT licence; see its
README for provenance), read as a participant has them — the pandas CSV of detections, the
psds_eval operating-point tables, the durations file that rounds — with the guard vector
computed twice, by the run-length and the dense monitor backends."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import numpy as np
import pytest

from sedcontract.errors import TraceFormatError
from sedcontract.guard import AuditPolicy, audit
from sedcontract.traces import read_durations, read_events
from tests.helpers.real_dcase import CLASSES, DATA, DURATIONS, PRED, REF


def test_the_files_are_read_as_they_come():
    ref, pred, durations = read_events(REF), read_events(PRED), read_durations(DURATIONS)
    assert len(ref.clips) == len(durations) == 1168
    assert len(ref) == 4224 and sorted(set(ref.label)) == list(CLASSES)
    assert len(pred) == 3351 and set(pred.label) <= set(CLASSES)  # sed_eval's Nsys total
    assert pred.where(0) == {"path": str(PRED), "row": 2}


def test_every_operating_point_table_is_read(tmp_path):
    with tarfile.open(DATA / "teacher" / "operating_points.tar.xz") as archive:
        archive.extractall(tmp_path, filter="data")
    tables = sorted((tmp_path / "teacher").glob("predictions_th_*.tsv"))
    assert len(tables) == 50
    sizes = [len(read_events(t)) for t in tables]
    # lower thresholds detect more (each table is the baseline's output at its threshold)
    assert sizes[0] > sizes[-1] > 0


def test_durations_that_round_audit_unchanged_and_are_counted():
    report = audit(REF, PRED, durations=DURATIONS, classes=CLASSES)
    assert report.traces["cut"] == {"ref": 16, "pred": 6}
    assert any("16 reference event(s) ended past their clip's duration" in w
               for w in report.traces["warnings"])
    for mode in ("typed", "union"):
        vector = report.vector(mode)
        assert all(0 <= v <= 1 for v in vector.values()), (mode, vector)
    dense = audit(REF, PRED, durations=DURATIONS, classes=CLASSES, backend="dense")
    for mode in ("typed", "union"):
        for name in report.coordinates:
            np.testing.assert_array_equal(report.modes[mode].satisfied[name],
                                          dense.modes[mode].satisfied[name])
            np.testing.assert_array_equal(report.modes[mode].obligations[name],
                                          dense.modes[mode].obligations[name])


def test_strict_durations_refuse_the_rounded_file_by_count_and_first_row():
    with pytest.raises(TraceFormatError, match=r"16 reference event\(s\) end past their "
                       r"clip's duration, --strict-durations") as info:
        audit(REF, PRED, AuditPolicy(strict_durations=True), durations=DURATIONS)
    assert (info.value.path, info.value.row) == (str(REF), 26)


def printed(path: Path) -> dict:
    """sed_eval's printed report: overall (micro) and class-wise average F1, precision,
    recall, error rate, and every class row (Nref, Nsys, F, Pre, Rec, ER), as printed."""
    lines = path.read_text().splitlines()
    blocks: list[dict[str, str]] = []
    rows: dict[str, list[str]] = {}
    for line in lines:
        text = line.strip()
        if text.startswith("F-measure (F1)"):
            blocks.append({})
        for key, name in (("F-measure (F1)", "f1"), ("Precision", "precision"),
                          ("Recall", "recall"), ("Error rate (ER)", "error_rate")):
            if text.startswith(key) and blocks and name not in blocks[-1]:
                blocks[-1][name] = text.split(":")[1].replace("%", "").strip()
        if "|" in text and not text.startswith(("Event label", "---")):
            cells = [c.split() for c in text.split("|")]
            rows[cells[0][0]] = [*cells[1], *cells[2][:3], cells[3][0]]
    return {"micro": blocks[0], "macro": blocks[1], "classes": rows}


@pytest.mark.parametrize(("score", "txt"), [("event", "event_f1.txt"),
                                            ("segment", "segment_f1.txt")])
def test_the_published_teacher_tables_are_reproduced_under_the_sed_eval_rule(
        score, txt, capsys):
    """``sedcontract scores --time-comparison sed_eval`` on the baseline's own detections with
    DESED's durations prints what the DCASE notebook printed, to the printed digit: micro,
    macro and every class row."""
    from sedcontract.cli import main

    assert main(["scores", "--ref", str(REF), "--pred", str(PRED), "--durations",
                 str(DURATIONS), "--time-comparison", "sed_eval", "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["policy"]["scores"]["time_comparison"] == "sed_eval"
    ours = result["scores"][score]
    table = printed(DATA / "teacher" / txt)
    per_class = ours["per_class"]
    macro = {k: sum(c[k] for c in per_class.values()) / len(per_class)
             for k in ("f1", "precision", "recall", "error_rate")}
    for block, values in (("micro", ours), ("macro", macro)):
        for name, want in table[block].items():
            got = values[name]
            shown = f"{got:.2f}" if name == "error_rate" else f"{100 * got:.2f}"
            assert shown == want, (block, name, got, want)
    assert len(table["classes"]) == 10
    for short, (nref, nsys, f, pre, rec, er) in table["classes"].items():
        (name,) = [c for c in per_class if c == short or (short.endswith("..")
                                                         and c.startswith(short[:-2]))]
        c = per_class[name]
        assert (str(c["ref"]), str(c["sys"])) == (nref, nsys), name
        assert [f"{100 * c[k]:.1f}%" for k in ("f1", "precision", "recall")] == [f, pre, rec]
        assert f"{c['error_rate']:.2f}" == er, name


def test_the_default_rule_counts_the_collar_ties_as_hits(capsys):
    """Under the default (sed_scores_eval's microseconds) one more pair of the real data is a
    hit: the published 42.35 % becomes 42.38 %."""
    from sedcontract.cli import main

    assert main(["scores", "--ref", str(REF), "--pred", str(PRED), "--durations",
                 str(DURATIONS), "--format", "json"]) == 0
    ours = json.loads(capsys.readouterr().out)["scores"]["event"]
    assert (ours["tp"], f"{100 * ours['f1']:.2f}") == (1605, "42.38")


# ---- PSDS: one cut rule (as the files come by default, --psds-cut cuts both sides) ----

def _sed_scores_eval_psds(folder: Path, cut: bool) -> dict[str, float]:
    """sed_scores_eval's PSDS1 and PSDS2 on the score files and the ground truth as they come,
    or with both cut at the durations by hand (frames starting at or after a clip's end
    dropped, the last one ending there; events likewise)."""
    from sed_scores_eval import intersection_based, io

    from sedcontract.scores.psds.settings import PRESETS

    durations = read_durations(DURATIONS)
    scores = io.read_sed_scores(str(folder))
    truth = {clip: [] for clip in durations}
    for clip, on, off, label in read_events(REF).to_rows():
        end = durations[clip] if cut else np.inf
        if on < end:
            truth[clip].append((on, min(off, end), label))
    if cut:
        for clip, table in scores.items():
            table = table[table.onset < durations[clip]].copy()
            table.loc[table.index[-1], "offset"] = min(table.offset.iloc[-1], durations[clip])
            scores[clip] = table
    return {name: intersection_based.psds(scores=scores, ground_truth=truth,
                                          audio_durations=durations, num_jobs=1,
                                          **settings.sed_scores_eval())[0]
            for name, settings in PRESETS.items()}


@pytest.mark.parametrize("cut", [False, True], ids=["as-they-come", "psds-cut"])
def test_psds_of_a_score_folder_follows_sed_scores_eval_as_the_files_come_and_when_cut(
        teacher_scores, cut, capsys):
    """By default the reference and the score files are taken as they come, as the DCASE 2024
    recipe hands them to sed_scores_eval (PSDS1 0.35350); ``--psds-cut`` cuts both at the
    durations (0.3536337). Cutting the reference alone — the rule before — gave 0.3536310,
    neither tool's number."""
    from sedcontract.cli import main

    args = ["scores", "--ref", str(REF), "--durations", str(DURATIONS), "--pred-scores",
            str(teacher_scores), "--format", "json"]
    assert main([*args, *(["--psds-cut"] if cut else [])]) == 0
    ours = json.loads(capsys.readouterr().out)["psds"]
    theirs = _sed_scores_eval_psds(teacher_scores, cut)
    for name in ("psds1", "psds2"):
        assert ours[name]["value"] == pytest.approx(theirs[name], rel=1e-12, abs=0), name
        assert ours[name]["cut"] == ({"ref": 16, "pred": 102} if cut else None)
    expected = {False: (0.3534991, 0.5483279), True: (0.3536337, 0.5483236)}[cut]
    assert (round(ours["psds1"]["value"], 7), round(ours["psds2"]["value"], 7)) == expected
    from sedcontract.guard.render import psds_markdown  # what --format md prints

    assert ("cut at the clip durations (--psds-cut): 16 reference event(s), 102 score table(s)"
            if cut else "as they come, not cut at the clip durations") in psds_markdown(ours)


