"""``report.html`` in a real browser: Debian's headless Chromium opens a report of several
systems (both modes, long tables, a sweep, timelines, a baseline) at 1280 px and a script in a
test-only copy of the page measures it — nothing wider than the page (tables folded or
unfolded), every image loaded and inside the page, the overview the first table and whole,
sections in order, text readable on its cell colour. A screenshot is saved beside the report.

Chromium is required: ``.ci/run`` installs it when missing (``apt-get install chromium``).
Without it the tests fail, saying how to install it, unless ``SEDCONTRACT_SKIP_BROWSER=1``
says on purpose that this machine has no browser (then they skip, naming the variable)."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

import sedcontract
from sedcontract.cli import main
from sedcontract.guard import ScoreSettings, to_csv
from sedcontract.traces import EventList, write_durations, write_events
from tests.helpers.examples import random_reference

WIDTH = 1280
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars")
SYSTEMS = 6
CLIPS = 40

# Run in the page after every image has loaded; writes its measurements into <pre id=checks>.
CHECKS = """<script>
window.addEventListener("load", () => {
  const root = document.documentElement, out = {innerWidth: innerWidth};
  out.closedScrollWidth = root.scrollWidth;
  const tables = [...document.querySelectorAll("table")];
  out.firstTable = tables.length ? tables[0].className : null;
  out.tables = tables.length;
  const ov = document.querySelector("table.overview");
  out.overview = {right: ov.getBoundingClientRect().right, width: ov.offsetWidth,
                  box: ov.parentElement.clientWidth,
                  clipped: [...ov.querySelectorAll("td, th")].filter(
                    c => c.scrollWidth > c.clientWidth + 1).length};
  out.cells = [...ov.querySelectorAll("td")].map(c => {
    const s = getComputedStyle(c); return [s.color, s.backgroundColor, c.textContent]; });
  const top = id => document.getElementById(id).getBoundingClientRect().top;
  out.order = ["overview", "comparison", "figures", "tables"].map(top);
  out.detailsClosed = [...document.querySelectorAll("details")].every(
    d => !d.open || d.id === "per_class");
  out.perClassOpen = document.getElementById("per_class").open;
  out.details = document.querySelectorAll("details").length;
  document.querySelectorAll("details").forEach(d => { d.open = true; });
  out.openScrollWidth = root.scrollWidth;
  out.h1 = document.querySelector("h1").textContent;
  out.pairedScores = [...document.querySelectorAll("caption")].filter(
    c => c.textContent.startsWith("Standard scores: each system minus")).map(c => ({
      caption: c.textContent, right: c.parentElement.getBoundingClientRect().right,
      cells: [...c.parentElement.querySelectorAll("td")].map(d => d.textContent)}));
  out.images = [...document.images].map(i => ({complete: i.complete, natural: i.naturalWidth,
    shown: i.getBoundingClientRect().width, right: i.getBoundingClientRect().right}));
  const pre = document.createElement("pre");
  pre.id = "checks";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def chromium() -> str:
    """Debian's chromium (``SEDCONTRACT_CHROMIUM`` names another binary)."""
    found = shutil.which(os.environ.get("SEDCONTRACT_CHROMIUM") or "chromium")
    if found:
        return found
    if os.environ.get("SEDCONTRACT_SKIP_BROWSER") == "1":
        pytest.skip("no chromium, and SEDCONTRACT_SKIP_BROWSER=1 says so on purpose")
    pytest.fail("the browser tests need Debian's chromium: apt-get install -y "
                "--no-install-recommends chromium (.ci/run does this when it is missing); set "
                "SEDCONTRACT_SKIP_BROWSER=1 to skip them on a machine without one", pytrace=False)


def browse(page: Path, scratch: Path, *options: str) -> str:
    """Chromium's standard output for ``page`` at 1280 px, in a profile of its own."""
    scratch.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={scratch / 'profile'}",
                           *options, page.resolve().as_uri()], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def perturbed(ref: EventList, rng: np.random.Generator, severity: float) -> EventList:
    """The reference with jittered boundaries, dropped, split and false events."""
    rows = []
    for clip, on, off, label in zip(ref.clip, ref.onset, ref.offset, ref.label, strict=True):
        if rng.random() < 0.1 * severity:
            continue
        on = max(0.0, on + rng.normal(0, 0.1 * severity))
        off = max(on + 0.05, off + rng.normal(0, 0.15 * severity))
        if off - on > 0.3 and rng.random() < 0.1 * severity:
            middle = (on + off) / 2
            rows += [(clip, on, middle - 0.03, label), (clip, middle + 0.03, off, label)]
        else:
            rows.append((clip, on, off, label))
    for clip in ref.clips:
        if rng.random() < 0.3 * severity:
            t = rng.uniform(0, 9)
            rows.append((clip, t, t + 0.4, "tone"))
    return EventList.from_rows([(c, round(a, 3), round(b, 3), lab) for c, a, b, lab in rows],
                               clips=ref.clips)


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    """report.html of six systems over 40 clips: groups, a sweep, a timeline, a baseline."""
    root = tmp_path_factory.mktemp("browser")
    ref = random_reference(0, CLIPS)
    durations = dict.fromkeys(ref.clips, 10.0)
    write_events(root / "ref.tsv", ref)
    write_durations(root / "durations.tsv", durations)
    rng = np.random.default_rng(1)
    rows, sweep = [], ["sweep", "--ref", str(root / "ref.tsv"), "--durations",
                       str(root / "durations.tsv"), "--eps", "0,100ms,200ms,300ms",
                       "--csv", str(root / "sweep.csv")]
    for s in range(SYSTEMS):
        name = f"detector_{s}" if s else "baseline"
        pred = perturbed(ref, rng, 0.2 + 0.3 * s)
        write_events(root / f"{name}.tsv", pred)
        report = sedcontract.audit(ref, pred, durations=durations, scores=ScoreSettings())
        (root / f"{name}.csv").write_text(to_csv(report, name))
        rows.append(str(root / f"{name}.csv"))
        sweep += ["--pred", f"{name}={root / f'{name}.tsv'}"]
    assert main(sweep) == 0
    (root / "groups.tsv").write_text("filename\tfamily\n" + "".join(
        f"{clip}\t{('jitter', 'drop', 'split')[i % 3]}\n" for i, clip in enumerate(ref.clips)))
    (root / "timelines").mkdir()
    assert main(["show", "--ref", str(root / "ref.tsv"), "--pred", str(root / "detector_3.tsv"),
                 "--durations", str(root / "durations.tsv"), "--clip", ref.clips[0],
                 "--out", str(root / "timelines" / "clip0.png")]) == 0
    assert main(["report", *rows, "--out", str(root / "report"), "--groups",
                 str(root / "groups.tsv"), "--sweep", str(root / "sweep.csv"), "--timelines",
                 str(root / "timelines"), "--baseline", "baseline", "--bootstrap", "300"]) == 0
    return root / "report" / "report.html"


def luminance(css: str) -> float:
    """The WCAG relative luminance of an ``rgb(r, g, b)`` colour."""
    channels = [int(v) / 255 for v in re.findall(r"\d+", css)[:3]]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_the_report_fits_a_1280_px_page_and_every_image_loads(page, tmp_path):
    copy = tmp_path / "checked.html"
    copy.write_text(page.read_text().replace("</body>", CHECKS + "</body>"))
    dom = browse(copy, tmp_path, f"--window-size={WIDTH},1000", "--virtual-time-budget=5000",
                 "--dump-dom")
    found = re.search(r'<pre id="checks">(.*?)</pre>', dom, re.S)
    assert found, "the check script did not run: " + dom[-500:]
    out = json.loads(html.unescape(found.group(1)))
    assert out["innerWidth"] == WIDTH
    # nothing overflows the page, with the tables folded and with all of them unfolded
    assert out["closedScrollWidth"] <= WIDTH and out["openScrollWidth"] <= WIDTH, out
    # the overview is the first table, whole on the page: no scrolling box, no clipped cell
    assert out["firstTable"] == "overview"
    view = out["overview"]
    assert view["right"] <= WIDTH and view["width"] <= view["box"] and view["clipped"] == 0
    # overview, comparison, figures, then the long tables, folded until opened (but the
    # per-class vectors, unfolded in the overview)
    assert out["order"] == sorted(out["order"])
    assert out["detailsClosed"] and out["details"] >= 7 and out["perClassOpen"]
    # the figures: vectors, sweep and the timeline, each loaded and inside the page
    assert len(out["images"]) == 3
    for image in out["images"]:
        assert image["complete"] and image["natural"] > 0, image
        assert 0 < image["shown"] <= image["natural"] and image["right"] <= WIDTH, image
    # every cell has a score or says vacuous, and its text is readable on its colour
    assert len(out["cells"]) == SYSTEMS * 16
    for colour, background, text in out["cells"]:
        assert re.match(r"^(\d\.\d{3}\d\.\d{3}–\d\.\d{3}|vacuous)$", text), text
        light, dark = sorted((luminance(colour), luminance(background)), reverse=True)
        assert (light + 0.05) / (dark + 0.05) >= 7, (colour, background, text)


def test_a_screenshot_of_the_top_of_the_report(page, tmp_path):
    """Saved as ``report.png`` beside the checks (for a person to look at): 1280 px wide."""
    shot = tmp_path / "report.png"
    browse(page, tmp_path, f"--window-size={WIDTH},2400", f"--screenshot={shot}")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (WIDTH, 2400)
    print(f"\nscreenshot: {shot}")


@pytest.fixture(scope="module")
def desed_page(teacher_scores, tmp_path_factory) -> Path:
    """report.html of three systems on the real DESED validation files (the DCASE baseline's
    scores thresholded at 0.5 and 0.3, and the same scores three frames late), each audited
    with the ranking metrics' and the guard curves' draws (``audit --format csv --curves
    --bootstrap 200``)."""
    from tests.helpers.real_dcase import DURATIONS, REF

    root = tmp_path_factory.mktemp("desed_browser")
    late = root / "late"
    late.mkdir()
    for path in teacher_scores.iterdir():
        head, *lines = path.read_text().splitlines()
        cells = [line.split("\t") for line in lines]
        shifted = [row[:2] + (["0"] * (len(row) - 2) if k < 3 else cells[k - 3][2:])
                   for k, row in enumerate(cells)]
        (late / path.name).write_text("\n".join([head, *("\t".join(r) for r in shifted)])
                                      + "\n")
    rows = []
    for name, folder, threshold in (("th0.5", teacher_scores, "0.5"),
                                    ("th0.3", teacher_scores, "0.3"), ("late", late, "0.5")):
        assert main(["audit", "--ref", str(REF), "--durations", str(DURATIONS), "--clips",
                     "durations", "--pred-scores", str(folder), "--threshold", threshold,
                     "--with-scores", "--bootstrap", "200", "--format", "csv", "--system",
                     name, "--curves", "--out", str(root / f"{name}.csv")]) == 0
        rows.append(str(root / f"{name}.csv"))
    assert main(["report", *rows, "--out", str(root / "report"), "--baseline", "th0.5",
                 "--bootstrap", "200", "--title", "DESED validation"]) == 0
    return root / "report" / "report.html"


def test_the_desed_report_shows_what_dcase_ranks_on_and_fits_1280_px(desed_page, tmp_path):
    """The first table holds PSDS1, PSDS2, mAUC and mpAUC of each system with an interval;
    the standard scores come micro and macro with intervals, and against the baseline their
    paired differences (macro F1 too); the page is titled with the data (``--title``) and
    names 1168 clips × 10 classes; the per-class PSD-ROC figures load; nothing is wider than
    the page."""
    text = desed_page.read_text()
    assert ("<h1>DESED validation</h1>\n<p class=\"subtitle\">Guard vectors of 3 systems on "
            "1168 clips × 10 classes</p>") in text
    assert "<title>sedcontract report: DESED validation: 3 systems" in text
    copy = tmp_path / "checked.html"
    copy.write_text(text.replace("</body>", CHECKS + "</body>"))
    dom = browse(copy, tmp_path, f"--window-size={WIDTH},1000", "--virtual-time-budget=8000",
                 "--dump-dom")
    found = re.search(r'<pre id="checks">(.*?)</pre>', dom, re.S)
    assert found, "the check script did not run: " + dom[-500:]
    out = json.loads(html.unescape(found.group(1)))
    assert out["closedScrollWidth"] <= WIDTH and out["openScrollWidth"] <= WIDTH, out
    view = out["overview"]
    assert view["right"] <= WIDTH and view["clipped"] == 0
    assert out["h1"] == "DESED validation"
    paired = out["pairedScores"]  # micro, then macro F1: 2 systems minus th0.5 × 6 scores
    assert [t["caption"].split(", typed ")[1][:8] for t in paired] == ["micro F1", "macro F1"]
    for table in paired:
        assert table["right"] <= WIDTH and len(table["cells"]) == 2 * 6, table
        for cell in table["cells"]:
            assert re.match(r"^[+−-]\d\.\d{3}\[[+−-]\d\.\d{3}, [+−-]\d\.\d{3}\]( [↑↓])?$",
                            cell), cell
    assert len(out["cells"]) == 3 * 4  # the ranking table: 3 systems × PSDS1, PSDS2, mAUC, mpAUC
    for _, _, cell in out["cells"]:
        assert re.match(r"^0\.\d{3}0\.\d{3}–0\.\d{3}$", cell), cell
    # the vectors, the per-class PSD-ROC of PSDS1 and PSDS2, and the guard curves
    assert len(out["images"]) == 4
    for image in out["images"]:
        assert image["complete"] and image["natural"] > 0 and image["right"] <= WIDTH, image
    assert re.search(r"0\.353<span class=\"iv\">0\.3\d\d–0\.3\d\d</span>", text)  # PSDS1
    assert '<th scope="col">macro</th>' in text
    # the guard curves do not depend on the threshold picked: th0.3 and th0.5 share them, and
    # the late system's onset area is below theirs with a paired interval below 0
    import csv

    rows = list(csv.DictReader((desed_page.parent / "overview.csv").open()))
    area = {(r["system"], r["name"]): float(r["score"]) for r in rows
            if r["name"].startswith("curve_")}
    assert {n for _, n in area} >= {"curve_onset", "curve_missed", "curve_silence"}
    for name in {n for _, n in area}:
        assert area[("th0.3", name)] == area[("th0.5", name)], name
    assert area[("late", "curve_onset")] < area[("th0.5", "curve_onset")] - 0.05
    paired = next(r for r in csv.DictReader((desed_page.parent / "comparison.csv").open())
                  if r["system"] == "late" and r["name"] == "curve_onset")
    assert float(paired["hi"]) < 0
    assert "Guard curves: each coordinate&#x27;s mean score over false-activity budgets up " \
        "to 100 per hour" in text or "Guard curves: each coordinate's mean score" in text
    shot = tmp_path / "desed_report.png"
    browse(desed_page, tmp_path, f"--window-size={WIDTH},2400", f"--screenshot={shot}")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"\nscreenshot: {shot}")
