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


def test_the_guard_refuses_before_any_work(tmp_path):
    from sedcontract.outputs import guard

    source = tmp_path / "ref.tsv"
    source.write_text("data")
    with pytest.raises(OutputError, match=r"also an input of this command \(--ref "):
        guard(reads={"--ref": source}, writes={"--out": tmp_path / "." / "ref.tsv"})
    with pytest.raises(OutputError, match=r"--out .* and --csv .* name the same file"):
        guard(writes={"--out": tmp_path / "a.md", "--csv": [tmp_path / "x" / ".." / "a.md"]})
    folder = tmp_path / "report"
    (folder / "deep").mkdir(parents=True)
    inner = folder / "deep" / "rows.csv"
    inner.write_text("rows")
    with pytest.raises(OutputError, match="holds .*rows.csv, an input of this command "
                                          r"\(rows\)"):
        guard(reads={"rows": [inner]}, folders={"--out": folder})
    with pytest.raises(OutputError, match="does not exist"):
        guard(writes=[tmp_path / "new" / "a.tsv"])
    targets = guard(writes={"--out": [tmp_path / "new" / "a.tsv"]}, creates=[tmp_path / "new"])
    assert list(targets.values()) == [f"--out {tmp_path / 'new' / 'a.tsv'}"]
    assert source.read_text() == "data" and not (tmp_path / "new").exists()


def test_outputs_are_put_in_place_together_or_not_at_all(tmp_path):
    from sedcontract.outputs import Outputs

    first, second = tmp_path / "a.md", tmp_path / "sub" / "b.csv"
    first.write_text("old")
    with pytest.raises(RuntimeError), Outputs(writes=[first, second],
                                              creates=[tmp_path / "sub"]) as out:
        out.write(first, "new")
        raise RuntimeError("the work failed after one output was staged")
    assert first.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["a.md"]
    with Outputs(writes=[first, second], creates=[tmp_path / "sub"]) as out:
        out.write(first, "new")
        out.write(second, b"rows")
        with pytest.raises(ValueError, match="not a declared output"):
            out.write(tmp_path / "c.md", "x")
        assert first.read_text() == "old"  # nothing in place before the commit
    assert first.read_text() == "new" and second.read_bytes() == b"rows"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md", "sub"]


def test_a_folder_is_replaced_whole_and_restored_on_failure(tmp_path, monkeypatch):
    from sedcontract.outputs import Outputs

    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "old.md").write_text("old")
    with pytest.raises(ValueError, match="leaves the folder"):
        Outputs(folders=[folder]).folder(folder, {"a.md": "x", "../escape": "x"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]  # nothing staged is left
    out = Outputs(folders=[folder])
    out.folder(folder, {"report.html": "<p>", "figures/a.png": b"\x89PNG"})
    assert (folder / "old.md").exists()
    assert out.commit() == [folder]
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == [
        "figures", "figures/a.png", "report.html"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]
    out = Outputs(folders=[folder])
    out.folder(folder, {"new.md": "new"})
    real = os.replace

    def fail_into_place(source, target):
        if os.fspath(target) == os.fspath(folder) and ".old." not in os.fspath(source):
            raise OSError(28, "No space left on device", os.fspath(target))
        return real(source, target)

    monkeypatch.setattr(os, "replace", fail_into_place)
    with pytest.raises(OutputError, match="No space left"):
        out.commit()
    assert sorted(p.name for p in folder.iterdir()) == ["figures", "report.html"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]
