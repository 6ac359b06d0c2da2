"""Output files: written atomically through a fresh temporary file, never onto an input, a
directory or a non-regular file; a symbolic link is written through; nothing the command did
not create is touched."""

from __future__ import annotations

import os
import stat

import pytest

from sedcontract.outputs import OutputError, atomic_write, check_output


def test_writes_replace_the_file_and_leave_nothing_else(tmp_path):
    target = tmp_path / "report.md"
    target.write_text("old")
    os.chmod(target, 0o640)
    atomic_write(target, "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # an existing file keeps its mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]


def test_an_unrelated_partial_file_is_never_touched(tmp_path):
    bystander = tmp_path / "report.md.partial"
    bystander.write_text("someone else's")
    atomic_write(tmp_path / "report.md", "text")
    assert bystander.read_text() == "someone else's"


def test_inputs_directories_and_empty_paths_are_refused(tmp_path):
    source = tmp_path / "ref.tsv"
    source.write_text("data")
    with pytest.raises(OutputError, match="also an input of this command"):
        atomic_write(source, "report", inputs=[source])
    alias = tmp_path / "alias.tsv"
    alias.symlink_to(source)
    with pytest.raises(OutputError, match="also an input"):
        atomic_write(tmp_path / "." / "ref.tsv", "report", inputs=[alias])
    assert source.read_text() == "data"
    with pytest.raises(OutputError, match="is a directory"):
        check_output(tmp_path)
    with pytest.raises(OutputError, match="output path is empty"):
        check_output("")
    with pytest.raises(OutputError, match="does not exist"):
        check_output(tmp_path / "missing" / "report.md")


def test_a_symbolic_link_is_written_through(tmp_path):
    real = tmp_path / "runs" / "report.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    atomic_write(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_non_regular_files_are_refused(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="not a regular file"):
        atomic_write(fifo, "report")
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    with pytest.raises(OutputError, match="not a regular file"):
        check_output("/dev/null")


def test_a_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "report.md"
    target.write_text("old")

    def broken(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]
