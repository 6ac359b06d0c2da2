"""The controlled benchmark build: deterministic, sized as asked, labels true to the audio,
perturbations recorded, rebuilds skip valid files and repair corrupt ones."""

from __future__ import annotations

import json
import re
import wave

import numpy as np
import pytest
import torch

import sedcontract
from sedcontract.cli import main
from sedcontract.data.build import build_controlled, perturbation_for
from sedcontract.data.dataset import ControlledDataset
from sedcontract.data.perturb import FAMILIES, SEVERITIES
from sedcontract.data.scenes import make_scene
from sedcontract.errors import SedContractError

SIZES = {"train": 4, "validation": 2, "test": 10}


def read_wav(path) -> np.ndarray:
    with wave.open(str(path)) as f:
        assert (f.getframerate(), f.getnchannels(), f.getsampwidth()) == (16_000, 1, 2)
        return np.frombuffer(f.readframes(f.getnframes()), dtype="<i2") / 32767


def manifest(root, split):
    return [json.loads(line) for line in (root / "controlled" / f"{split}.jsonl").read_text()
            .splitlines()]


def test_two_builds_are_byte_identical(tmp_path):
    a = build_controlled(tmp_path / "a", seed=1, sizes=SIZES, log=lambda _: None)
    b = build_controlled(tmp_path / "b", seed=1, sizes=SIZES, log=lambda _: None)
    assert a.manifest_hash == b.manifest_hash
    files = sorted(p.relative_to(a.root) for p in a.root.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b.root) for p in b.root.rglob("*") if p.is_file())
    assert all((a.root / f).read_bytes() == (b.root / f).read_bytes() for f in files)
    other = build_controlled(tmp_path / "c", seed=2, sizes=SIZES, log=lambda _: None)
    assert other.manifest_hash != a.manifest_hash


def test_split_sizes_manifests_and_reference_files(tmp_path):
    build_controlled(tmp_path, seed=0, sizes=SIZES, log=lambda _: None)
    for split, count in SIZES.items():
        items = manifest(tmp_path, split)
        assert len(items) == count
        ref = sedcontract.read_events(tmp_path / "controlled" / f"{split}.tsv")
        assert set(ref.clips) == {item["id"] for item in items}
        assert set(ref.classes) <= {"speech", "tone", "burst"}
        assert ref.offset.max() <= 10.0 and ref.onset.min() >= 0.0
    test = manifest(tmp_path, "test")
    assert [t["perturbation"]["family"] for t in test[:5]] == list(FAMILIES)
    assert test[7]["perturbation"]["severity"] == perturbation_for(7)[1]
    assert all(t["perturbation"] is None for t in manifest(tmp_path, "train"))


def test_labels_are_true_to_the_clean_audio(tmp_path):
    build_controlled(tmp_path, seed=0, sizes={"train": 6}, log=lambda _: None)
    for item in manifest(tmp_path, "train"):
        x = read_wav(tmp_path / "controlled" / item["audio"])
        inside = np.zeros(len(x), dtype=bool)
        for on, off, _ in item["events"]:
            inside[int(on * 16_000):int(off * 16_000)] = True
        inside_db = 10 * np.log10(np.mean(x[inside] ** 2))
        outside_db = 10 * np.log10(np.mean(x[~inside] ** 2) + 1e-12)
        assert inside_db - outside_db > 25, item["id"]


def test_rebuild_skips_valid_files_and_repairs_corrupt_ones(tmp_path):
    first = build_controlled(tmp_path, seed=0, sizes=SIZES, log=lambda _: None)
    again = build_controlled(tmp_path, seed=0, sizes=SIZES, log=lambda _: None)
    assert (again.written, again.skipped) == (0, sum(SIZES.values()))
    victim = first.root / "audio" / "train" / "train_0001.wav"
    good = victim.read_bytes()
    victim.write_bytes(good[:1000])  # truncated: its hash no longer matches
    repaired = build_controlled(tmp_path, seed=0, sizes=SIZES, log=lambda _: None)
    assert repaired.written == 1 and victim.read_bytes() == good
    (first.root / "manifest.json").unlink()  # an interrupted build: resume, no duplicates
    resumed = build_controlled(tmp_path, seed=0, sizes=SIZES, log=lambda _: None)
    assert resumed.written == 0 and resumed.manifest_hash == first.manifest_hash
    assert not list(first.root.rglob("*.partial"))


def test_a_changed_configuration_rebuilds_when_asked(tmp_path):
    build_controlled(tmp_path, seed=0, sizes={"train": 2}, log=lambda _: None)
    bigger = build_controlled(tmp_path, seed=0, sizes={"train": 3}, log=lambda _: None,
                              rebuild=True)
    assert bigger.skipped == 2 and bigger.written == 1


def test_a_benchmark_built_with_other_settings_is_refused_naming_them(tmp_path, capsys):
    """A data root holding the benchmark of another seed was silently rebuilt as data.seed:
    an experiment meant for the held-out benchmark trained on the default one."""
    build_controlled(tmp_path, seed=7, sizes={"train": 2, "test": 1}, log=lambda _: None)
    manifest_before = (tmp_path / "controlled" / "manifest.json").read_bytes()
    with pytest.raises(SedContractError, match=re.escape(
            "the controlled benchmark there was built with seed 7 (asked: 0), sizes "
            '{"test": 1, "train": 2} (asked: {"test": 1, "train": 3}); point the data root '
            "elsewhere, or replace it with data.rebuild=true")):
        build_controlled(tmp_path, seed=0, sizes={"train": 3, "test": 1}, log=lambda _: None)
    assert (tmp_path / "controlled" / "manifest.json").read_bytes() == manifest_before
    args = ["data", "build", "controlled", f"--root={tmp_path / 'cli'}", "--train=2",
            "--validation=1", "--test=1", "--speech-source=synthetic"]
    assert main([*args, "--seed=7"]) == 0
    assert main([*args, "--seed=0"]) == 2
    assert "built with seed 7 (asked: 0); point the data root" in capsys.readouterr().err
    assert main([*args, "--seed=7"]) == 0  # the same benchmark: verified, kept
    assert "is up to date" in capsys.readouterr().out
    assert main([*args, "--seed=0", "--rebuild"]) == 0
    assert json.loads((tmp_path / "cli" / "controlled" / "manifest.json").read_text())[
        "seed"] == 0


def test_jittered_items_carry_warped_labels(tmp_path):
    build_controlled(tmp_path, seed=0, sizes={"test": 5}, log=lambda _: None)
    jittered = manifest(tmp_path, "test")[4]
    assert jittered["perturbation"]["family"] == "jitter"
    sources = {round(s["offset"], 6) for s in jittered["sources"] if s["class"] != "speech"}
    onsets = {e[0] for e in jittered["events"] if e[2] != "speech"}
    assert sources != onsets  # label times moved with the warp
    shift = jittered["perturbation"]["max_shift"]
    assert min(abs(o - s) for o in onsets for s in sources) <= shift + 1e-6


def test_build_command(tmp_path, capsys):
    assert main(["data", "build", "controlled", f"--root={tmp_path}", "--train=2",
                 "--validation=1", "--test=2"]) == 0
    assert "manifest" in capsys.readouterr().out
    assert (tmp_path / "controlled" / "manifest.json").exists()
    assert main(["data", "build", "controlled", f"--root={tmp_path}", "--train=-1"]) == 2


def test_dataset_items_match_the_manifest(tmp_path):
    build_controlled(tmp_path, seed=0, sizes={"train": 3}, log=lambda _: None)
    data = ControlledDataset(tmp_path, "train", hop=0.02)
    assert len(data) == 3
    item = data[1]
    assert item["waveform"].dtype == torch.float32 and item["waveform"].shape == (160_000,)
    assert item["activity"].shape == (3, 500) and item["onset"].shape == (3, 500)
    k = data.classes.index(item["events"][0][2])
    first = int(np.ceil(item["events"][0][0] / 0.02 - 0.5))  # first frame centre inside
    assert item["activity"][k, first] == 1 and item["onset"][k, first] == 1
    assert item["activity"][k, first - 1] == 0
    manifest_item = manifest(tmp_path, "train")[1]
    assert item["id"] == manifest_item["id"] and item["events"] == manifest_item["events"]
    with pytest.raises(SedContractError, match="build the benchmark first"):
        ControlledDataset(tmp_path, "test")


@pytest.mark.parametrize("family", ["noise", "reverb", "clipping", "gain_drift", "jitter"])
def test_perturbations_change_audio_and_keep_labels_as_documented(family):
    clean, clean_record = make_scene(21)
    noisy, record = make_scene(21, perturbation=(family, SEVERITIES[family][-1]))
    assert not np.allclose(clean, noisy)
    assert record["perturbation"]["family"] == family
    if family == "jitter":
        assert record["events"] != clean_record["events"]
        shift = SEVERITIES["jitter"][-1]
        for (a, b, la), (c, d, lc) in zip(clean_record["events"], record["events"], strict=True):
            assert la == lc and abs(a - c) <= shift + 1e-6 and abs(b - d) <= shift + 1e-6
    else:
        assert record["events"] == clean_record["events"]


def test_rebuild_repairs_reference_files_and_rejects_negative_seeds(tmp_path, capsys):
    build_controlled(tmp_path, seed=0, sizes={"train": 2}, log=lambda _: None)
    folder = tmp_path / "controlled"
    good = (folder / "train.tsv").read_bytes()
    (folder / "train.tsv").unlink()
    (folder / "train_durations.tsv").write_text("junk\n")
    build_controlled(tmp_path, seed=0, sizes={"train": 2}, log=lambda _: None)
    assert (folder / "train.tsv").read_bytes() == good
    assert (folder / "train_durations.tsv").read_text().startswith("filename\tduration")
    assert main(["data", "build", "controlled", f"--root={tmp_path}", "--seed=-1"]) == 2
    assert "non-negative" in capsys.readouterr().err


def test_impulsive_burst_labels_end_with_sound(tmp_path):
    for seed in range(40):
        audio, record = make_scene(seed)
        for on, off, label in record["events"]:
            if label == "burst":
                tail = audio[int((off - 0.02) * 16_000):int(off * 16_000)]
                assert np.abs(tail).max() > 0, (seed, on, off)


SMALL = {"train": 2, "validation": 0, "test": 1}


def test_an_empty_split_builds_again_and_loads(tmp_path):
    first = build_controlled(tmp_path, sizes=SMALL, speech_source="synthetic", log=print)
    assert (tmp_path / "controlled" / "validation.jsonl").read_bytes() == b""
    again = build_controlled(tmp_path, sizes=SMALL, speech_source="synthetic", log=print)
    assert (again.written, again.manifest_hash) == (0, first.manifest_hash)
    assert len(ControlledDataset(tmp_path, "validation")) == 0


@pytest.mark.parametrize("text", ['{"config_hash": "trunc', "[]", "null", '{"splits": 3}',
                                  "\xff\xfe"])
def test_a_corrupt_manifest_is_rebuilt_not_a_traceback(tmp_path, text):
    first = build_controlled(tmp_path, sizes=SMALL, speech_source="synthetic", log=print)
    top = tmp_path / "controlled" / "manifest.json"
    top.write_text(text, encoding="latin-1")
    notes = []
    again = build_controlled(tmp_path, sizes=SMALL, speech_source="synthetic", log=notes.append)
    assert again.manifest_hash == first.manifest_hash and again.written == 0
    assert any("not a manifest of this build" in n for n in notes)
    assert json.loads(top.read_text())["manifest_hash"] == first.manifest_hash


def test_a_corrupt_split_manifest_is_rebuilt_and_named_when_read(tmp_path):
    build_controlled(tmp_path, sizes=SMALL, speech_source="synthetic", log=print)
    split = tmp_path / "controlled" / "train.jsonl"
    split.write_text('{"id": "train_0000"}\nnot json\n')
    with pytest.raises(SedContractError, match=r"train\.jsonl, line 2: not JSON"):
        ControlledDataset(tmp_path, "train")
    build_controlled(tmp_path, sizes=SMALL, speech_source="synthetic", log=print)
    assert len(ControlledDataset(tmp_path, "train")) == 2


@pytest.mark.parametrize(("sizes", "fragment"), [
    ({"train": -1}, "needs a non-negative number of scenes, got -1"),
    ({"train": 2.5}, "got 2.5"),
    ({"tset": 2}, "unknown split(s) ['tset']"),
    ("test:12", "must map splits to scene counts"),
])
def test_sizes_are_checked(tmp_path, sizes, fragment):
    with pytest.raises(SedContractError, match=re.escape(fragment)):
        build_controlled(tmp_path, sizes=sizes, log=print)
    assert not (tmp_path / "controlled").exists()


def test_the_benchmarks_readers_refuse_a_pipe_instead_of_blocking(tmp_path):
    """A FIFO where a manifest or a clip's audio should be is named, never opened."""
    import os

    from sedcontract.data.build import read_jsonl
    from sedcontract.data.dataset import read_wav
    from tests.helpers.limits import without_blocking

    for name, reader in (("train.jsonl", read_jsonl), ("clip.wav", read_wav)):
        os.mkfifo(tmp_path / name)
        with pytest.raises(SedContractError, match=f"{name}: not a regular file"):
            without_blocking(lambda r=reader, n=name: r(tmp_path / n), tmp_path / name)
