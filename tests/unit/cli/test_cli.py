"""The command line: the demo reproduces the worked example; user mistakes exit 2
with one clear message, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

from sedcontract.cli import main
from tests.helpers.paths import REPO


def test_demo_prints_the_worked_example(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    # the worked example (docs/architecture.md), typed and union side by side
    for line in ("| onset | 0.500 (1/2) | 1.000 (2/2) |", "| offset | 0.000 (0/2) | 0.500 (1/2) |",
                 "| missed | 0.500 (1/2) | 1.000 (2/2) |", "| false | 0.500 (2/4) | 0.750 (3/4) |",
                 "| silence | 0.839 (235/280) | 0.812 (65/80) |",
                 "| duration | 0.000 (0/1) | 0.500 (1/2) |",
                 "| fragmentation | 0.000 (0/1) | 0.500 (1/2) |", "| logic | 0.334 | 0.723 |"):
        assert line in out
    assert out.index("| fragmentation |") < out.index("| logic |")  # logic after the vector
    assert "200ms = 10 frames at hop 0.02 s" in out
    assert "projection center, clip edges open" in out


def test_demo_eps_override_changes_the_vector(capsys):
    assert main(["demo", "--eps", "0ms"]) == 0
    out = capsys.readouterr().out
    assert "| onset | 0.000 (0/2) | 0.500 (1/2) |" in out


def test_check_prints_canonical_text(tmp_path, capsys):
    path = tmp_path / "mine.contract"
    path.write_text("let e = 3\nclause late: on ref.offset require P[0:e] pred.offset\n")
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "clause late: on ref.offset require P[0:e] pred.offset" in out
    assert "# ok: 1 coordinate(s) (late), 0 diagnostic(s), sha256 " in out


def test_bad_contract_exits_2_with_position(tmp_path, capsys):
    path = tmp_path / "bad.contract"
    path.write_text("let eps = 200ms\nclause c: on ref.onset require N[eps pred.onset\n")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:2:38: syntax error: expected ']'" in err
    assert "^" in err
    assert main(["check", str(tmp_path / "nope.contract")]) == 2
    assert "no contract file" in capsys.readouterr().err


def test_console_script_runs_without_traceback():
    result = subprocess.run([sys.executable, "-m", "sedcontract.cli", "demo", "--eps", "30ms",
                             "--rounding", "exact"], capture_output=True, text=True)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "1.5 frames" in result.stderr


# ---- hardening: output files, interruptions, options -------------------------------------

HEADER = "filename\tonset\toffset\tevent_label\n"


def tsv(tmp_path, name: str, body: str):
    path = tmp_path / name
    path.write_text(HEADER + body)
    return path


def test_out_never_replaces_an_input(tmp_path, capsys):
    ref = tsv(tmp_path, "ref.tsv", "a.wav\t0.5\t1.5\tspeech\n")
    pred = tsv(tmp_path, "pred.tsv", "a.wav\t0.6\t1.5\tspeech\n")
    before = (ref.read_text(), pred.read_text())
    for out in (ref, pred, tmp_path / "." / "pred.tsv"):
        assert main(["audit", f"--ref={ref}", f"--pred={pred}", "--out", str(out)]) == 2
        assert "also an input of this command" in capsys.readouterr().err
    durations = tmp_path / "d.tsv"
    durations.write_text("filename\tduration\na.wav\t4.0\n")
    assert main(["audit", f"--ref={ref}", f"--pred={pred}", f"--durations={durations}",
                 "--out", str(durations)]) == 2
    assert (ref.read_text(), pred.read_text()) == before
    assert durations.read_text() == "filename\tduration\na.wav\t4.0\n"


def test_out_writes_through_links_and_refuses_odd_targets(tmp_path, capsys):
    ref = tsv(tmp_path, "ref.tsv", "a.wav\t0.5\t1.5\tspeech\n")
    report = tmp_path / "reports" / "r.json"
    report.parent.mkdir()
    report.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(report)
    bystander = tmp_path / "out.md.partial"
    bystander.write_text("not ours")
    assert main(["audit", f"--ref={ref}", f"--pred={ref}", "--format", "json",
                 "--out", str(link)]) == 0
    assert link.is_symlink() and report.read_text().startswith("{")
    assert main(["audit", f"--ref={ref}", f"--pred={ref}", "--out", str(tmp_path / "out.md")]) \
        == 0
    assert bystander.read_text() == "not ours"
    capsys.readouterr()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert main(["audit", f"--ref={ref}", f"--pred={ref}", "--out", str(fifo)]) == 2
    assert "not a regular file" in capsys.readouterr().err
    assert main(["audit", f"--ref={ref}", f"--pred={ref}", "--out", ""]) == 2
    assert "output path is empty" in capsys.readouterr().err
    missing = tmp_path / "no-such-folder" / "r.md"
    assert main(["audit", f"--ref={ref}", f"--pred={ref}", "--out", str(missing)]) == 2
    err = capsys.readouterr().err
    assert str(missing) in err and ".partial" not in err and ".tmp" not in err


def test_pathologies_never_replace_their_reference(tmp_path, capsys):
    folder = tmp_path / "set"
    folder.mkdir()
    ref = tsv(folder, "ref.tsv", "a.wav\t0.5\t1.5\tspeech\na.wav\t2.0\t3.0\ttone\n")
    before = ref.read_text()
    assert main(["data", "pathologies", f"--ref={ref}", "--out", str(folder)]) == 2
    assert "also an input" in capsys.readouterr().err
    assert ref.read_text() == before and sorted(p.name for p in folder.iterdir()) == ["ref.tsv"]
    durations = folder / "durations.tsv"
    durations.write_text("filename\tduration\na.wav\t4.0\n")
    other = tsv(tmp_path, "other.tsv", "a.wav\t0.5\t1.5\tspeech\n")
    assert main(["data", "pathologies", f"--ref={other}", f"--durations={durations}",
                 "--out", str(folder)]) == 2
    assert durations.read_text() == "filename\tduration\na.wav\t4.0\n"


def test_an_interrupted_build_exits_130_without_a_traceback(tmp_path, monkeypatch, capsys):
    from sedcontract.data import build

    real, calls = build.make_scene, {"n": 0}

    def interrupted(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "make_scene", interrupted)
    argv = ["data", "build", "controlled", "--root", str(tmp_path), "--train", "4",
            "--validation", "0", "--test", "0", "--speech-source", "synthetic"]
    assert main(argv) == 130
    assert "interrupted" in capsys.readouterr().err
    audio = tmp_path / "controlled" / "audio" / "train"
    assert sorted(p.name for p in audio.iterdir()) == ["train_0000.wav", "train_0001.wav"]
    monkeypatch.setattr(build, "make_scene", real)
    assert main(argv) == 0  # the rebuild completes (and keeps the two finished files)
    assert len(list(audio.iterdir())) == 4


def test_pred_scores_must_name_a_directory(tmp_path, capsys):
    ref = tsv(tmp_path, "ref.tsv", "a.wav\t0.5\t1.5\tspeech\n")
    assert main(["audit", f"--ref={ref}", f"--pred-scores={ref}"]) == 2
    assert "is a file, not a directory" in capsys.readouterr().err
    assert main(["audit", f"--ref={ref}", f"--pred-scores={tmp_path / 'none'}"]) == 2
    assert "no such directory" in capsys.readouterr().err


def test_a_hop_coarser_than_every_event_is_an_error_not_a_perfect_score(capsys):
    assert main(["demo", "--hop", "100s"]) == 2
    err = capsys.readouterr().err
    assert "none of the 2 reference events covers a frame at hop 100 s" in err
    assert main(["demo", "--hop", "1000000000001s"]) == 2
    assert "longer than the longest supported time" in capsys.readouterr().err


def test_repeated_coordinates_are_refused(tmp_path, capsys):
    ref = tsv(tmp_path, "ref.tsv", "a.wav\t0.5\t1.5\tspeech\n")
    assert main(["audit", f"--ref={ref}", f"--pred={ref}",
                 "--coordinates", "onset,onset,onset,silence"]) == 2
    assert "'onset' is listed twice" in capsys.readouterr().err


def test_classes_that_differ_only_in_case_are_warned_about(tmp_path, capsys):
    ref = tsv(tmp_path, "ref.tsv", "a.wav\t0.5\t1.5\tSpeech\n")
    pred = tsv(tmp_path, "pred.tsv", "a.wav\t0.5\t1.5\tspeech\n")
    assert main(["audit", f"--ref={ref}", f"--pred={pred}"]) == 0
    out, err = capsys.readouterr()
    assert "warning: predicted class 'speech' and reference class 'Speech' differ only in " \
        "case" in err
    assert "share no class" in err
    assert out.startswith("> warning: predicted class 'speech'")  # above the vector


def test_a_file_named_like_a_shipped_contract_does_not_replace_it(tmp_path, monkeypatch,
                                                                   capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "standard").write_text("clause c: on ref.onset require false\n")
    assert main(["check", "standard"]) == 0
    assert "clause onset: on ref.onset require N[eps] pred.onset" in capsys.readouterr().out
    assert main(["check", "./standard"]) == 0  # the local file, named with its folder
    assert "clause c: on ref.onset require false" in capsys.readouterr().out


def test_deep_contracts_are_refused_by_check_and_long_ones_run(tmp_path, capsys):
    deep = tmp_path / "deep.contract"
    deep.write_text("clause c: on ref.onset require " + "!" * 500 + "pred.onset\n")
    assert main(["check", str(deep)]) == 2
    assert "nested too deeply" in capsys.readouterr().err
    long = tmp_path / "long.contract"
    long.write_text("clause c: on ref.active require " + " & ".join(["pred.active"] * 5000)
                    + "\n")
    assert main(["check", str(long)]) == 0
    ref = tsv(tmp_path, "ref.tsv", "a.wav\t0.5\t1.5\tspeech\n")
    assert main(["audit", f"--ref={ref}", f"--pred={ref}", f"--contract={long}",
                 "--format", "json"]) == 0
    assert '"satisfied": 50' in capsys.readouterr().out


# ---- every command declares what it reads and writes ---------------------------------------

def _calibration(tmp_path):
    from tests.helpers.examples import calibration

    folder, _ = calibration(tmp_path, {"fragmentation": [2, 3], "late_onset": [0.1],
                                       "missed": [1.0]})
    risk = tmp_path / "risk.yaml"
    risk.write_text("order: [missed, fragmentation, late_onset]\nhigh: 2\n")
    return folder, risk


def _contract(tmp_path):
    from sedcontract.contracts.contract import LIBRARY

    path = tmp_path / "mine.contract"
    path.write_text((LIBRARY / "standard.contract").read_text())
    return path


def test_no_command_writes_over_its_contract(tmp_path, capsys):
    folder, risk = _calibration(tmp_path)
    contract = _contract(tmp_path)
    before = contract.read_text()
    ref, pred = folder / "ref.tsv", folder / "pred.tsv"
    clip = ref.read_text().splitlines()[1].split("\t")[0].removesuffix(".wav")
    runs = {
        "select --out": ["select", "--calibration", str(folder), "--risk-order", str(risk),
                         "--out", str(contract)],
        "sweep --out": ["sweep", "--ref", str(ref), "--pred", str(pred), "--eps", "0,10ms",
                        "--out", str(contract)],
        "sweep --figure": ["sweep", "--ref", str(ref), "--pred", str(pred), "--eps", "0,10ms",
                           "--figure", str(contract)],
        "show --out": ["show", "--ref", str(ref), "--pred", str(pred), "--clip", clip,
                       "--out", str(contract)],
    }
    for name, argv in runs.items():
        assert main([*argv, "--contract", str(contract)]) == 2, name
        err = capsys.readouterr().err
        assert "also an input of this command (--contract" in err, name
        assert contract.read_text() == before, name


def test_two_outputs_naming_one_file_are_refused(tmp_path, capsys):
    folder, risk = _calibration(tmp_path)
    target = tmp_path / "out.md"
    argv = {"select": ["select", "--calibration", str(folder), "--risk-order", str(risk),
                       "--out", str(target), "--table", str(tmp_path / "." / "out.md")],
            "sweep": ["sweep", "--ref", str(folder / "ref.tsv"), "--pred",
                      str(folder / "pred.tsv"), "--eps", "0,10ms", "--out", str(target),
                      "--csv", str(target)]}
    for name, args in argv.items():
        assert main(args) == 2, name
        err = capsys.readouterr().err
        assert "name the same file" in err and "--out" in err, name
        assert not target.exists(), name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cal", "risk.yaml"]


def _rows(tmp_path):
    import sedcontract
    from sedcontract.guard import to_csv

    ref = tsv(tmp_path, "ref.tsv", "a.wav\t0.5\t1.5\tspeech\n")
    pred = tsv(tmp_path, "pred.tsv", "a.wav\t0.6\t1.2\tspeech\n")
    rows = tmp_path / "rows.csv"
    rows.write_text(to_csv(sedcontract.audit(ref, pred), "sys"))
    return rows


def _snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def test_a_refused_report_leaves_the_earlier_one_whole(tmp_path, capsys):
    rows = _rows(tmp_path)
    out = tmp_path / "report"
    assert main(["report", str(rows), "--out", str(out)]) == 0
    inside = out / "rows.csv"
    inside.write_bytes(rows.read_bytes().replace(b"sys", b"other"))
    before = _snapshot(out)
    assert main(["report", str(inside), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "cannot write the folder" in err and "holds" in err and "rows.csv" in err
    assert _snapshot(out) == before
    # a run that fails after its work began (a bad --sweep file) changes nothing either
    bad = tmp_path / "sweep.csv"
    bad.write_text("not sweep rows\n")
    assert main(["report", str(rows), "--out", str(out), "--sweep", str(bad)]) == 2
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["ref.tsv", "pred.tsv", "rows.csv", "report", "sweep.csv"])  # no staging left


def test_a_report_replaces_its_earlier_folder_whole(tmp_path, capsys):
    rows = _rows(tmp_path)
    out = tmp_path / "report"
    assert main(["report", str(rows), "--out", str(out)]) == 0
    (out / "stale.md").write_text("from an older version")
    assert main(["report", str(rows), "--out", str(out)]) == 0
    assert not (out / "stale.md").exists() and (out / "report.html").is_file()
    assert "wrote " + str(out) in capsys.readouterr().err


def test_select_searches_among_named_coordinates(tmp_path, capsys):
    folder, risk = _calibration(tmp_path)
    out = tmp_path / "selected.contract"
    wide = tmp_path / "wide.contract"
    clauses = "".join(f"clause c{i}: on ref.onset require N[{i}] pred.onset\n"
                      for i in range(25))
    wide.write_text(clauses)
    base = ["select", "--calibration", str(folder), "--risk-order", str(risk), "--out", str(out)]
    assert main([*base, "--contract", str(wide)]) == 2
    err = capsys.readouterr().err
    assert "25 coordinates" in err and "select --coordinates" in err and not out.exists()
    assert main([*base, "--coordinates", "missed,fragmentation"]) == 0
    assert "missed, fragmentation" in capsys.readouterr().out
    assert main([*base, "--coordinates", "missed,laziness"]) == 2
    assert "among the contract's" in capsys.readouterr().err


def test_score_files_without_a_reference_class_are_refused_by_audit(tmp_path, capsys):
    ref = tsv(tmp_path, "ref.tsv", "a.wav\t0.5\t1.5\tdog\na.wav\t2.0\t3.0\tcat\n")
    scores = tmp_path / "scores"
    scores.mkdir()
    (scores / "a.tsv").write_text("onset\toffset\tdog\tbird\n" + "".join(
        f"{k * 0.5:g}\t{(k + 1) * 0.5:g}\t0.9\t0.1\n" for k in range(8)))
    assert main(["audit", "--ref", str(ref), "--pred-scores", str(scores)]) == 2
    err = capsys.readouterr().err
    assert "'cat'" in err and "a.tsv" in err and "Traceback" not in err


def test_audit_decides_score_files_with_hysteresis(tmp_path, capsys):
    """--hysteresis-low keeps a run on through a dip that the threshold alone would split."""
    import json

    ref = tsv(tmp_path, "ref.tsv", "a.wav\t0.0\t2.0\tdog\n")
    scores = tmp_path / "scores"
    scores.mkdir()
    values = [0.9, 0.9, 0.4, 0.9, 0.9, 0.9, 0.9, 0.9]
    (scores / "a.tsv").write_text("onset\toffset\tdog\n" + "".join(
        f"{k * 0.25:g}\t{(k + 1) * 0.25:g}\t{v}\n" for k, v in enumerate(values)))
    runs = {}
    for extra in ([], ["--hysteresis-low", "0.3"]):
        assert main(["audit", "--ref", str(ref), "--pred-scores", str(scores), "--hop", "250ms",
                     "--format", "json", *extra]) == 0
        report = json.loads(capsys.readouterr().out)
        runs[bool(extra)] = report["modes"]["typed"]["coordinates"]["fragmentation"]
    assert runs[False]["satisfied"] == 0 and runs[True]["satisfied"] == 1
    assert main(["audit", "--ref", str(ref), "--pred-scores", str(scores),
                 "--hysteresis-low", "0.7", "--threshold", "0.5"]) == 2
    assert "must not exceed the decision threshold" in capsys.readouterr().err


def test_a_warning_is_printed_once_where_the_report_shows_it(tmp_path):
    """The Markdown report shows its warnings above the vector; on a terminal (standard output
    and error one stream) each warning was printed twice."""
    from tests.helpers.examples import write_worked_example

    args = [sys.executable, "-m", "sedcontract.cli", "audit",
            *write_worked_example(tmp_path), f"--pred={tmp_path / 'pred.tsv'}"]
    (tmp_path / "dur.tsv").write_text("filename\tduration\nc.wav\t3.3\n")  # tone [3.2, 3.4) cut
    warning = "1 predicted event(s) ended past their clip's duration and were cut at it"
    one = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert one.returncode == 0 and one.stdout.count(warning) == 1
    apart = subprocess.run(args, capture_output=True, text=True)  # report and warnings apart
    assert apart.stdout.count(warning) == 1 and apart.stderr.count(warning) == 1
    json_out = subprocess.run([*args, "--format", "json"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    assert json_out.stdout.count(warning) == 2  # in the JSON report and on standard error
    args[3] = "scores"  # its tables do not show warnings: said on standard error even so
    scores = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert scores.returncode == 0 and scores.stdout.count(warning) == 1


def test_version_is_written_once_and_printed_by_the_cli(capsys):
    """``sedcontract --version`` prints the package's version; the build reads the same
    attribute (no second copy in pyproject.toml), and the licence file it names exists."""

    import pytest

    import sedcontract

    tomllib = pytest.importorskip("tomllib")  # Python 3.11 on

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"sedcontract {sedcontract.__version__}\n"
    root = REPO
    project = tomllib.loads((root / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "sedcontract.__version__"}
    assert project["project"]["license"] == "MIT"
    assert all((root / name).is_file() and "MIT License" in (root / name).read_text()
               for name in project["project"]["license-files"])


def test_option_clashes_are_refused_in_one_place_before_any_file_is_read(tmp_path, capsys):
    """Commands turn their options into one request that refuses every clash before anything
    is read: the files named here do not exist, and the clash is what is said, with status
    2."""
    missing = str(tmp_path / "missing.tsv")
    inputs = ["--ref", missing, "--pred", missing]
    for args, message in [
        (["audit", *inputs, "--pred-scores", str(tmp_path)], "not both"),
        (["audit", "--ref", missing, "--pred-scores", str(tmp_path), "--pred-points", missing],
         "from --pred-scores or from --pred-points, not both"),
        (["audit", *inputs, "--shard", "0/2"], "add --format json"),
        (["audit", *inputs, "--soft", missing, "--format", "json"], "--soft adds"),
        (["audit", *inputs, "--format", "csv", "--bootstrap", "10"], "draws of PSDS"),
        (["audit", *inputs, "--format", "csv", "--compare", missing], "csv rows are"),
        (["scores", *inputs, "--psds", "psds1"], "which these inputs do not give"),
        (["audit", "--ref", missing], "needs one system output"),
        (["scores", "--ref", missing], "give --pred (event tsv)"),
        (["scores", "--ref", missing, "--pred-points", missing], "add --durations"),
        (["audit", *inputs, "--windows"], "--windows merges score files"),
        (["audit", *inputs, "--clips", "durations"], "--clips durations needs --durations"),
        (["sweep", "--ref", missing, "--pred", f"a={missing}", "--pred", f"a={missing}",
          "--eps", "0,20ms"], "two systems named 'a'"),
        (["sweep", "--ref", missing, "--pred", missing, "--eps", "20ms,20ms"],
         "lists one radius twice"),
        (["report", missing, "--out", str(tmp_path / "r"), "--timelines", str(tmp_path)],
         "no timeline images"),
        (["data", "pathologies", "--ref", missing, "--out", str(tmp_path / "p"),
          "--pathologies", "nonsense"], "unknown pathology 'nonsense'"),
    ]:
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert message in err and "No such file" not in err, (args, err)


def test_a_bare_command_prints_what_it_does(capsys):
    """``sedcontract`` alone lists the commands (status 2), instead of argparse's "the following
    arguments are required: name"."""
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: sedcontract") and "required" not in err
    for command in ("audit", "scores", "report", "sweep", "select", "merge", "check", "data"):
        assert command in err, command
