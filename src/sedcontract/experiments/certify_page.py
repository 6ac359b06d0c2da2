"""The coverage experiment's page (docs/results/certify_coverage.md), rendered from its source
rows (certify_coverage.csv) and the run's record: per corpus and targets, how often each arm's
thresholds break a target, with Monte-Carlo standard errors over the splits, against the bound
δ + 2·√(δ(1 − δ)/splits)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from sedcontract.experiments.certify_coverage import ARMS

__all__ = ["COLUMNS", "bound", "coverage_page", "source_rows"]

COLUMNS = ("corpus", "targets", "procedure", "class", "coordinate", "alpha", "arm", "splits",
           "certified", "set_test", "set_test_se", "set_corpus", "set_corpus_se",
           "chosen_test", "chosen_test_se", "chosen_corpus", "chosen_corpus_se", "slack",
           "edge_gap")


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.6f}"
    return str(value)


def source_rows(table: Sequence[Mapping[str, Any]], **labels: str) -> list[dict[str, str]]:
    """:func:`~sedcontract.experiments.certify_coverage.coverage_table`'s entries as the
    page's source rows (6 decimals; NaN empty), each with ``labels`` (corpus, targets,
    procedure)."""
    return [{c: _cell({**entry, **labels}[c]) for c in COLUMNS} for entry in table]


def bound(delta: float, splits: int) -> float:
    """δ plus two Monte-Carlo standard errors of a rate of δ over ``splits`` splits."""
    return delta + 2 * math.sqrt(delta * (1 - delta) / splits)


def _number(text: str) -> float:
    return float(text) if text else math.nan


def _rate(row: Mapping[str, str], what: str) -> str:
    value, se = _number(row[what]), _number(row[f"{what}_se"])
    return f"{value:.3f} ± {se:.3f}"


def _summary(rows: Sequence[Mapping[str, str]], delta: float) -> list[str]:
    """A line per corpus, targets and arm: its cells, the largest and mean violation rates
    (set, judged on the corpus and on the test clips), and whether every cell is within the
    bound."""
    lines = ["| corpus | targets | arm | cells certified | largest rate, set on corpus | "
             "largest rate, set on test clips | mean rate, set on test clips | "
             "within δ + 2 s.e. | mean edge gap | mean slack |", "|---" * 10 + "|"]
    groups = sorted({(r["corpus"], r["targets"]) for r in rows})
    for corpus, targets in groups:
        for arm in ARMS:
            mine = [r for r in rows if (r["corpus"], r["targets"], r["arm"]) ==
                    (corpus, targets, arm) and _number(r["certified"]) > 0]
            if not mine:
                lines.append(f"| {corpus} | {targets} | {arm} | 0 | | | | | | |")
                continue
            limit = bound(delta, int(mine[0]["splits"]))
            corpus_rates = [_number(r["set_corpus"]) for r in mine]
            test_rates = [_number(r["set_test"]) for r in mine]
            within = sum(v <= limit for v in test_rates)
            gaps = [_number(r["edge_gap"]) for r in mine if r["edge_gap"]]
            slack = [_number(r["slack"]) for r in mine if r["slack"]]
            lines.append(
                f"| {corpus} | {targets} | {arm} | {len(mine)} | {max(corpus_rates):.3f} | "
                f"{max(test_rates):.3f} | {sum(test_rates) / len(mine):.3f} | "
                f"{within} of {len(mine)} (≤ {limit:.3f}) | "
                + (f"{sum(gaps) / len(gaps):+.3f}" if gaps else "n/a")
                + f" | {sum(slack) / len(slack):+.3f} |")
    return lines


def coverage_page(tables: Mapping[str, Sequence[Mapping[str, str]]],
                  meta: Mapping[str, Any]) -> str:
    """The page: how it was made, the summary per arm, and every cell."""
    rows = tables["rows"]
    delta = float(meta["delta"])
    lines = [
        "# Certified decisions: how often the thresholds break their targets on new clips", "",
        f"Regenerate: `{meta['command']}` ({meta['wall_s']:.0f} s on {meta['machine']}, "
        f"{meta['date']}). Source rows: `certify_coverage.csv`; the run's record: "
        "`certify_coverage_run.json`.", "",
        f"Each corpus's clips are split at random into calibration and test halves "
        f"({meta['splits_text']}); each arm chooses per-class thresholds on the calibration "
        f"half at δ = {delta:g}, from DESED_task's 50 thresholds (0.01 … 0.99):", "",
        "- **certified**: `sedcontract certify` (Hoeffding–Bentkus p-values; fixed-sequence "
        "testing along each coordinate's direction, or Holm when a target has none);",
        "- **naive**: the same risk and procedure with the p-value replaced by the empirical "
        "rule \"risk ≤ α\" (the control arm: one thing differs);",
        "- **curves**: today's `audit --curves --curves-targets` choice (pooled scores at least "
        "the targets on the calibration clips; the threshold inside the widest range).", "",
        "A cell (class, coordinate, arm) counts a split as a violation when the target breaks "
        "at some threshold of the arm's set (the certificate speaks of all of them at once): "
        "on the whole corpus (the population both halves are drawn from, what the guarantee "
        "is about) and on the test half (what a deployer sees, with the test half's own "
        "noise). A split without a set breaks nothing. Each arm is judged by what it "
        "promises: certified and naive by the certificate's risk (a clip's share of unmet "
        "obligations, averaged over the clips that carry one at the threshold), curves by the "
        "pooled scores it chose by (1 − Σ satisfied / Σ obligations). "
        "**Bound**: δ + 2·√(δ(1 − δ)/splits). **Edge gap**: how far (in threshold) the "
        "set's permissive end stays inside the test half's own edge, for coordinates with a "
        "direction (positive: conservative). **Slack**: α minus the largest test risk "
        "over the set.", "", "## Summary", ""]
    lines += _summary(rows, delta)
    lines += ["", "## Every cell", "",
              "Rates ± their Monte-Carlo standard errors over the splits; *made*: the share of "
              "splits where the arm chose a set.", "",
              "| corpus | targets | class | coordinate | α | arm | made | set breaks, corpus "
              "| set breaks, test | chosen breaks, test | edge gap | slack |",
              "|---" * 12 + "|"]
    for r in rows:
        if _number(r["certified"]) == 0:
            continue
        gap = f"{_number(r['edge_gap']):+.3f}" if r["edge_gap"] else "n/a"
        lines.append(
            f"| {r['corpus']} | {r['targets']} | {r['class']} | {r['coordinate']} | "
            f"{_number(r['alpha']):.2f} | {r['arm']} | {_number(r['certified']):.2f} | "
            f"{_rate(r, 'set_corpus')} | {_rate(r, 'set_test')} | {_rate(r, 'chosen_test')} | "
            f"{gap} | {_number(r['slack']):+.3f} |")
    return "\n".join(lines) + "\n"
