"""MAESTRO Real in the training framework: windows with targets cut from the file reference,
the monitor merging a file's window scores back to file time (equal to ``audit`` on the merged
events), and ``train.py`` / ``evaluate.py`` with ``data=maestro_real`` on the fixture tree."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
import soundfile

from sedcontract.data.maestro import EVALUATED, MaestroFile
from sedcontract.data.maestro_dataset import MaestroWindows
from sedcontract.errors import SedContractError
from sedcontract.evaluation import evaluate
from sedcontract.guard import AuditPolicy, audit
from sedcontract.lightning.datamodule import MaestroDataModule, collate_files
from sedcontract.lightning.metric import ContractMonitor
from sedcontract.traces import EventList
from sedcontract.training import train
from tests.helpers.corpora import MAESTRO_EVENTS, write_maestro
from tests.helpers.training import compose_config

HOP = 0.02


@pytest.fixture
def tree(tmp_path):
    return write_maestro(tmp_path / "maestro")


def module(root, **options):
    data = MaestroDataModule(root, policy=AuditPolicy(hop=HOP), **options)
    data.prepare_data()
    return data


def test_windows_carry_the_file_reference_cut_to_them(tree):
    data = module(tree, fold=1)  # validation: metro_station_01; training: cafe_restaurant_00
    train_set = data.dataset("train")
    assert [w[1:] for w in train_set.windows] == [(0.0, 10.0), (5.0, 12.0)]
    second = train_set[1]
    assert second["id"] == "cafe_restaurant_00-000500-001200"
    assert second["waveform"].shape == (7 * 16_000,)
    talking = second["activity"][EVALUATED.index("people talking")]
    # people talking 4–6 s of the file is 0–1 s of the window starting at 5 s
    assert talking.shape == (350,) and talking[:50].all() and not talking[50:].any()
    assert second["onset"][EVALUATED.index("people talking")].sum() == 0  # begun before
    files = data.dataset("validation")
    assert files.ids == ["metro_station_01"] and len(files[0]["windows"]) == 1
    ref, durations = data.reference("validation")
    assert ref.clips == ("metro_station_01",) and durations == {"metro_station_01": 9.5}


def reference_scores(batch):
    """Window scores equal to the window targets (what a perfect detector outputs)."""
    return batch["activity"].clone()


def test_the_monitor_merges_windows_into_the_file_report(tree):
    data = module(tree, fold=0, eval_hop=5.0)  # validation: cafe_restaurant_00, 2 windows
    ref, durations = data.reference("validation")
    policy = AuditPolicy(hop=HOP)
    monitor = ContractMonitor(ref, durations, data.classes, policy,
                              windows=data.windows("validation"))
    batch = collate_files([data.dataset("validation")[0]])
    assert batch["id"] == ["cafe_restaurant_00-000000-001000",
                           "cafe_restaurant_00-000500-001200"]
    scores = reference_scores(batch)
    car = EVALUATED.index("car")
    scores[1, car, 400:] = 1.0  # past window 2's 350 frames: batch padding, never merged
    scores[1, car, 300:340] = 1.0  # window 2's 6–6.8 s = file 11–11.8 s
    monitor.update(scores, batch["id"])
    report = monitor.compute().report
    events = monitor.predicted()
    # 11–11.8 s is covered by window 2 alone: its score stands
    assert ("cafe_restaurant_00", 11.0, 11.8, "car") in \
        [(c, round(a, 6), round(b, 6), lab) for c, a, b, lab in events.to_rows()]
    expected = audit(ref, events, policy, durations=durations, classes=data.classes)
    assert json.dumps(report.arrays(), default=str) == json.dumps(expected.arrays(), default=str)
    truth = {(c, a, b, lab) for c, a, b, lab in MAESTRO_EVENTS if c == "cafe_restaurant_00"}
    assert truth <= {(c, round(a, 6), round(b, 6), lab) for c, a, b, lab in events.to_rows()}


def test_a_batch_missing_a_window_of_its_file_is_refused(tree):
    data = module(tree, fold=0)
    ref, durations = data.reference("validation")
    monitor = ContractMonitor(ref, durations, data.classes, AuditPolicy(hop=HOP),
                              windows=data.windows("validation"))
    batch = collate_files([data.dataset("validation")[0]])
    with pytest.raises(SedContractError, match="holds 1 of the 2 windows of 'cafe_restaurant_00'"):
        monitor.update(batch["activity"][:1], batch["id"][:1])
    with pytest.raises(SedContractError, match="not a window of this split"):
        monitor.update(batch["activity"][:1], ["cafe_restaurant_00"])


@pytest.mark.parametrize("drop, message", [
    ("cafe_restaurant_00-000000-001000", "no window covers 0–5 s of file 'cafe_restaurant_00': "
                                         "its first window's scores are missing"),
    ("cafe_restaurant_00-000500-001200", "no window covers 10–12 s of file "
                                         "'cafe_restaurant_00' .*its last window's scores"),
], ids=["first", "last"])
def test_windows_missing_a_files_start_or_end_are_refused_before_any_audit(tree, drop,
                                                                           message):
    """The monitor checks a split's windows as ``audit`` checks a score folder's
    (``check_windows``): a file whose first or last window is missing is refused by name, not
    audited with silence where the window's scores would be."""
    data = module(tree, fold=0, eval_hop=5.0)  # validation: cafe_restaurant_00, 2 windows
    ref, durations = data.reference("validation")
    windows = {k: v for k, v in data.windows("validation").items() if k != drop}
    with pytest.raises(SedContractError, match=message):
        ContractMonitor(ref, durations, data.classes, AuditPolicy(hop=HOP), windows=windows)


def test_training_without_the_audio_is_refused_by_name(tmp_path):
    """Annotations alone are enough to audit (durations from the last segment), not to
    train."""
    root = write_maestro(tmp_path / "annotations", audio=False)
    data = module(root, fold=0)
    # the last annotated segments end at 12 s and 9.5 s (a short last segment)
    assert data.load().durations == {"cafe_restaurant_00": 12.0, "metro_station_01": 9.5}
    assert "2 from the last annotated segment" in data.load().duration_source
    with pytest.raises(SedContractError, match=r"no audio for MAESTRO file.* metro_station_01"):
        data.dataset("train")


def test_named_validation_files_replace_the_fold(tree):
    data = module(tree, validation_files=["metro_station_01"])
    assert [f.file for f in data.files("validation")] == ["metro_station_01"]
    assert [f.file for f in data.files("train")] == ["cafe_restaurant_00"]
    wrong = module(tree, validation_files=["metro_station_99"])
    with pytest.raises(SedContractError, match="names 'metro_station_99', which is not one of "
                                               "the 2 annotated files"):
        wrong.files("validation")


@pytest.mark.parametrize("options, message", [
    ({"window": 10.01}, "data.window must be a positive multiple of the grid hop"),
    ({"train_hop": 12.0}, "longer than the window"),
    ({"fold": 5}, "data.fold must be one of 0 … 4"),
    ({"classes": ["car", "dragon"]}, "unknown MAESTRO class"),
])
def test_bad_options_are_refused(tree, options, message):
    with pytest.raises(SedContractError, match=message):
        MaestroDataModule(tree, policy=AuditPolicy(hop=HOP), **options)


def test_train_and_evaluate_on_the_fixture(tree, tmp_path):
    overrides = [f"paths.output_dir={tmp_path / 'run'}", "data=maestro_real",
                 f"data.root={tree}", "data.num_workers=0", "data.batch_size=2",
                 "data.fold=0", "trainer=cpu", "logger=csv", "trainer.max_epochs=1",
                 "model=temporal_cnn", "+trainer.enable_progress_bar=false",
                 "+trainer.enable_model_summary=false"]
    metrics, _ = train(compose_config("train", overrides))
    assert 0.0 <= metrics["val/logic"] <= 1.0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "run" / "val_report.csv").read_text())))
    assert {r["clip"] for r in rows if r["role"] not in ("setting", "ranking")} == \
        {"cafe_restaurant_00"}  # files, not windows
    soft = {r["class"]: r for r in rows if r["coordinate"] == "softness"}
    assert soft["cutlery and dishes"]["satisfied"] == "1600"
    assert soft["people talking"]["obligations"] == "7000"
    checkpoint = next((tmp_path / "run" / "checkpoints").glob("*.ckpt"))
    eval_overrides = [f"paths.output_dir={tmp_path / 'eval'}", "data=maestro_real",
                      f"data.root={tree}", "data.num_workers=0", "data.fold=0",
                      "trainer=cpu", f"ckpt_path={checkpoint}", "split=test"]
    metrics, _ = evaluate(compose_config("eval", eval_overrides))
    report = json.loads((tmp_path / "eval" / "test_report.json").read_text())
    assert report["traces"]["clips"] == 1
    assert np.isclose(metrics["test/logic"], report["modes"]["typed"]["logic"])


def test_a_stereo_file_is_read_as_the_mean_of_its_channels_window_by_window(tmp_path):
    """A window of a stereo file is the mean of its channels over the window's samples (not
    the first channel, not their sum)."""
    left = np.linspace(-0.5, 0.5, 32_000, dtype=np.float32)
    right = np.full(32_000, 0.25, dtype=np.float32)
    path = tmp_path / "cafe_restaurant_00.wav"
    soundfile.write(path, np.stack([left, right], axis=1), 16_000, subtype="FLOAT")
    file = MaestroFile("cafe_restaurant", "cafe_restaurant_00", tmp_path / "none.txt", path)
    windows = MaestroWindows([file], EventList.from_rows([], clips=(file.file,)),
                             {file.file: 2.0}, length=1.0, hop=0.5, grid=HOP,
                             classes=EVALUATED)
    assert [w[1:] for w in windows.windows] == [(0.0, 1.0), (0.5, 1.5), (1.0, 2.0)]
    wave = windows.audio("cafe_restaurant_00", 0.5, 1.5)
    assert tuple(wave.shape) == (16_000,)
    np.testing.assert_allclose(wave.numpy(), (left + right)[8_000:24_000] / 2, rtol=0,
                               atol=1e-7)
