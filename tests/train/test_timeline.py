"""Failure timelines mark exactly what the report counts: for every clip, coordinate and
class (and on the union trace), the failing frames or intervals drawn are the report's
obligations minus satisfied, and the obligations drawn are its obligations."""

from __future__ import annotations

import pytest

import sedcontract
from sedcontract.analysis.timeline import timeline, timeline_png, timeline_text
from sedcontract.cli import main
from sedcontract.data import pathology_set, write_pathology_set
from sedcontract.errors import SedContractError
from sedcontract.guard import AuditPolicy
from tests.helpers.examples import DURATION, reference


@pytest.fixture(scope="module")
def calibration():
    ref = reference()
    pathologies = {"late_release+fragmentation": [0.3], "missed+false": [0.5],
                   "leakage": [0.09], "class_swap": [1.0]}
    return pathology_set(ref, dict.fromkeys(ref.clips, DURATION), seed=3,
                         pathologies=pathologies)


@pytest.mark.parametrize("mode", ["typed", "union"])
def test_a_timeline_marks_exactly_what_the_report_counts(calibration, mode):
    data = calibration
    report = sedcontract.audit(data.ref, data.pred, durations=data.durations, mode=mode)
    modes = report.modes[mode]
    failures_seen = 0
    for clip in data.ref.clips[::3]:
        tl = timeline(data.ref, data.pred, AuditPolicy(), clip, durations=data.durations,
                      mode=mode)
        assert set(tl.outcomes) == {*report.coordinates, *modes.diagnostics}
        for name in tl.outcomes:
            cells = [modes.satisfied[name][i] for i, (c, _) in enumerate(modes.rows) if c == clip]
            obliged = [modes.obligations[name][i] for i, (c, _) in enumerate(modes.rows)
                       if c == clip]
            assert tl.obliged(name).tolist() == obliged, (clip, name)
            assert tl.failed(name).tolist() == [o - s for o, s in zip(obliged, cells,
                                                                      strict=True)], (clip, name)
            failures_seen += int(tl.failed(name).sum())
    assert failures_seen > 0


def test_timeline_text_and_png(calibration):
    data = calibration
    clip = next(c for c in data.ref.clips if "late_release" in c)
    tl = timeline(data.ref, data.pred, AuditPolicy(), clip, durations=data.durations)
    text = timeline_text(tl)
    assert text.startswith(f"clip {clip}: 300 frames of 0.02 s, typed traces, eps 10 frames")
    assert "fragmentation [speech]:" in text and "obliged intervals fail" in text
    png = timeline_png(tl, ["onset", "fragmentation"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(SedContractError, match="did you mean"):
        timeline(data.ref, data.pred, AuditPolicy(), clip.split("__")[0] + "__late",
                 durations=data.durations)


def test_show_command(tmp_path, capsys, calibration):
    write_pathology_set(tmp_path, calibration)
    clip = next(c for c in calibration.ref.clips if "missed+false" in c)
    args = ["show", "--ref", str(tmp_path / "ref.tsv"), "--pred", str(tmp_path / "pred.tsv"),
            "--durations", str(tmp_path / "durations.tsv"), "--clip", clip]
    assert main([*args, "--out", str(tmp_path / "clip.png")]) == 0
    out = capsys.readouterr().out
    assert f"clip {clip}" in out and "missed [" in out
    assert (tmp_path / "clip.png").read_bytes()[:4] == b"\x89PNG"
    assert main([*args, "--coordinates", "onset,nope"]) == 2
    assert "unknown coordinate 'nope'" in capsys.readouterr().err
    assert main([*args, "--out", str(tmp_path / "ref.tsv")]) == 2


def test_training_draws_the_worst_clip_of_each_coordinate(base):
    """The callback draws, per coordinate, the validation clip with the most failures, one
    figure per clip; every coordinate with a failure is drawn on its worst clip."""
    from pathlib import Path

    from sedcontract.lightning.callbacks import FailureTimelines
    from sedcontract.training import train
    from tests.helpers.training import compose_config

    cfg = compose_config("train", [*base, "model=logistic", "trainer.max_epochs=1"])
    _, objects = train(cfg)
    report = objects["model"].report
    folder = Path(cfg.paths.output_dir) / "timelines" / "epoch_000"
    chosen = FailureTimelines(folder).worst(report, set(report.clips))
    assert sorted(p.stem for p in folder.glob("*.png")) == sorted(chosen)
    modes = report.modes["typed"]
    for name in report.coordinates:
        cells = modes.per_clip(name)
        failing = {c: cells[c].obligations - cells[c].satisfied for c in cells}
        drawn = [c for c, names in chosen.items() if name in names]
        if max(failing.values()) > 0:
            assert len(drawn) == 1 and failing[drawn[0]] == max(failing.values()), name
        else:
            assert drawn == []
    assert chosen and all((folder / f"{c}.png").read_bytes()[:4] == b"\x89PNG" for c in chosen)


def test_the_timelines_of_one_epoch_are_logged_at_one_size(calibration, tmp_path):
    """Timelines differ in height (one lane per coordinate a clip is obliged by); the images
    one validation logs to W&B are padded to one size, each drawing kept at its top left."""
    from pathlib import Path
    from types import SimpleNamespace

    from lightning.pytorch.loggers import WandbLogger
    from PIL import Image

    from sedcontract.lightning.callbacks import FailureTimelines

    class Captured(WandbLogger):
        def __init__(self) -> None:  # no run: only what log_image is handed
            self.calls = []

        def log_image(self, key, images, step=None, **kwargs) -> None:
            self.calls.append((key, images, step, kwargs))

    data = calibration
    report = sedcontract.audit(data.ref, data.pred, durations=data.durations, mode="typed")
    logger = Captured()
    datamodule = SimpleNamespace(val_split="validation",
                                 reference=lambda split: (data.ref, data.durations))
    trainer = SimpleNamespace(sanity_checking=False, is_global_zero=True, current_epoch=0,
                              global_step=7, loggers=[logger], datamodule=datamodule)
    module = SimpleNamespace(report=report, predicted=data.pred, policy=AuditPolicy())
    folder = tmp_path / "timelines"
    FailureTimelines(folder).on_validation_end(trainer, module)

    drawn = sorted((folder / "epoch_000").glob("*.png"))
    sizes = {Path(p).stem: Image.open(p).size for p in drawn}
    assert len(set(sizes.values())) > 1, "the fixture draws timelines of different heights"
    [(key, images, step, kwargs)] = logger.calls
    assert key == "val/timeline" and step == 7 and len(images) == len(drawn)
    largest = (max(w for w, _ in sizes.values()), max(h for _, h in sizes.values()))
    assert {image.size for image in images} == {largest}
    for image, caption in zip(images, kwargs["caption"], strict=True):
        own = Image.open(folder / "epoch_000" / f"{caption.split(':')[0]}.png").convert("RGB")
        assert image.crop((0, 0, *own.size)).tobytes() == own.tobytes()


def test_classes_silent_on_both_sides_get_no_lanes():
    """A class with no reference and no predicted event in the clip, and no failure, is named
    once instead of drawn as empty lanes (text and figure); the others keep their lines."""
    from sedcontract.analysis.timeline import silent_rows
    from sedcontract.traces import EventList

    ref = EventList.from_rows([("x", 0.5, 2.0, "speech"), ("y", 1.0, 1.5, "tone")],
                              clips=("x", "y"))
    pred = EventList.from_rows([("x", 0.6, 2.0, "speech"), ("y", 3.0, 3.5, "burst")],
                               clips=("x", "y"))
    durations = {"x": 6.0, "y": 6.0}
    classes = ["burst", "speech", "tone"]
    expected = {"x": ["burst", "tone"], "y": ["speech"]}
    for clip in ("x", "y"):
        tl = timeline(ref, pred, AuditPolicy(), clip, durations=durations, classes=classes)
        silent = [tl.rows[r] for r in silent_rows(tl, list(tl.outcomes))]
        assert silent == expected[clip]
        text = timeline_text(tl)
        for row in tl.rows:
            assert (f"  [{row}] ref " in text) == (row not in silent), (clip, row)
        assert "silent on both sides, nothing failing: " + ", ".join(silent) in text
        assert timeline_png(tl)[:4] == b"\x89PNG"
    # a class whose only trace is a failure keeps its lines (y's burst: a false event)
    tl = timeline(ref, pred, AuditPolicy(), "y", durations=durations, classes=classes)
    assert "  [burst] ref none; pred 3.00–3.50 s" in timeline_text(tl)
