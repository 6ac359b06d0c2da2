"""The Mini LibriSpeech speech source on a small corpus written here in the real layout (flac
files and transcripts): speaker-disjoint splits, scenes cut from it, and clear errors."""

from __future__ import annotations

import json

import pytest

from sedcontract.cli import main
from sedcontract.data.build import build_controlled
from sedcontract.data.librispeech import index_subset, split_utterances
from sedcontract.errors import SedContractError
from tests.helpers.corpora import write_corpus


def test_index_and_speaker_disjoint_splits(tmp_path):
    root = write_corpus(tmp_path)
    assert len(index_subset(root, "train-clean-5")) == 8
    splits = split_utterances(root / "LibriSpeech")  # the LibriSpeech folder itself works too
    train = {u.speaker for u in splits["train"]}
    validation = {u.speaker for u in splits["validation"]}
    assert train and validation and not train & validation
    assert {u.speaker for u in splits["test"]} == {"84"}
    assert splits["test"][0].transcript == "HELLO WORLD"


def test_scenes_cut_from_the_corpus(tmp_path):
    root = write_corpus(tmp_path / "corpus")
    logs = []
    build_controlled(tmp_path / "data", sizes={"train": 2, "test": 2},
                     speech_source="librispeech", librispeech_root=root, log=logs.append)
    train = [json.loads(line) for line in
             (tmp_path / "data" / "controlled" / "train.jsonl").read_text().splitlines()]
    speech = [s for item in train for s in item["sources"] if s["class"] == "speech"]
    assert speech and all(s["source"] == "librispeech" for s in speech)
    test = [json.loads(line) for line in
            (tmp_path / "data" / "controlled" / "test.jsonl").read_text().splitlines()]
    assert all(s["utterance"].startswith("84-") for item in test for s in item["sources"]
               if s["class"] == "speech")
    manifest = json.loads((tmp_path / "data" / "controlled" / "manifest.json").read_text())
    assert manifest["speech_source"] == "librispeech"


def test_auto_falls_back_visibly_and_librispeech_without_a_copy_is_an_error(tmp_path):
    logs = []
    build_controlled(tmp_path / "a", sizes={"train": 1}, speech_source="auto", log=logs.append)
    assert any("using the synthetic speech source" in line for line in logs)
    logs.clear()
    build_controlled(tmp_path / "b", sizes={"train": 1}, speech_source="auto",
                     librispeech_root=tmp_path / "nowhere", log=logs.append)
    assert any("expected <root>/LibriSpeech/<subset>" in line for line in logs)
    with pytest.raises(SedContractError, match="needs a local Mini LibriSpeech copy"):
        build_controlled(tmp_path / "c", sizes={"train": 1}, speech_source="librispeech")
    with pytest.raises(SedContractError, match="no LibriSpeech subset 'train-clean-5'"):
        build_controlled(tmp_path / "d", sizes={"train": 1}, speech_source="librispeech",
                         librispeech_root=tmp_path / "nowhere")


def test_malformed_corpus_names_the_file(tmp_path, capsys):
    root = write_corpus(tmp_path)
    transcript = root / "LibriSpeech" / "train-clean-5" / "19" / "1000" / "19-1000.trans.txt"
    transcript.write_text("19-1000-0000\n")
    with pytest.raises(SedContractError, match=r"19-1000.trans.txt, row 1"):
        index_subset(root, "train-clean-5")
    transcript.unlink()
    assert main(["data", "build", "controlled", f"--root={tmp_path / 'out'}", "--train=1",
                 "--validation=0", "--test=0", "--speech-source=librispeech",
                 f"--librispeech-root={root}"]) == 2
    assert "19-1000.trans.txt is missing" in capsys.readouterr().err
