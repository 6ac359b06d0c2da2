"""The one reader of user YAML and JSON files (``sedcontract.traces.documents``) and every
reader that uses it: aliases (a 400-byte "billion laughs" file), nesting thousands deep, a
pipe, a folder and an oversized file are refused with the file and line named, in a decision
file, a risk order, a shard report and the protocol's lock, choices and run records; memory
stays small at the limits."""

from __future__ import annotations

import json
import os

import pytest

from sedcontract.analysis.selection import read_risk_order
from sedcontract.cli import main
from sedcontract.errors import ProtocolError, SedContractError, TraceFormatError
from sedcontract.experiments.tables import read_json as read_protocol_json
from sedcontract.traces.decision import read_decision
from sedcontract.traces.documents import (
    MAX_BYTES,
    MAX_DEPTH,
    compose_yaml,
    depth_of,
    read_json,
    read_yaml,
)
from tests.helpers.limits import run_limited, without_blocking

LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + k)}: &{chr(98 + k)} [{', '.join([f'*{chr(97 + k)}'] * 9)}]\n"
    for k in range(9)) + "threshold: *j\n"


def test_aliases_are_refused_before_they_expand(tmp_path):
    path = tmp_path / "laughs.yaml"
    path.write_text(LAUGHS)
    assert len(LAUGHS) < 600
    with pytest.raises(TraceFormatError, match=r"laughs\.yaml, row 2: an alias \(\*a\) is not "
                                               r"read in a decision file"):
        read_decision(path)
    with pytest.raises(TraceFormatError, match=r"alias \(\*a\) is not read in a risk order"):
        read_risk_order(path, ["missed"])
    plain = tmp_path / "anchored.yaml"  # an anchor no alias uses is plain YAML
    plain.write_text("threshold: &t 0.4\n")
    assert read_decision(plain).threshold == 0.4


def test_the_billion_laughs_decision_file_ends_in_one_line_and_little_memory(tmp_path):
    (tmp_path / "laughs.yaml").write_text(LAUGHS)
    (tmp_path / "ref.tsv").write_text("filename\tonset\toffset\tevent_label\na.wav\t0\t1\tx\n")
    (tmp_path / "scores").mkdir()
    (tmp_path / "scores" / "a.tsv").write_text("onset\toffset\tx\n0.0\t0.5\t0.9\n")
    code = ("import sys; from sedcontract.cli import main; sys.exit(main(['audit', '--ref', "
            f"{str(tmp_path / 'ref.tsv')!r}, '--pred-scores', {str(tmp_path / 'scores')!r}, "
            f"'--decision', {str(tmp_path / 'laughs.yaml')!r}]))")
    done = run_limited(["-c", code], limit_mb=600, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "an alias (*a) is not read in a decision file" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("kind", ["yaml", "json"])
def test_nesting_deeper_than_the_limit_is_refused_without_recursion(tmp_path, kind):
    deep = tmp_path / f"deep.{kind}"
    deep.write_text("threshold: " + "[" * 3000 + "]" * 3000 + "\n" if kind == "yaml"
                    else '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    reader = read_decision if kind == "yaml" else (lambda p: read_json(p, "lock file"))
    with pytest.raises(TraceFormatError, match=f"nested too deeply for a (decision|lock) file "
                                               f"\\(more than {MAX_DEPTH} levels\\)"):
        reader(deep)
    at_limit = tmp_path / f"limit.{kind}"
    nested = "[" * (MAX_DEPTH - 1) + "1" + "]" * (MAX_DEPTH - 1)
    at_limit.write_text(f"a: {nested}\n" if kind == "yaml" else f'{{"a": {nested}}}')
    data = read_yaml(at_limit, "x") if kind == "yaml" else read_json(at_limit, "x")
    assert depth_of(data) == MAX_DEPTH  # the limit itself is read


def test_the_protocols_files_refuse_deep_nesting_as_the_protocol_does(tmp_path):
    for name in ("heldout_lock.json", "heldout_choices.json", "contract_losses_run.json"):
        path = tmp_path / name
        path.write_text("[" * 100_000 + "]" * 100_000)
        with pytest.raises(ProtocolError, match=f"{name}: cannot read the x \\(nested too "
                                                "deeply for a protocol file"):
            read_protocol_json(path, "the x")


def test_a_pipe_a_folder_and_an_oversized_file_are_refused_by_name(tmp_path):
    fifo = tmp_path / "decision.fifo"
    os.mkfifo(fifo)
    with pytest.raises(TraceFormatError, match=r"decision\.fifo: not a regular file"):
        without_blocking(lambda: read_decision(fifo), fifo)
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    with pytest.raises(TraceFormatError, match=r"folder\.yaml: not a regular file"):
        read_decision(folder)
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * MAX_BYTES + "\nthreshold: 0.5\n")
    with pytest.raises(TraceFormatError, match=r"bytes is too large for a decision file \(at "
                                               r"most 1,048,576\)"):
        read_decision(big)
    assert read_yaml(big, "x", max_bytes=None) == {"threshold": 0.5}  # a caller may lift it


def test_the_cli_names_the_file_and_line_of_a_bad_decision_or_shard(tmp_path, capsys):
    (tmp_path / "ref.tsv").write_text("filename\tonset\toffset\tevent_label\na.wav\t0\t1\tx\n")
    (tmp_path / "scores").mkdir()
    (tmp_path / "scores" / "a.tsv").write_text("onset\toffset\tx\n0.0\t0.5\t0.9\n")
    (tmp_path / "bad.yaml").write_text("threshold: 0.5\nclasses: [\n")
    assert main(["audit", "--ref", str(tmp_path / "ref.tsv"), "--pred-scores",
                 str(tmp_path / "scores"), "--decision", str(tmp_path / "bad.yaml")]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml, row 3: not a YAML decision file" in err and "Traceback" not in err
    (tmp_path / "shard.json").write_text('{"shard": \n')
    assert main(["merge", str(tmp_path / "shard.json")]) == 2
    assert "shard.json, row 2: not a JSON shard report: Expecting value" in \
        capsys.readouterr().err


def test_the_node_tree_keeps_lines_and_an_empty_file_is_none(tmp_path):
    path = tmp_path / "order.yaml"
    path.write_text("\n\norder: [missed]\n")
    root = compose_yaml(path, "risk order")
    assert root.value[0][0].start_mark.line + 1 == 3
    (tmp_path / "empty.yaml").write_text("")
    assert compose_yaml(tmp_path / "empty.yaml", "x") is None
    assert read_yaml(tmp_path / "empty.yaml", "x") is None
    with pytest.raises(SedContractError, match="a decision file maps threshold"):
        read_decision(tmp_path / "empty.yaml")
    assert json.loads(json.dumps(read_json_roundtrip(tmp_path))) == {"a": [1, {"b": None}]}


def read_json_roundtrip(tmp_path):
    path = tmp_path / "plain.json"
    path.write_text('\ufeff{"a": [1, {"b": null}]}')  # a byte-order mark is not text
    return read_json(path, "x")
