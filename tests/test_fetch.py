"""The fetch scripts, offline (archives in the real layouts served from file:// URLs):
extraction of tar and zip archives, checksum recording and checking, refusal of members that
escape the destination or are links, and the prepared files of MAESTRO Real and DESED."""

from __future__ import annotations

import importlib.util
import io
import json
import stat
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
import soundfile

from sedcontract.data import fetch
from sedcontract.data.librispeech import split_utterances
from sedcontract.errors import SedContractError
from sedcontract.traces import read_events
from tests.corpora import MAESTRO_EVENTS, write_maestro
from tests.test_librispeech import write_corpus

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def script(name: str):
    """A fetch script as a module (its ``main`` and URLs)."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    with pytest.raises(SedContractError, match="does not match"):
        fetch.verify(archive, "train-clean-5", "0" * 64, record)
    archive.write_bytes(archive.read_bytes()[:-10] + b"corrupted!")
    with pytest.raises(SedContractError, match="does not match the expected"):
        fetch.verify(archive, "train-clean-5", None, record)


def test_extract_refuses_members_outside_the_destination(tmp_path):
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"bad"))
    with pytest.raises(SedContractError, match="refusing member"):
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
    librispeech = script("fetch_mini_librispeech")
    monkeypatch.setattr(librispeech, "BASE_URL", served.as_uri())
    assert librispeech.main(["--dest", str(dest)]) == 0
    assert mine.exists()  # it was there before the run
    assert not (dest / "dev-clean-2.tar.gz").exists()  # downloaded by the run, then removed
    assert bystander.read_text() == "someone else's download"
    assert not [p for p in dest.iterdir() if p.name.endswith(".tmp")]


def zipped(source: Path, folder: str, target: Path) -> Path:
    with zipfile.ZipFile(target, "w") as zf:
        for path in sorted((source / folder).rglob("*")):
            zf.write(path, path.relative_to(source).as_posix())
    return target


def test_fetch_maestro_real_prepares_the_reference(tmp_path, monkeypatch, capsys):
    """The two Zenodo zips in their layout, served from file:// URLs: extracted, checksums
    recorded, the reference written under DEST/prepared."""
    source = write_maestro(tmp_path / "src")
    served = tmp_path / "served"
    served.mkdir()
    for name in ("development_annotation", "development_audio"):
        zipped(source, name, served / f"{name}.zip")
    maestro = script("fetch_maestro_real")
    monkeypatch.setattr(maestro, "URL", served.as_uri() + "/{name}")
    dest = tmp_path / "dest"
    assert maestro.main(["--dest", str(dest)]) == 0
    assert "ready: 2 files, 5 reference events of 11 classes (durations: 2 from the audio)" \
        in capsys.readouterr().out
    assert sorted(json.loads((dest / "checksums.json").read_text())) == \
        ["development_annotation.zip", "development_audio.zip"]
    assert not list(dest.glob("*.zip"))  # downloaded by the run, then removed
    assert len(read_events(dest / "prepared" / "maestro_real.tsv")) == len(MAESTRO_EVENTS)
    (served / "development_annotation.zip").write_bytes(b"PK\x03\x04 not what was recorded")
    assert maestro.main(["--dest", str(dest), "--keep-archives"]) == 2
    assert "does not match the expected" in capsys.readouterr().err


def test_zip_members_leaving_the_destination_or_links_are_refused(tmp_path):
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("../escape.txt", "bad")
    with pytest.raises(SedContractError, match=r"refusing member '\.\./escape\.txt'"):
        fetch.extract(evil, tmp_path / "dest")
    link = tmp_path / "link.zip"
    with zipfile.ZipFile(link, "w") as zf:
        info = zipfile.ZipInfo("inside/link")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(SedContractError, match="a link"):
        fetch.extract(link, tmp_path / "dest")
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "dest").exists()


def test_fetch_desed_public_eval_finds_the_truth_and_writes_durations(tmp_path, monkeypatch,
                                                                      capsys):
    source = tmp_path / "src" / "DESED_public_eval" / "dataset"
    (source / "metadata" / "eval").mkdir(parents=True)
    (source / "metadata" / "eval" / "public.tsv").write_text(
        "filename\tonset\toffset\tevent_label\nY1.wav\t0.5\t2.0\tDog\n")
    (source / "audio" / "eval" / "public").mkdir(parents=True)
    for clip in ("Y1", "Y2"):
        soundfile.write(source / "audio" / "eval" / "public" / f"{clip}.wav",
                        np.zeros(16_000 * 10), 16_000, subtype="PCM_16")
    served = tmp_path / "served"
    served.mkdir()
    with tarfile.open(served / "DESED_public_eval.tar.gz", "w:gz") as tar:
        tar.add(tmp_path / "src" / "DESED_public_eval", arcname="DESED_public_eval")
    desed = script("fetch_desed_public_eval")
    monkeypatch.setattr(desed, "URL", (served / "DESED_public_eval.tar.gz").as_uri())
    dest = tmp_path / "dest"
    assert desed.main(["--dest", str(dest)]) == 0
    assert "2 clips in" in capsys.readouterr().out
    assert (dest / "durations.tsv").read_text().splitlines()[1:] == ["Y1.wav\t10.0",
                                                                     "Y2.wav\t10.0"]
