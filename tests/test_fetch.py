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


def test_fetch_keeps_what_it_did_not_create(tmp_path, monkeypatch):
    """An archive already in the destination is kept; one the run downloads (here from a
    file:// URL) is removed after extraction; an unrelated ``*.partial`` is never touched."""
    source = write_corpus(tmp_path / "src")
    served = tmp_path / "served"
    served.mkdir()
    tarball(source, served / "dev-clean-2.tar.gz")
    dest = tmp_path / "dest"
    dest.mkdir()
    mine = tarball(source, dest / "train-clean-5.tar.gz")
    bystander = dest / "dev-clean-2.tar.gz.partial"
    bystander.write_text("someone else's download")
    monkeypatch.setattr(fetch, "BASE_URL", served.as_uri())
    assert fetch.main(["--dest", str(dest)]) == 0
    assert mine.exists()  # it was there before the run
    assert not (dest / "dev-clean-2.tar.gz").exists()  # downloaded by the run, then removed
    assert bystander.read_text() == "someone else's download"
    assert not [p for p in dest.iterdir() if p.name.endswith(".tmp")]
