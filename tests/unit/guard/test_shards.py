"""Reports are count sums: the reports of disjoint blocks of clips join into the corpus's
report (API, ``audit --shard`` + ``merge`` on the command line, a Dask LocalCluster), byte
for byte; mixing shards of different corpora, policies or incomplete sets is refused."""

from __future__ import annotations

import importlib.util
import json
import random
import re
from pathlib import Path

import numpy as np
import pytest

import sedcontract
from sedcontract.cli import main
from sedcontract.errors import SedContractError
from sedcontract.guard import GuardReport, ScoreSettings, to_csv, to_json, to_markdown
from sedcontract.traces import EventList, write_durations, write_events
from tests.helpers.paths import REPO

ROOT = REPO


def corpus(seed: int, clips: int = 9) -> tuple[EventList, EventList, dict[str, float]]:
    """Clips of different lengths, a clip without events, predictions that miss, split,
    shift, leak and swap classes (so every coordinate and score has something to count)."""
    rng = np.random.default_rng(seed)
    ref, pred = [], []
    names = tuple(f"clip{c:02d}" for c in range(clips))
    durations = {}
    for c, clip in enumerate(names):
        durations[clip] = float(rng.choice([4.0, 6.5, 10.0]))
        if c == 3:
            continue  # no event at all
        for label in ("speech", "tone", "burst"):
            t = float(rng.uniform(0.1, 1.0))
            while t < durations[clip] - 1.5:
                length = float(rng.uniform(0.2, 1.2))
                ref.append((clip, round(t, 3), round(t + length, 3), label))
                roll = rng.random()
                on, off = t + rng.normal(0, 0.08), t + length + rng.normal(0, 0.12)
                if 0.1 <= roll < 0.2:  # split in two (below 0.1: missed, no prediction)
                    mid = (on + off) / 2
                    pred += [(clip, max(0, on), mid - 0.05, label), (clip, mid + 0.05, off, label)]
                elif 0.2 <= roll < 0.45:  # another class
                    pred.append((clip, max(0, on), off, "tone" if label != "tone" else "speech"))
                elif roll >= 0.45:
                    pred.append((clip, max(0.0, on), min(durations[clip], off), label))
                t += length + float(rng.uniform(0.4, 1.5))
        if rng.random() < 0.5:
            pred.append((clip, durations[clip] - 1.0, durations[clip] - 0.6, "burst"))
    pred = [(c, round(a, 3), round(b, 3), lab) for c, a, b, lab in pred if b > a]
    return (EventList.from_rows(ref, clips=names), EventList.from_rows(pred, clips=names),
            durations)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 12])
def test_the_shards_of_a_corpus_join_into_its_report(count):
    ref, pred, durations = corpus(0)
    kwargs = {"durations": durations, "scores": ScoreSettings(), "eps": "60ms"}
    whole = sedcontract.audit(ref, pred, **kwargs)
    parts = [sedcontract.audit(ref, pred, shard=(i, count), **kwargs) for i in range(count)]
    assert sum(len(p.clips) for p in parts) == len(ref.clips)
    joined = GuardReport.concat(parts)
    assert to_json(joined) == to_json(whole)
    assert to_csv(joined) == to_csv(whole) and to_markdown(joined) == to_markdown(whole)
    # the counts are not all zero: the test sees failures, warnings and substitutions
    assert whole.modes["typed"].micro("onset").satisfied < \
        whole.modes["typed"].micro("onset").obligations
    assert whole.scores["event"].overall.subs > 0 and whole.scores["segment"].overall.subs > 0


def test_a_shard_is_the_audit_of_its_clips():
    """A shard's own report covers its clips and nothing else, with the corpus's classes."""
    ref, pred, durations = corpus(1)
    part = sedcontract.audit(ref, pred, durations=durations, shard=(1, 3))
    clips = ref.clips[3:6]
    alone = sedcontract.audit(ref.select(clips=clips), pred.select(clips=clips),
                              durations=durations, classes=part.facts.classes)
    assert part.clips == clips and to_json(part) == to_json(alone)


def test_joining_refuses_what_is_not_a_partition():
    ref, pred, durations = corpus(2)
    a = sedcontract.audit(ref, pred, durations=durations, shard=(0, 2))
    with pytest.raises(SedContractError, match="more than one"):
        GuardReport.concat([a, a])
    other = sedcontract.audit(ref, pred, durations=durations, shard=(1, 2), eps="40ms")
    with pytest.raises(SedContractError, match="different policy"):
        GuardReport.concat([a, other])
    with pytest.raises(SedContractError, match="whole numbers"):
        sedcontract.audit(ref, pred, durations=durations, shard=(2, 2))


def test_joining_refuses_reports_of_other_class_lists():
    """Counts are columns per class: shards with another class list (an extra class, or the
    same classes in another order) are refused, never added column by column."""
    ref, pred, durations = corpus(2)
    a = sedcontract.audit(ref, pred, durations=durations, shard=(0, 2))
    assert a.facts.classes == ("burst", "speech", "tone")
    for classes in (["speech", "tone", "burst"], ["burst", "speech", "tone", "dog"]):
        b = sedcontract.audit(ref, pred, durations=durations, shard=(1, 2), classes=classes)
        assert b.policy == a.policy
        with pytest.raises(SedContractError, match="different classes"):
            GuardReport.concat([a, b])


def write_corpus(tmp_path: Path, seed: int = 0) -> list[str]:
    ref, pred, durations = corpus(seed)
    write_events(tmp_path / "ref.tsv", ref)
    write_events(tmp_path / "pred.tsv", pred)
    write_durations(tmp_path / "durations.tsv", durations)
    return ["--ref", str(tmp_path / "ref.tsv"), "--pred", str(tmp_path / "pred.tsv"),
            "--durations", str(tmp_path / "durations.tsv")]


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_audit_shard_and_merge_on_the_command_line(tmp_path, capsys):
    inputs = write_corpus(tmp_path)
    code, whole, _ = run(["audit", *inputs, "--format", "json", "--with-scores"], capsys)
    assert code == 0
    paths = []
    for i in range(4):
        path = tmp_path / f"shard-{i}.json"
        code, _, _ = run(["audit", *inputs, "--format", "json", "--with-scores",
                          "--shard", f"{i}/4", "--out", str(path)], capsys)
        assert code == 0
        paths.append(str(path))
    random.Random(0).shuffle(paths)
    code, merged, err = run(["merge", *paths], capsys)
    assert code == 0, err
    assert merged == whole
    code, markdown, _ = run(["merge", *paths, "--format", "md"], capsys)
    assert markdown == run(["audit", *inputs, "--with-scores"], capsys)[1]
    out = tmp_path / "merged.csv"
    assert run(["merge", *paths, "--format", "csv", "--system", "s", "--out", str(out)],
               capsys)[0] == 0
    assert out.read_text() == run(["audit", *inputs, "--with-scores", "--format", "csv",
                                   "--system", "s"], capsys)[1]
    assert json.loads(Path(paths[0]).read_text())["shard"]["count"] == 4


def test_merge_refuses_incomplete_mixed_or_broken_shards(tmp_path, capsys):
    inputs = write_corpus(tmp_path)
    shard = {}
    for name, extra in (("a0", ["--shard", "0/2"]), ("a1", ["--shard", "1/2"]),
                        ("eps1", ["--shard", "1/2", "--eps", "40ms"])):
        shard[name] = tmp_path / f"{name}.json"
        assert run(["audit", *inputs, "--format", "json", *extra, "--out", str(shard[name])],
                   capsys)[0] == 0
    other = tmp_path / "other"
    other.mkdir()
    shard["b1"] = tmp_path / "b1.json"
    assert run(["audit", *write_corpus(other, seed=5), "--format", "json", "--shard", "1/2",
                "--out", str(shard["b1"])], capsys)[0] == 0
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": 2}')
    older = tmp_path / "older.json"  # a shard of the layout before: not merged by guesswork
    older.write_text(shard["a0"].read_text().replace('"schema_version": 2', '"schema_version": 1',
                                                      1))
    cases = [
        ([shard["a0"]], "shard\\(s\\) 1 of 2 missing"),
        ([shard["a0"], shard["a0"]], "are both shard 0/2"),
        ([shard["a0"], shard["b1"]], "another corpus"),
        ([shard["a0"], shard["eps1"]], "another policy"),
        ([shard["a0"], broken], "broken.json: not a shard report .*'shard'"),
        ([shard["a0"], older], "older.json: a shard report of schema version 1; this "
                               "sedcontract merges version 2"),
        ([tmp_path / "missing.json"], "missing.json: file not found"),
    ]
    for paths, message in cases:
        code, _, err = run(["merge", *map(str, paths)], capsys)
        assert code == 2 and err.startswith("sedcontract: "), (paths, err)
        assert re.search(message, err), (message, err)
    before = shard["a0"].read_bytes()
    code, _, err = run(["merge", str(shard["a0"]), str(shard["a1"]), "--out", str(shard["a0"])],
                       capsys)
    assert code == 2 and "input" in err and shard["a0"].read_bytes() == before
    for bad in ("2/2", "1/0", "a/b", "1"):
        code, _, err = run(["audit", *inputs, "--format", "json", "--shard", bad], capsys)
        assert code == 2 and "--shard" in err
    code, _, err = run(["audit", *inputs, "--shard", "0/2"], capsys)
    assert code == 2 and "--format json" in err


def test_shards_of_corpora_that_differ_only_in_durations_do_not_merge(tmp_path, capsys):
    from sedcontract.guard.shards import corpus_key

    ref, pred, durations = corpus(0)
    classes = ["burst", "speech", "tone"]
    longer = {**durations, "clip03": durations["clip03"] + 1.0}
    assert corpus_key(ref, pred, classes, durations) == corpus_key(ref, pred, classes,
                                                                   dict(durations))
    assert corpus_key(ref, pred, classes, durations)["sha256"] != \
        corpus_key(ref, pred, classes, longer)["sha256"]
    inputs = write_corpus(tmp_path)
    first = tmp_path / "a0.json"
    assert run(["audit", *inputs, "--format", "json", "--shard", "0/2", "--out", str(first)],
               capsys)[0] == 0
    write_durations(tmp_path / "longer.tsv", longer)
    second = tmp_path / "b1.json"
    assert run(["audit", *inputs[:4], "--durations", str(tmp_path / "longer.tsv"),
                "--format", "json", "--shard", "1/2", "--out", str(second)], capsys)[0] == 0
    code, _, err = run(["merge", str(first), str(second)], capsys)
    assert code == 2 and "another corpus" in err, err


def dask_recipe():
    """scripts/audit_with_dask.py, imported as a module."""
    spec = importlib.util.spec_from_file_location("audit_with_dask",
                                                  ROOT / "scripts" / "audit_with_dask.py")
    recipe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipe)
    return recipe


def test_the_dask_recipe_gives_the_unsharded_report(tmp_path, capsys):
    """A Dask LocalCluster as the audit's executor: the same bytes as one process."""
    inputs = write_corpus(tmp_path)
    code, whole, _ = run(["audit", *inputs, "--format", "json", "--with-scores"], capsys)
    assert code == 0
    recipe = dask_recipe()
    out = tmp_path / "dask.json"
    assert recipe.main([*inputs, "--with-scores", "--shards", "5", "--workers", "2",
                        "--out", str(out)]) == 0
    assert out.read_text() == whole


def test_the_dask_recipe_counts_psds_of_a_score_folder_on_the_cluster(tmp_path, capsys):
    """``--pred-scores DIR --with-scores`` on a LocalCluster: the events read here, PSDS1 and
    PSDS2 counted by the workers from their blocks' files; the bytes of ``sedcontract audit``
    in one process."""
    from sedcontract.traces.score_files import scores_tsv

    ref, _, durations = corpus(1)
    inputs = write_corpus(tmp_path, seed=1)
    rng = np.random.default_rng(3)
    (tmp_path / "scores").mkdir()
    for clip in ref.clips:  # 20 ms frames over each clip
        frames = round(durations[clip] / 0.02)
        (tmp_path / "scores" / f"{clip}.tsv").write_text(scores_tsv(
            rng.random((frames, 3)) ** 3, ["burst", "speech", "tone"], 0.02))
    given = [*inputs[:2], "--pred-scores", str(tmp_path / "scores"), *inputs[4:]]
    code, whole, err = run(["audit", *given, "--format", "json", "--with-scores"], capsys)
    assert code == 0, err
    assert '"psds2"' in whole and '"note"' not in whole
    recipe = dask_recipe()
    out = tmp_path / "dask.json"
    assert recipe.main([*given, "--with-scores", "--shards", "3", "--workers", "2",
                        "--out", str(out)]) == 0
    assert out.read_text() == whole


def test_merge_refuses_deep_nesting_and_counts_that_ask_for_memory(tmp_path):
    """Memory grows with what a shard holds, never with a number written in it: a huge or
    fractional shard count, widths that do not fit the counts, counts that are not whole
    numbers in range, satisfied above obligations and deep nesting are refused naming the
    file."""
    from sedcontract.guard.shards import corpus_key, merge_shards, shard_json

    ref, pred, durations = corpus(0)
    paths, texts = [], []
    for i in range(2):
        part = sedcontract.audit(ref, pred, durations=durations, shard=(i, 2))
        paths.append(tmp_path / f"s{i}.json")
        texts.append(shard_json(part, i, 2, corpus_key(ref, pred, part.facts.classes,
                                                       durations)))
        paths[-1].write_text(texts[-1])
    assert to_json(merge_shards(paths)) == to_json(sedcontract.audit(ref, pred,
                                                                     durations=durations))
    for path, text in zip(paths, texts, strict=True):  # both shards say so
        path.write_text(text.replace('"count": 2,', f'"count": {10**12},'))
    with pytest.raises(SedContractError, match="shard\\(s\\) 2, 3, 4, 5, 6 and "
                       f"{10**12 - 7} more of {10**12} missing") as info:
        merge_shards(paths)
    # the files that state the impossible count are named
    assert f"the count the given shard(s) state ({paths[0]} (0/{10**12}), {paths[1]} " \
           f"(1/{10**12}))" in str(info.value)
    paths[0].write_text(texts[0])
    original = json.loads(texts[1])
    key, first = "typed/satisfied/onset", original["shard"]["clips"][0]

    def edit(change) -> None:
        data = json.loads(texts[1])
        change(data)
        paths[1].write_text(json.dumps(data))

    cases = [
        (lambda d: d["shard"].update(count=1e9), "'count' must be a whole number"),
        (lambda d: d["shard"].update(index=-1), "'index' must be a whole number"),
        (lambda d: d["shard"]["widths"].update({key: 10**18}), f"counts {key!r} are not"),
        (lambda d: d["shard"]["counts"][key].__setitem__(0, 1.5), f"counts {key!r} are not"),
        (lambda d: d["shard"]["counts"][key].__setitem__(0, 10**30), f"counts {key!r} are not"),
        (lambda d: d["shard"]["counts"][key].__setitem__(0, 10**6),
         f"satisfied above obligations .*clip {first!r}"),
        (lambda d: d["shard"].update(clips=first), "'clips' must be a list of names"),
        (lambda d: d["policy"].update(deep=json.loads("[" * 500 + "]" * 500)),
         "nested too deeply"),
    ]
    for change, message in cases:
        edit(change)
        with pytest.raises(SedContractError, match=f"s1.json: .*{message}"):
            merge_shards(paths)
    paths[1].write_text('{"shard": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(SedContractError, match=r"s1.json: .*nested too deeply"):
        merge_shards(paths)


def test_the_dask_recipe_reports_mistakes_as_the_cli_does(tmp_path, capsys):
    """Missing or malformed inputs, block and worker counts that would wait forever, and an
    output onto an input: one line each, status 2, before any cluster starts, nothing
    written (they were raw tracebacks, or a wait without end for --workers 0)."""
    recipe = dask_recipe()
    inputs = write_corpus(tmp_path)
    ref = tmp_path / "ref.tsv"
    before = ref.read_bytes()
    bad = tmp_path / "bad.tsv"
    bad.write_text("filename\tonset\toffset\tevent_label\nc.wav\t2.0\t1.0\tx\n")
    cases = [
        ([*inputs[2:], "--ref", str(tmp_path / "none.tsv")], "none.tsv: file not found"),
        ([*inputs[2:], "--ref", str(bad)], f"{bad}, row 2, column 'offset'"),
        ([inputs[0], inputs[1], "--pred-scores", str(tmp_path / "nowhere")],
         "nowhere: no such directory"),
        ([*inputs, "--shards", "0"], "argument --shards: 0 is less than 1"),
        ([*inputs, "--workers", "0"], "argument --workers: 0 is less than 1"),
        ([*inputs, "--out", str(ref)], f"cannot write {ref}: it is also an input of this "
                                       f"command (--ref {ref})"),
    ]
    for argv, message in cases:
        assert recipe.main(argv) == 2, message
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err
    assert ref.read_bytes() == before
