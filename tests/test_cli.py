"""The command line: the demo reproduces DESIGN.md's worked example; user mistakes exit 2
with one clear message, never a traceback."""

from __future__ import annotations

import subprocess
import sys

from sedcontract.cli import main


def test_demo_prints_the_worked_example(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    # DESIGN.md worked example, typed and union side by side
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
