"""The fetch scripts, offline (archives in the real layouts served from file:// URLs):
extraction of tar and zip archives, checksum recording and checking, refusal of members that
escape the destination or are links, and the prepared files of MAESTRO Real and DESED."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
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
from tests.helpers.corpora import MAESTRO_EVENTS, write_corpus, write_maestro
from tests.helpers.scripts import SCRIPTS, script


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
    with pytest.raises(SedContractError, match="a symbolic link"):
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


def tar_of(target: Path, *members: tuple[tarfile.TarInfo, bytes | None]) -> Path:
    """A tar.gz of hand-made members (``None``: no data, e.g. a device or a link)."""
    with tarfile.open(target, "w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return target


def regular(name: str, data: bytes = b"data", mode: int = 0o644) -> tuple[tarfile.TarInfo,
                                                                           bytes]:
    info = tarfile.TarInfo(name)
    info.mode = mode
    return info, data


def special(name: str, kind: bytes, **fields) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    for key, value in fields.items():
        setattr(info, key, value)
    return info, None


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` (hidden ones included) with its bytes (None: a folder)."""
    return {p.relative_to(folder).as_posix(): None if p.is_dir() else p.read_bytes()
            for p in sorted(folder.rglob("*"))}


@pytest.mark.parametrize("member, says", [
    (special("data/null", tarfile.CHRTYPE, devmajor=1, devminor=3), "a character device"),
    (special("data/disk", tarfile.BLKTYPE, devmajor=8, devminor=0), "a block device"),
    (special("data/pipe", tarfile.FIFOTYPE), "a FIFO"),
    (special("data/link", tarfile.SYMTYPE, linkname="a.txt"), "a symbolic link"),
    (special("data/hard", tarfile.LNKTYPE, linkname="data/a.txt"), "a hard link"),
], ids=["chr", "blk", "fifo", "symlink", "hardlink"])
def test_tar_members_other_than_files_and_folders_are_refused(tmp_path, member, says):
    """Devices, FIFOs and links are refused, naming the archive and the member; the regular
    file before them is not left on disk (nothing is moved into place)."""
    archive = tar_of(tmp_path / "odd.tar.gz", regular("data/a.txt"), member)
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "mine.txt").write_text("kept")
    before = snapshot(dest)
    with pytest.raises(SedContractError, match=rf"odd\.tar\.gz: refusing member "
                                               rf"'{member[0].name}' \({says}"):
        fetch.extract(archive, dest)
    assert snapshot(dest) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dest", "odd.tar.gz"]


def test_setuid_root_member_is_extracted_as_a_plain_file_of_the_current_user(tmp_path):
    info, data = regular("bin/tool", b"#!/bin/sh\n", mode=0o4755)
    info.uid, info.gid, info.uname, info.gname = 0, 0, "root", "root"
    sticky, _ = regular("shared", b"x", mode=0o1777)
    archive = tar_of(tmp_path / "tool.tar.gz", (info, data), (sticky, b"x"),
                     special("bin", tarfile.DIRTYPE, mode=0o2755))
    fetch.extract(archive, tmp_path / "dest")
    tool = (tmp_path / "dest" / "bin" / "tool").stat()
    assert tool.st_mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX) == 0
    assert stat.S_ISREG(tool.st_mode) and tool.st_mode & stat.S_IRWXU == stat.S_IRWXU
    assert tool.st_uid == os.getuid()
    assert (tmp_path / "dest" / "shared").stat().st_mode & 0o7000 == 0
    assert (tmp_path / "dest" / "bin").stat().st_mode & 0o7000 == 0
    assert (tmp_path / "dest" / "bin" / "tool").read_bytes() == b"#!/bin/sh\n"


@pytest.mark.parametrize("kind, says", [(stat.S_IFCHR, "a character device"),
                                        (stat.S_IFIFO, "a FIFO")], ids=["chr", "fifo"])
def test_zip_devices_and_fifos_are_refused(tmp_path, kind, says):
    archive = tmp_path / "odd.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("a.txt", "fine")
        info = zipfile.ZipInfo("dev")
        info.external_attr = (kind | 0o666) << 16
        zf.writestr(info, "")
    with pytest.raises(SedContractError, match=rf"refusing member 'dev' \({says}"):
        fetch.extract(archive, tmp_path / "dest")
    assert not (tmp_path / "dest").exists()


def corrupt_zip(target: Path) -> Path:
    """A zip whose second (stored) member's bytes no longer match its CRC."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("corpus/first.txt", "first member, fine\n")
        zf.writestr("corpus/second.txt", "second member, about to be corrupted\n")
    raw = bytearray(target.read_bytes())
    at = raw.index(b"about to be")
    raw[at:at + 5] = b"XXXXX"
    target.write_bytes(bytes(raw))
    return target


def test_a_corrupt_member_leaves_the_destination_as_it_was(tmp_path):
    archive = corrupt_zip(tmp_path / "bad.zip")
    dest = tmp_path / "dest"
    (dest / "corpus").mkdir(parents=True)
    (dest / "corpus" / "notes.txt").write_text("mine")
    before = snapshot(dest)
    with pytest.raises(SedContractError, match=r"bad\.zip: .*'corpus/second\.txt'.*CRC"):
        fetch.extract(archive, dest)
    assert snapshot(dest) == before  # first.txt not there, no temporary folder left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.zip", "dest"]


def test_existing_files_are_replaced_only_when_an_extraction_wrote_them(tmp_path):
    """A second extraction (a rerun, or a second archive sharing files) replaces the files an
    earlier one wrote (listed in DEST/extracted.json); a file it did not write is refused."""
    dest = tmp_path / "dest"
    first = tar_of(tmp_path / "one.tar.gz", regular("LibriSpeech/README.TXT", b"v1"),
                   regular("LibriSpeech/a/1.txt", b"one"))
    fetch.extract(first, dest)
    fetch.extract(first, dest)  # a rerun
    second = tar_of(tmp_path / "two.tar.gz", regular("LibriSpeech/README.TXT", b"v2"),
                    regular("LibriSpeech/b/2.txt", b"two"))
    fetch.extract(second, dest)
    assert (dest / "LibriSpeech" / "README.TXT").read_bytes() == b"v2"
    assert json.loads((dest / "extracted.json").read_text()) == {
        "one.tar.gz": ["LibriSpeech/README.TXT", "LibriSpeech/a/1.txt"],
        "two.tar.gz": ["LibriSpeech/README.TXT", "LibriSpeech/b/2.txt"]}
    (dest / "LibriSpeech" / "b" / "mine.txt").write_text("mine")
    clash = tar_of(tmp_path / "three.tar.gz", regular("LibriSpeech/c.txt", b"new"),
                   regular("LibriSpeech/b/mine.txt", b"theirs"))
    before = snapshot(dest)
    with pytest.raises(SedContractError, match=r"refusing member 'LibriSpeech/b/mine\.txt' "
                                               r"\(.*exists.*not written by an extraction"):
        fetch.extract(clash, dest)
    assert snapshot(dest) == before
    for reserved in ("checksums.json", "extracted.json"):
        with pytest.raises(SedContractError, match="reserved"):
            fetch.extract(tar_of(tmp_path / "r.tar.gz", regular(reserved, b"{}")), dest)
    assert snapshot(dest) == before
    (dest / "extracted.json").write_text('{"one.tar.gz": 3}')
    with pytest.raises(SedContractError, match=r"extracted\.json: expected a list"):
        fetch.extract(first, dest)


def test_a_symbolic_link_in_the_destination_is_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "data").symlink_to(outside)
    with pytest.raises(SedContractError, match=r"refusing member 'data/x\.txt' \(.*symbolic"):
        fetch.extract(tar_of(tmp_path / "a.tar.gz", regular("data/x.txt")), dest)
    assert not list(outside.iterdir())


def zeros_zip(target: Path, size: int) -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf, \
            zf.open("zeros.bin", "w") as out:
        for _ in range(size // (1 << 20)):
            out.write(bytes(1 << 20))
    return target


def test_the_expanded_size_is_bounded(tmp_path):
    archive = zeros_zip(tmp_path / "eight.zip", 8 << 20)
    assert archive.stat().st_size < 12_000
    with pytest.raises(SedContractError, match=r"eight\.zip: expands to more than 1000000 "
                                               r"bytes.*--max-bytes"):
        fetch.extract(archive, tmp_path / "dest", max_bytes=1_000_000)
    with pytest.raises(SedContractError, match=r"times its .* compressed bytes.*--max-ratio"):
        fetch.extract(archive, tmp_path / "dest", max_ratio=10, ratio_floor=0)
    assert not (tmp_path / "dest").exists()
    fetch.extract(archive, tmp_path / "dest")  # 8 MB: under the defaults
    assert (tmp_path / "dest" / "zeros.bin").stat().st_size == 8 << 20


def test_a_compression_bomb_is_refused_by_the_default_ratio(tmp_path):
    bomb = zeros_zip(tmp_path / "bomb.zip", 32 << 20)  # ~1000x, over the 16 MiB floor
    with pytest.raises(SedContractError, match="compressed bytes"):
        fetch.extract(bomb, tmp_path / "dest")
    assert not (tmp_path / "dest").exists()


def test_a_zip_declaring_a_false_size_is_refused(tmp_path):
    """A zip whose directory declares a small size for a large member is refused (its bytes
    do not match what it declares), and nothing lands in the destination."""
    archive = zeros_zip(tmp_path / "liar.zip", 4 << 20)
    raw = bytearray(archive.read_bytes())
    central = raw.rindex(b"PK\x01\x02")
    raw[central + 24:central + 28] = (1000).to_bytes(4, "little")  # uncompressed size
    archive.write_bytes(bytes(raw))
    with pytest.raises(SedContractError, match=r"liar\.zip: .*'zeros\.bin'"):
        fetch.extract(archive, tmp_path / "dest", max_bytes=2000)
    assert not (tmp_path / "dest").exists()


def test_bytes_are_counted_while_extracting(tmp_path, monkeypatch):
    """Declared sizes can lie: members declaring one byte each are still stopped by the bytes
    actually written."""
    members = fetch._zip_members

    def lying(zf):
        for name, kind, _, mode, opener in members(zf):
            yield name, kind, 1, mode, opener

    monkeypatch.setattr(fetch, "_zip_members", lying)
    archive = zeros_zip(tmp_path / "eight.zip", 8 << 20)
    with pytest.raises(SedContractError, match="expands to more than 1000000 bytes"):
        fetch.extract(archive, tmp_path / "dest", max_bytes=1_000_000)
    assert not (tmp_path / "dest").exists()


def test_archive_errors_are_one_message(tmp_path):
    truncated = tmp_path / "cut.tar.gz"
    tarball(write_corpus(tmp_path / "src"), truncated)
    truncated.write_bytes(truncated.read_bytes()[:2000])
    with pytest.raises(SedContractError, match=r"cut\.tar\.gz: .*(corrupt|truncated)"):
        fetch.extract(truncated, tmp_path / "dest")
    with pytest.raises(SedContractError, match=r"missing\.zip: cannot read"):
        fetch.extract(tmp_path / "missing.zip", tmp_path / "dest")
    assert not (tmp_path / "dest").exists()
    with pytest.raises(SedContractError, match="64 hexadecimal digits"):
        fetch.verify(truncated, "cut.tar.gz", "deadbeef", tmp_path / "checksums.json")
    assert not (tmp_path / "checksums.json").exists()


def exit_of(module, argv: list[str]) -> int:
    try:
        return module.main(argv)
    except SystemExit as exc:  # argparse's errors
        return exc.code


@pytest.mark.parametrize("case", ["truncated tar.gz", "missing archive", "unreachable URL",
                                  "HTTP error", "non-hex sha256", "short sha256",
                                  "malformed checksums.json"])
def test_fetch_desed_exits_2_with_one_message(tmp_path, monkeypatch, capsys, case):
    desed = script("fetch_desed_public_eval")
    dest = tmp_path / "dest"
    argv = ["--dest", str(dest)]
    served = tmp_path / "DESED_public_eval.tar.gz"
    monkeypatch.setattr(desed, "URL", served.as_uri())
    expect = {"truncated tar.gz": "truncated", "missing archive": "cannot download",
              "unreachable URL": "cannot download http://127.0.0.1:9/",
              "HTTP error": "cannot download", "non-hex sha256": "64 hexadecimal digits",
              "short sha256": "64 hexadecimal digits",
              "malformed checksums.json": "checksums.json, row 2: not a JSON download record"}[case]
    if case == "truncated tar.gz":
        tarball(write_corpus(tmp_path / "src"), served)
        served.write_bytes(served.read_bytes()[:3000])
    elif case == "unreachable URL":
        monkeypatch.setattr(desed, "URL", "http://127.0.0.1:9/DESED_public_eval.tar.gz")
    elif case == "HTTP error":
        monkeypatch.setattr(desed, "URL", "http://127.0.0.1:9/")
        monkeypatch.setattr(fetch.urllib.request, "urlopen", http_404)
    elif case == "non-hex sha256":
        argv += ["--sha256", "z" * 64]
    elif case == "short sha256":
        argv += ["--sha256", "deadbeef"]
    elif case == "malformed checksums.json":
        tarball(write_corpus(tmp_path / "src"), served)
        dest.mkdir()
        (dest / "checksums.json").write_text('{"DESED_public_eval.tar.gz": "ab",\n}\n')
    record = dest / "checksums.json"  # recorded only after a successful extraction
    before = record.read_bytes() if record.exists() else None
    assert exit_of(desed, argv) == 2
    err = capsys.readouterr().err
    assert expect in err and "Traceback" not in err
    assert (record.read_bytes() if record.exists() else None) == before
    assert not [p for p in dest.rglob("*") if p.name.endswith((".tmp", ".extracting"))]


def http_404(url, *args, **kwargs):
    import urllib.error
    raise urllib.error.HTTPError(url, 404, "Not Found", {}, None)


@pytest.mark.parametrize("name, argv, says", [
    ("fetch_maestro_real", ["--sha256", "deadbeef"], "NAME=HEX"),
    ("fetch_mini_librispeech", ["--sha256", "deadbeef"], "NAME=HEX"),
    ("fetch_maestro_real", ["--sha256", "nope.zip=" + "0" * 64], "development_audio.zip"),
    ("fetch_mini_librispeech", ["--sha256", "train-clean-5=" + "g" * 64], "hexadecimal"),
])
def test_sha256_options_are_checked(tmp_path, monkeypatch, capsys, name, argv, says):
    monkeypatch.setattr(fetch, "download", lambda *a: pytest.fail("nothing is downloaded"))
    assert exit_of(script(name), ["--dest", str(tmp_path / "dest"), *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert not (tmp_path / "dest").exists()


def test_fetch_maestro_real_on_a_corrupt_zip_exits_2(tmp_path, monkeypatch, capsys):
    served = tmp_path / "served"
    served.mkdir()
    corrupt_zip(served / "development_annotation.zip")
    maestro = script("fetch_maestro_real")
    monkeypatch.setattr(maestro, "URL", served.as_uri() + "/{name}")
    dest = tmp_path / "dest"
    assert maestro.main(["--dest", str(dest), "--annotations-only"]) == 2
    err = capsys.readouterr().err
    assert "CRC" in err and "corpus/second.txt" in err and "Traceback" not in err
    assert not (dest / "corpus").exists()


def test_the_script_itself_exits_2_without_a_traceback(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPTS / "fetch_maestro_real.py"), "--dest",
                           str(tmp_path / "dest"), "--sha256", "deadbeef"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "NAME=HEX" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_downloaded_archive_gets_the_usual_mode(tmp_path):
    served = tmp_path / "a.bin"
    served.write_bytes(b"payload")
    target = tmp_path / "dest" / "a.bin"
    target.parent.mkdir()
    fetch.download(served.as_uri(), target)
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
    with pytest.raises(SedContractError, match="directory"):
        fetch.download(served.as_uri(), target.parent)


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--max-ratio", "nan", "max_ratio must be a finite number > 0, got nan"),
    ("--max-ratio", "inf", "max_ratio must be a finite number > 0, got inf"),
    ("--max-ratio", "0", "max_ratio must be a finite number > 0, got 0.0"),
    ("--max-bytes", "0", "max_bytes must be a whole number of bytes >= 1, got 0"),
])
def test_extraction_bounds_that_cannot_bound_are_refused_by_option(tmp_path, capsys, option,
                                                                   value, message):
    """``--max-ratio nan|inf`` ended in a ValueError / OverflowError traceback."""
    desed = script("fetch_desed")
    assert desed.main(["--dest", str(tmp_path / "d"), option, value]) == 2
    err = capsys.readouterr().err
    assert f"argument {option}: {value!r}: {message}" in err and "Traceback" not in err
    with pytest.raises(SedContractError, match=message.split(", got")[0]):
        fetch.extract(tmp_path / "x.zip", tmp_path / "d", **{option[2:].replace("-", "_"):
                                                             float(value)})


def test_an_archive_that_is_a_pipe_is_refused_not_read(tmp_path, capsys):
    """Hashing or opening a FIFO blocks until a writer comes: never opened."""
    import os

    from tests.helpers.limits import without_blocking

    pipe = tmp_path / "desed.zip"
    os.mkfifo(pipe)
    code = without_blocking(lambda: script("fetch_desed").main(
        ["--dest", str(tmp_path / "d"), "--archive", str(pipe)]), pipe)
    assert code == 2
    assert f"fetch_desed: {pipe}: not a regular file" in capsys.readouterr().err
    for call in (lambda: fetch.extract(pipe, tmp_path / "d"),
                 lambda: fetch.verify(pipe, "desed.zip", None, tmp_path / "record.json")):
        with pytest.raises(SedContractError, match="not a regular file"):
            without_blocking(call, pipe)


def test_every_script_ends_a_mistake_with_one_line_and_status_2(tmp_path, capsys):
    """Scripts report errors as the CLI does: ``name: message``, status 2, no traceback."""
    from sedcontract.cli.command import reported
    from sedcontract.errors import ProtocolError
    from sedcontract.errors import SedContractError as Mistake

    def failing(kind: type[BaseException]) -> int:
        raise kind("bad input named here")

    # a refused step of the held-out protocol ends as its sys.exit("why") did: status 1
    for kind, code in ((Mistake, 2), (FileNotFoundError, 2), (ProtocolError, 1)):
        assert reported("some_script", failing, kind) == code
        assert capsys.readouterr().err == "some_script: bad input named here\n"
    assert reported("some_script", failing, KeyboardInterrupt) == 130
    assert capsys.readouterr().err == "some_script: interrupted; no output was changed\n"
    # sys.exit("why") of an experiment script is said, with status 1; sys.exit() is success
    assert reported("some_script", sys.exit, "failed (3): see run.log") == 1
    assert capsys.readouterr().err == "some_script: failed (3): see run.log\n"
    assert reported("some_script", sys.exit) == 0 and reported("s", sys.exit, 4) == 4
    for name in ("audit_with_dask", "contract_losses", "contract_vs_baselines", "fetch_desed",
                 "fetch_desed_public_eval", "fetch_maestro_real", "fetch_mini_librispeech",
                 "relaxation_properties", "reproduce"):
        text = (SCRIPTS / f"{name}.py").read_text()
        assert f'reported("{name}", ' in text, name


def test_a_record_or_manifest_nested_deeply_is_refused_or_rebuilt_not_a_traceback(tmp_path):
    """The download record and the build manifest are read by the safe reader of user files:
    nested 100,000 deep they once ended in RecursionError."""
    from sedcontract.data.build import _read_manifest

    deep = tmp_path / "checksums.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(SedContractError, match=r"checksums\.json: nested too deeply for a "
                                               r"download record .*; fix or delete it"):
        fetch.read_record(deep)
    notes: list[str] = []
    assert _read_manifest(deep, notes.append) is None
    assert notes and "not a manifest of this build (corrupt or foreign): rebuilding" in notes[0]
