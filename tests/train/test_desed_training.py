"""DESED in the training framework: the strong sets of a local copy in the Task 4 baseline's
layout (the fixture tree of ``tests.corpora``) as 10 s clips with frame targets, the splits
(synthetic train, synthetic or held-out validation, real validation as test), the exact
monitor on the real validation's rounded durations, ``train.py`` / ``evaluate.py`` with
``data=desed``, bad input named by key, file and row, and ``scripts/fetch_desed.py``."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import tarfile

import numpy as np
import pytest
import soundfile

from sedcontract.config import report_errors
from sedcontract.data.desed import CLASSES, audio_files, durations_of, read_set
from sedcontract.data.desed_dataset import DesedClips
from sedcontract.errors import SedContractError
from sedcontract.evaluation import evaluate
from sedcontract.guard import AuditPolicy, audit
from sedcontract.lightning.datamodule import DesedDataModule, collate
from sedcontract.lightning.metric import ContractMonitor
from sedcontract.traces import EventList
from sedcontract.training import train
from tests.helpers.corpora import write_desed
from tests.helpers.limits import without_blocking
from tests.helpers.scripts import script
from tests.helpers.training import compose_config

HOP = 0.02
REAL = "metadata/validation/validation.tsv"
SYNTH_TSV = "metadata/train/synthetic21_train/soundscapes.tsv"


@pytest.fixture
def tree(tmp_path):
    return write_desed(tmp_path / "desed")


def module(root, **options):
    data = DesedDataModule(root, policy=AuditPolicy(hop=HOP), **options)
    data.prepare_data()
    return data


def test_items_are_10_s_clips_with_the_targets_of_their_events(tree):
    data = module(tree)
    train_set = data.dataset("train")
    s0 = train_set[train_set.ids.index("s0")]
    assert s0["waveform"].shape == (160_000,) and s0["activity"].shape == (10, 500)
    dog, speech = s0["activity"][CLASSES.index("Dog")], s0["activity"][CLASSES.index("Speech")]
    # Dog [1.0, 2.5): frame k is active iff (k + 0.5) * 0.02 s lies inside: frames 50 … 124
    assert dog[50:125].all() and not dog[:50].any() and not dog[125:].any()
    assert speech[200:].all() and not speech[:200].any()
    assert s0["onset"][CLASSES.index("Dog")].nonzero().flatten().tolist() == [50]
    assert s0["offset"][CLASSES.index("Dog")].nonzero().flatten().tolist() == [125]
    assert s0["offset"][CLASSES.index("Speech")].sum() == 0  # runs to the (open) clip end
    others = [k for k in range(10) if k not in (CLASSES.index("Dog"), CLASSES.index("Speech"))]
    assert s0["activity"][others].sum() == 0
    s2 = train_set[train_set.ids.index("s2")]  # 8 s of audio, padded to 10 s
    assert s2["waveform"].shape == (160_000,)
    assert s2["waveform"][128_000:].abs().sum() == 0 and s2["waveform"][:128_000].abs().sum() > 0
    real = data.dataset("test")[0]  # listed as 9.7 s (audio 9.73 s): cut to its duration
    assert real["id"] == "Y1_0.000_10.000"
    assert real["waveform"].shape == (155_200,) and real["activity"].shape == (10, 485)
    assert real["activity"][CLASSES.index("Dog")][250:].all()  # Dog 5.0 s to the clip's end


def test_the_splits_name_the_right_clips(tree):
    data = module(tree)
    assert data.dataset("train").ids == ["s0", "s1", "s2", "s3"]
    ref, durations = data.reference("validation")  # v1: a filename-only row
    assert ref.clips == ("v0", "v1") and durations == {"v0": 10.0, "v1": 10.0}
    assert ref.to_rows() == [("v0", 0.5, 1.5, "Dishes")]
    ref, durations = data.reference("test")  # Y2 is only in the durations tsv
    assert durations == {"Y1_0.000_10.000": 9.7, "Y2_30.000_40.000": 10.0}
    # the Dog event ending 0.115 s past the rounded duration is cut there, not refused
    assert sorted(ref.to_rows()) == [("Y1_0.000_10.000", 0.2, 3.0, "Speech"),
                                     ("Y1_0.000_10.000", 5.0, 9.7, "Dog")]
    assert data.read("test").cut == 1
    chosen = module(tree, classes=["Dog", "Dishes"])
    assert [r[3] for r in chosen.reference("test")[0].to_rows()] == ["Dog"]
    assert chosen.dataset("train")[0]["activity"].shape == (2, 500)


def test_without_a_synthetic_validation_tsv_part_of_train_is_held_out(tree):
    (tree / "metadata/validation/synthetic21_validation/soundscapes.tsv").unlink()
    data = module(tree, held_out=0.5, seed=3)
    held, kept = data.dataset("validation").ids, data.dataset("train").ids
    assert len(held) == 2 and sorted(held + kept) == ["s0", "s1", "s2", "s3"]
    assert module(tree, held_out=0.5, seed=3).dataset("validation").ids == held
    assert data.reference("validation")[1] == dict.fromkeys(held, 10.0)
    forced = module(write_desed(tree.parent / "again"), validation="held_out")
    assert len(forced.dataset("validation").ids) == 1  # at least one clip
    assert len(forced.dataset("train").ids) == 3
    with pytest.raises(SedContractError, match=r"data.layout.synth_val_tsv: .* does not exist"):
        module(tree, validation="synthetic")


def test_the_monitor_audits_the_real_validation_on_its_listed_durations(tree):
    data = module(tree)
    ref, durations = data.reference("test")
    policy = AuditPolicy(hop=HOP)
    monitor = ContractMonitor(ref, durations, data.classes, policy, windows=data.windows("test"))
    batch = collate([data.dataset("test")[k] for k in range(2)])
    assert batch["frames"].tolist() == [485, 500]
    monitor.update(batch["activity"].clone(), batch["id"])  # a perfect detector
    events = monitor.predicted()
    assert sorted((c, round(a, 6), round(b, 6), lab) for c, a, b, lab in events.to_rows()) == \
        sorted(ref.to_rows())
    report = monitor.compute().report
    expected = audit(ref, events, policy, durations=durations, classes=data.classes)
    assert json.dumps(report.arrays(), default=str) == json.dumps(expected.arrays(), default=str)
    assert report.traces["clips"] == 2  # Y2, without events, is audited (its silence counts)


def test_files_at_another_rate_are_resampled(tmp_path):
    root = write_desed(tmp_path / "desed", real_rate=44_100,
                       real_folder="audio/validation/validation")
    data = module(root, layout={"test_folder": "audio/validation/validation"})
    item = data.dataset("test")[1]
    assert item["waveform"].shape == (160_000,) and item["sample_rate"] == 16_000


def overrides_for(tree, out):
    return [f"paths.output_dir={out}", "data=desed", f"data.root={tree}",
            "data.num_workers=0", "data.batch_size=2", "trainer=cpu", "logger=csv",
            "trainer.max_epochs=1", "model=temporal_cnn", "+trainer.enable_progress_bar=false",
            "+trainer.enable_model_summary=false"]


def test_train_and_evaluate_on_the_fixture(tree, tmp_path, capsys):
    metrics, objects = train(compose_config("train", overrides_for(tree, tmp_path / "run")))
    assert 0.0 <= metrics["val/logic"] <= 1.0
    assert objects["model"].classes == CLASSES
    rows = list(csv.DictReader(io.StringIO((tmp_path / "run" / "val_report.csv").read_text())))
    # the synthetic validation set (setting and ranking rows are about the corpus: clip "*")
    assert {r["clip"] for r in rows if r["role"] not in ("setting", "ranking")} == \
        {"v0", "v1"}
    checkpoint = next((tmp_path / "run" / "checkpoints").glob("*.ckpt"))
    eval_overrides = [f"paths.output_dir={tmp_path / 'eval'}", "data=desed",
                      f"data.root={tree}", "data.num_workers=0", "trainer=cpu",
                      f"ckpt_path={checkpoint}", "split=test"]
    metrics, _ = evaluate(compose_config("eval", eval_overrides))
    report = json.loads((tmp_path / "eval" / "test_report.json").read_text())
    assert report["traces"]["clips"] == 2  # the real validation set
    assert np.isclose(metrics["test/logic"], report["modes"]["typed"]["logic"])
    # an evaluation whose reference is a file it writes is refused before any work: it once
    # exited 0 with the reference replaced by the predictions
    predictions = tmp_path / "eval" / "test_report_pred.tsv"
    before = predictions.read_bytes()
    with pytest.raises(SystemExit) as stop:
        report_errors(evaluate)(compose_config("eval", [*eval_overrides,
                                                        f"data.layout.test_tsv={predictions}"]))
    assert stop.value.code == 2 and predictions.read_bytes() == before
    assert (f"cannot write {predictions}: it is also an input of this command "
            "(data.layout.test_tsv " in capsys.readouterr().err)
    # a score folder whose name a file holds: refused before test_report.* are written
    fresh = tmp_path / "eval2"
    fresh.mkdir()
    (fresh / "test_report_scores").write_text("mine")
    with pytest.raises(SystemExit):
        report_errors(evaluate)(compose_config("eval", [*eval_overrides[1:], "save_scores=true",
                                                        f"paths.output_dir={fresh}"]))
    err = capsys.readouterr().err
    assert f"cannot write the folder {fresh / 'test_report_scores'}: a file of that name" in err
    assert sorted(p.name for p in fresh.iterdir()) == ["test_report_scores"]


def fails_with(cfg, capsys) -> str:
    """What ``train.py`` says on standard error, checking it stops with status 2."""
    with pytest.raises(SystemExit) as stop:
        report_errors(train)(cfg)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_a_missing_folder_is_named_with_its_key(tree, tmp_path, capsys):
    shutil.rmtree(tree / "audio/train/synthetic21_train/soundscapes_16k")
    err = fails_with(compose_config("train", overrides_for(tree, tmp_path / "run")), capsys)
    assert "error: data.layout.synth_folder: " in err
    assert "audio/train/synthetic21_train/soundscapes_16k does not exist" in err
    (tree / "metadata/validation/validation_durations.tsv").unlink()
    with pytest.raises(SedContractError, match=r"data.layout.test_dur: .*validation_durations.tsv "
                                               "does not exist"):
        module(tree).reference("test")


def test_a_label_outside_the_classes_names_the_file_and_row(tree, tmp_path, capsys):
    path = tree / SYNTH_TSV
    lines = path.read_text().splitlines()
    lines[2] = lines[2].replace("Speech", "Dragon")
    path.write_text("\n".join(lines) + "\n")
    err = fails_with(compose_config("train", overrides_for(tree, tmp_path / "run")), capsys)
    assert f"{path}, row 3, column 'event_label': label 'Dragon' is not one of the 10 DESED " \
           "classes" in err


def test_unreadable_or_missing_audio_is_named(tree):
    (tree / "audio/train/synthetic21_train/soundscapes_16k/s1.wav").write_bytes(b"not audio")
    data = module(tree)
    with pytest.raises(SedContractError, match=r"s1.wav: cannot read audio"):
        data.dataset("train")[1]
    (tree / "audio/validation/validation_16k/Y2_30.000_40.000.wav").unlink()
    with pytest.raises(SedContractError, match=r"1 clip\(s\) of .*validation.tsv have no .wav "
                                               r"in .*first: Y2_30.000_40.000.wav.*"
                                               "data.missing_audio=skip"):
        data.reference("test")
    skipping = module(tree, missing_audio="skip")
    assert skipping.reference("test")[1] == {"Y1_0.000_10.000": 9.7}
    assert skipping.read("test").skipped == ("Y2_30.000_40.000",)


def test_an_event_far_past_its_clip_is_refused_by_row(tree):
    path = tree / REAL
    path.write_text(path.read_text().replace("9.815", "9.950"))
    with pytest.raises(SedContractError, match=r"validation.tsv, row 3, column 'offset': 1 "
                                               r"reference event\(s\) end past"):
        module(tree).reference("test")


@pytest.mark.parametrize("options, message", [
    ({"validation": "sometimes"}, "data.validation must be one of auto, synthetic, held_out"),
    ({"held_out": 1.0}, r"data.held_out must be a fraction in \(0, 1\)"),
    ({"classes": ["Dog", "Dragon"]}, "unknown DESED class"),
    ({"missing_audio": "ignore"}, "data.missing_audio must be one of error, skip"),
    ({"val_split": "dev"}, "unknown split 'dev'"),
])
def test_bad_options_are_refused(tree, options, message):
    with pytest.raises(SedContractError, match=message):
        DesedDataModule(tree, policy=AuditPolicy(hop=HOP), **options)


def test_the_paths_are_one_layout_value_and_its_old_keys_say_where_they_went(tree, tmp_path,
                                                                           monkeypatch, capsys):
    """The copy's paths are ``data.layout``: a key of it alone replaces the baseline's path, an
    unknown key or a path that is not text is refused by name, and the old top-level keys on
    the command line say where they went."""
    moved = module(tree, layout={"test_dur": None})
    assert moved.paths["test_dur"] is None and moved.paths["test_tsv"].endswith("validation.tsv")
    with pytest.raises(SedContractError, match=r"data.layout.test_duration is not a path of the "
                                               r"layout \(its paths: synth_folder, "):
        module(tree, layout={"test_duration": "x.tsv"})
    with pytest.raises(SedContractError, match=r"data.layout.synth_tsv must be a path, got 3"):
        module(tree, layout={"synth_tsv": 3})
    from sedcontract import training

    monkeypatch.setattr("sys.argv", ["train.py", "data=desed", "data.synth_tsv=x.tsv"])
    with pytest.raises(SystemExit) as stop:
        training.main()
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip() == (
        "error: data.synth_tsv is not a key of the training configs; it is "
        "data.layout.synth_tsv now")


def test_the_fetch_script_arranges_a_copy_and_writes_missing_durations(tmp_path, capsys):
    source = write_desed(tmp_path / "src", real_rate=44_100,
                         real_folder="audio/validation/validation")  # only the 44.1 kHz folder
    (source / "metadata/validation/validation_durations.tsv").unlink()
    archive = tmp_path / "desed.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for part in ("audio", "metadata"):
            tar.add(source / part, arcname=part)
    fetch_desed = script("fetch_desed")
    dest = tmp_path / "dest"
    assert fetch_desed.main(["--dest", str(dest), "--archive", str(archive)]) == 0
    out = capsys.readouterr().out
    assert "test_folder: no audio/validation/validation_16k/, using audio/validation/validation/" \
        in out
    assert "real validation set: 2 clips, 2 events (1 cut at their clip's end" in out
    assert f"data.root={dest} data.layout.test_folder=audio/validation/validation" in out
    written = soundfile.info(str(dest / "audio/validation/validation/Y1_0.000_10.000.wav"))
    assert (dest / "metadata/validation/validation_durations.tsv").read_text().splitlines() == \
        ["filename\tduration", f"Y1_0.000_10.000.wav\t{written.duration!r}",
         "Y2_30.000_40.000.wav\t10.0"]
    assert "desed.tar.gz" in json.loads((dest / "checksums.json").read_text())
    (dest / SYNTH_TSV).unlink()
    assert fetch_desed.main(["--dest", str(dest)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fetch_desed: data.layout.synth_tsv: ") and "soundscapes.tsv does not " \
        "exist" in err


def test_a_shorter_clip_length_cuts_the_training_events_with_the_audio(tree):
    """clip_length 2 s: the training audio is cut there and so are its events (Dog [1.0, 2.5)
    ends at 2 s; Speech from 4 s lies wholly past the cut and covers no frame)."""
    data = module(tree, clip_length=2.0)
    train_set = data.dataset("train")
    s0 = train_set[train_set.ids.index("s0")]
    assert s0["waveform"].shape == (32_000,) and s0["activity"].shape == (10, 100)
    dog = s0["activity"][CLASSES.index("Dog")]
    assert dog[50:].all() and not dog[:50].any()
    assert s0["activity"][CLASSES.index("Speech")].sum() == 0
    assert data.read("synth").cut > 0


APPLE_DOUBLE = b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        " + b"\x00" * 40 + b"\xff"


def test_hidden_files_in_an_audio_folder_are_not_clips(tmp_path):
    """macOS's ``._Y1.wav`` (AppleDouble, not audio), ``.DS_Store`` and any other dot-file are
    left out of a set's audio: its clips are the tsv's, durations read from real headers."""
    folder, tsv = tmp_path / "audio", tmp_path / "set.tsv"
    folder.mkdir()
    for clip in ("Y1", "Y2"):
        soundfile.write(folder / f"{clip}.wav", np.zeros(1600), 16_000, subtype="PCM_16")
    (folder / "._Y1.wav").write_bytes(APPLE_DOUBLE)
    (folder / ".DS_Store").write_bytes(APPLE_DOUBLE)
    soundfile.write(folder / ".Y3.wav", np.zeros(800), 16_000, subtype="PCM_16")
    tsv.write_text("filename\tonset\toffset\tevent_label\nY1.wav\t0.0\t0.05\tDog\n"
                   "Y2.wav\t\t\t\n")
    assert audio_files(folder) == {"Y1": folder / "Y1.wav", "Y2": folder / "Y2.wav"}
    found = read_set("test", folder, tsv, None)
    assert found.audio == {"Y1": folder / "Y1.wav", "Y2": folder / "Y2.wav"}
    assert found.durations == {"Y1": 0.1, "Y2": 0.1} and found.skipped == ()


def clips_of(tmp_path, waves, lengths, rate=16_000):
    """A ``DesedClips`` of float WAV files ``{clip: samples [, channels]}`` at ``rate``."""
    audio = {}
    for clip, wave in waves.items():
        audio[clip] = tmp_path / f"{clip}.wav"
        soundfile.write(audio[clip], wave, rate, subtype="FLOAT")
    lengths = durations_of(audio) if lengths is None else lengths
    return DesedClips(audio, EventList.from_rows([], clips=tuple(audio)), lengths, grid=HOP,
                      classes=CLASSES, sample_rate=16_000)


def test_a_duration_a_hair_off_a_whole_sample_count_rounds_to_it(tmp_path):
    """Seconds → samples rounds to the nearest sample: 1001 samples at 16 kHz read back from
    the header as 1001 / 16000 s give 1000.9999999999999 samples, still 1001; a listed length
    just under (or over) 1000 samples cuts the clip to 1000."""
    assert 1001 / 16_000 * 16_000 < 1001  # the float product lands under the whole count
    ramp = np.arange(1001, dtype=np.float32) / 2048
    data = clips_of(tmp_path, {"a": ramp}, None)
    assert data.lengths == {"a": 1001 / 16_000}
    assert data.audio("a").numpy().tolist() == ramp.tolist()
    for seconds in (0.06249999, 0.06250001):  # 999.99984 and 1000.00016 samples
        data = clips_of(tmp_path, {"a": ramp}, {"a": seconds})
        assert data.audio("a").numpy().tolist() == ramp[:1000].tolist(), seconds
    padded = clips_of(tmp_path, {"a": ramp}, {"a": 0.0626249})  # 1001.9984: one zero added
    assert padded.audio("a").numpy().tolist() == [*ramp.tolist(), 0.0]


def test_a_stereo_file_is_read_as_the_mean_of_its_channels(tmp_path):
    """Channels are averaged to mono (not the first channel, not their sum)."""
    left = np.linspace(-0.5, 0.5, 1600, dtype=np.float32)
    right = np.full(1600, 0.25, dtype=np.float32)
    data = clips_of(tmp_path, {"st": np.stack([left, right], axis=1)}, None)
    wave = data.audio("st")
    assert tuple(wave.shape) == (1600,)
    np.testing.assert_allclose(wave.numpy(), (left + right) / 2, rtol=0, atol=1e-7)


# ---- audio read with its costs bounded first (issue 32) ----

def wav_header(rate: int, frames: int = 16) -> bytes:
    """A 16-bit mono PCM WAV whose header declares ``rate`` Hz (any value a broken file may
    hold), with ``frames`` silent samples."""
    import struct

    data = b"\0\0" * frames
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt "
            + struct.pack("<IHHIIHH", 16, 1, 1, rate, (2 * rate) & 0xFFFFFFFF, 2, 16)
            + b"data" + struct.pack("<I", len(data)) + data)


def test_a_text_file_named_wav_is_refused_before_training_by_its_name(tree, tmp_path, capsys):
    """It once surfaced through a DataLoader worker as that worker's whole traceback."""
    bad = tree / "audio/train/synthetic21_train/soundscapes_16k/s1.wav"
    bad.write_text("not audio at all\n")
    cfg = compose_config("train", [*overrides_for(tree, tmp_path / "run"), "data.num_workers=2"])
    err = fails_with(cfg, capsys)
    assert f"error: {bad}: cannot read audio" in err
    assert "Original Traceback" not in err and "DataLoader worker" not in err
    assert not (tmp_path / "run" / "checkpoints").exists()


def test_a_relayed_worker_error_is_cut_to_its_message():
    from sedcontract.config import relayed

    text = ("Caught SedContractError in DataLoader worker process 0.\nOriginal Traceback (most "
            "recent call last):\n  File \"x.py\", line 1, in f\n    g()\n"
            "sedcontract.errors.SedContractError: /data/s1.wav: cannot read audio (bad)\n")
    assert relayed(text) == "/data/s1.wav: cannot read audio (bad)"
    assert relayed("plain message") == "plain message"


@pytest.mark.parametrize(("rate", "message"), [
    (2 ** 31 - 1, "declares a sample rate of 2147483647 Hz, outside (0, 768000] Hz"),
    (44_101, "resampling 44101 Hz to 16000 Hz needs a kernel of 706,160,000 cells"),
])
def test_a_header_with_an_unusable_sample_rate_is_refused_before_resampling(tree, rate,
                                                                            message):
    """A header declaring 2³¹−1 Hz made the resampler ask for gigabytes; a rate prime to the
    run's makes torchaudio's kernel rows × taps of the full rates."""
    (tree / "audio/train/synthetic21_train/soundscapes_16k/s1.wav").write_bytes(wav_header(rate))
    with pytest.raises(SedContractError, match=re.escape(message)) as info:
        module(tree).dataset("train")
    assert "s1.wav" in str(info.value)


def test_a_durations_row_past_the_audio_limit_is_refused_by_file_row_and_key(tree):
    """A durations row of 10⁶ s once asked for 64 GB of zero padding."""
    path = tree / "metadata/validation/validation_durations.tsv"
    path.write_text(path.read_text().replace("Y2_30.000_40.000.wav\t10.0",
                                             "Y2_30.000_40.000.wav\t1000000.0"))
    with pytest.raises(SedContractError, match=re.escape(
            f"{path}, row 3, column 'duration': 1e+06 s of audio is more than the limit of "
            "600 s per clip (data.max_seconds)")):
        module(tree).reference("test")
    assert module(tree, max_seconds=2e6).reference("test")[1]["Y2_30.000_40.000"] == 1e6
    with pytest.raises(SedContractError, match=r"DESED clip 'a': 20 s of audio is more than"):
        DesedClips({"a": tree / "x.wav"}, EventList.from_rows([]), {"a": 20.0}, grid=HOP,
                   classes=CLASSES, max_seconds=10.0)
    with pytest.raises(SedContractError, match=r"data.clip_length \(10 s\) is more than "
                                               r"data.max_seconds \(5 s\)"):
        DesedDataModule(tree, policy=AuditPolicy(hop=HOP), max_seconds=5.0)


def test_a_pipe_named_wav_is_refused_not_read_when_durations_come_from_headers(tmp_path):
    """Reading a header from a FIFO blocks until a writer comes: never opened."""
    import os

    folder = tmp_path / "audio"
    folder.mkdir()
    soundfile.write(folder / "v0.wav", np.zeros(1600), 16_000)
    os.mkfifo(folder / "v1.wav")
    tsv = tmp_path / "set.tsv"
    tsv.write_text("filename\tonset\toffset\tevent_label\nv0.wav\t\t\t\nv1.wav\t\t\t\n")
    for call in (lambda: read_set("synth_val", folder, tsv, None),
                 lambda: durations_of({"v1": folder / "v1.wav"})):
        with pytest.raises(SedContractError, match=r"v1\.wav: not a regular file"):
            without_blocking(call, folder / "v1.wav")


def test_archives_made_on_macos_are_read_without_their_hidden_copies(tmp_path):
    """``._x`` files and a ``__MACOSX`` mirror (what macOS puts in archives) are not the
    archive's: neither the ground truth, nor the audio folder, nor clips with durations."""
    from sedcontract.data.desed import locate, write_durations_of

    root = tmp_path / "eval"
    for folder in (root / "audio" / "eval", root / "__MACOSX" / "audio" / "eval"):
        folder.mkdir(parents=True)
        for clip in ("Y1", "Y2"):
            soundfile.write(folder / f"{clip}.wav", np.zeros(1600), 16_000)
    (root / "audio" / "eval" / "._Y1.wav").write_bytes(b"\0\5\26\7 AppleDouble")
    (root / "meta").mkdir()
    (root / "meta" / "gt.tsv").write_text("filename\tonset\toffset\tevent_label\n"
                                          "Y1.wav\t0.1\t0.2\tDog\n")
    (root / "meta" / "._gt.tsv").write_bytes(b"\0\5\26\7\xff\xfe not text")
    assert locate(root) == (root / "meta" / "gt.tsv", root / "audio" / "eval")
    assert write_durations_of(root / "audio" / "eval", tmp_path / "durations.tsv") == 2
    assert (tmp_path / "durations.tsv").read_text() == ("filename\tduration\nY1.wav\t0.1\n"
                                                        "Y2.wav\t0.1\n")


def test_a_clip_reads_only_the_samples_its_length_needs(tmp_path):
    """A file longer than data.max_seconds is fine when the clip's listed length is not: only
    that many samples are read (a whole file was read, then refused, inside a worker)."""
    soundfile.write(tmp_path / "long.wav", np.full(3 * 16_000, 0.25), 16_000)
    clips = DesedClips({"long": tmp_path / "long.wav"}, EventList.from_rows([]),
                       {"long": 1.0}, grid=HOP, classes=CLASSES, max_seconds=2.0)
    wave = clips.audio("long")
    assert wave.shape == (16_000,) and float(wave.abs().max()) == 0.25
