"""Hundreds of classes, as AudioSet-strong has (456, named by MIDs such as ``/m/053hz1``): the
Markdown report stays readable (a row per class, the classes with the most reference events
first, the rest counted) while CSV and JSON keep every class; MIDs map through an
ontology-style class-map tsv."""

from __future__ import annotations

import json

import numpy as np

from sedcontract.cli import main
from sedcontract.guard import audit, to_csv, to_json, to_markdown
from sedcontract.traces import EventList, write_durations, write_events

MIDS = [f"/m/0{k:05x}" for k in range(30)]


def corpus() -> tuple[EventList, EventList]:
    """Class k has 30 − k reference events (one a clip), all found but class 29's."""
    rows = [(f"c{i:02d}", 1.0, 2.0, MIDS[k]) for k in range(30) for i in range(30 - k)]
    ref = EventList.from_rows(rows)
    return ref, EventList.from_rows([r for r in rows if r[3] != MIDS[29]], clips=ref.clips)


def test_a_report_of_30_classes_shows_the_20_with_most_events_and_counts_the_rest():
    ref, pred = corpus()
    report = audit(ref, pred, durations=dict.fromkeys(ref.clips, 10.0))
    text = to_markdown(report)
    table = text[text.index("Per class (typed)"):].split("\n\n")[1].splitlines()
    assert table[0].startswith("| class | onset | offset | missed |")
    assert [line.split(" | ")[0][2:] for line in table[2:]] == MIDS[:20]
    assert table[2].split(" | ")[3] == "1.000 (30/30)"  # missed of /m/000000: 30 events
    assert "10 more classes not shown: every class is in --format csv and json." in text
    assert "/m/00001d" not in text  # the class with the fewest events is left to CSV/JSON
    rows = to_csv(report, "s")
    assert {line.split(",")[4] for line in rows.splitlines()[1:]} >= set(MIDS)
    coordinates = json.loads(to_json(report))["modes"]["typed"]["coordinates"]
    assert set(coordinates["missed"]["per_class"]) == set(MIDS)
    assert "30 classes: /m/000000, /m/000001, /m/000002" in text  # the footer, shortened


def test_few_classes_keep_a_column_each():
    ref, pred = corpus()
    few = ref.select(classes=MIDS[:3])
    text = to_markdown(audit(few, pred.select(classes=MIDS[:3]),
                             durations=dict.fromkeys(ref.clips, 10.0)))
    assert f"| coordinate | {' | '.join(MIDS[:3])} |" in text


def test_mids_map_through_an_ontology_style_class_map(tmp_path, capsys):
    """A system that outputs display names (with spaces and commas) audited against MIDs."""
    names = {"/m/09x0r": "Speech", "/m/05zppz": "Male speech, man speaking", "/m/0bt9lr": "Dog"}
    ref = EventList.from_rows([("a", 0.0, 1.0, "/m/09x0r"), ("a", 2.0, 3.0, "/m/05zppz"),
                               ("b", 1.0, 4.0, "/m/0bt9lr")])
    pred = EventList.from_rows([("a", 0.0, 1.0, "Speech"), ("a", 2.0, 3.0,
                                                            "Male speech, man speaking"),
                                ("b", 1.0, 4.0, "Dog"), ("b", 5.0, 6.0, "Bark")])
    write_events(tmp_path / "ref.tsv", ref)
    write_events(tmp_path / "pred.tsv", pred)
    write_durations(tmp_path / "durations.tsv", {"a": 10.0, "b": 10.0})
    (tmp_path / "ontology.tsv").write_text(
        "source\ttarget\n" + "".join(f"{n}\t{m}\n" for m, n in names.items()) + "Bark\t-\n")
    assert main(["audit", "--ref", str(tmp_path / "ref.tsv"), "--pred",
                 str(tmp_path / "pred.tsv"), "--durations", str(tmp_path / "durations.tsv"),
                 "--class-map", str(tmp_path / "ontology.tsv"), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    typed = data["modes"]["typed"]["coordinates"]
    assert sorted(typed["missed"]["per_class"]) == sorted(names)
    assert typed["missed"]["score"] == 1.0 and typed["false"]["score"] == 1.0
    assert np.isclose(data["modes"]["union"]["coordinates"]["onset"]["score"], 1.0)
