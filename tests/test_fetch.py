"""The Mini LibriSpeech fetch script, offline: extraction of a tarball in the real layout,
checksum recording and checking, and refusal of members that escape the destination."""

from __future__ import annotations

import importlib.util
import io
import tarfile
from pathlib import Path

import pytest

from sedcontract.data.librispeech import split_utterances
from tests.test_librispeech import write_corpus

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "fetch_mini_librispeech.py"
spec = importlib.util.spec_from_file_location("fetch_mini_librispeech", SCRIPT)
fetch = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fetch)


def tarball(source: Path, target: Path) -> Path:
    with tarfile.open(target, "w:gz") as tar:
        tar.add(source / "LibriSpeech", arcname="LibriSpeech")
    return target


def test_extract_and_verify_a_small_archive(tmp_path):
    archive = tarball(write_corpus(tmp_path / "src"), tmp_path / "train-clean-5.tar.gz")
    record = tmp_path / "dest" / "checksums.json"
    record.parent.mkdir()
    first = fetch.verify(archive, "train-clean-5", None, record)
    assert fetch.verify(archive, "train-clean-5", None, record) == first  # recorded, matches
    fetch.extract(archive, tmp_path / "dest")
    splits = split_utterances(tmp_path / "dest")
    assert len(splits["train"]) + len(splits["validation"]) == 8
    with pytest.raises(SystemExit, match="does not match"):
        fetch.verify(archive, "train-clean-5", "0" * 64, record)
    archive.write_bytes(archive.read_bytes()[:-10] + b"corrupted!")
    with pytest.raises(SystemExit, match="does not match the expected"):
        fetch.verify(archive, "train-clean-5", None, record)


def test_extract_refuses_members_outside_the_destination(tmp_path):
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"bad"))
    with pytest.raises(SystemExit, match="refusing member"):
        fetch.extract(evil, tmp_path / "dest")
    assert not (tmp_path / "escape.txt").exists()
