"""Round 2's files in ``docs/results``: the source rows of its pages and the pages rendered
from them, the lock (``round2_choices.json``, ``round2_lock.json``) that freezes the rules'
outcome before any held-out run, and a regenerated run's rows compared with the committed
ones."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sedcontract.errors import ProtocolError
from sedcontract.experiments import tradeoff_page
from sedcontract.experiments.locks import CodeState, read_lock, write_lock
from sedcontract.experiments.runs import heldout_runs
from sedcontract.experiments.tables import (
    Tables,
    read_tables,
    render_again,
    run_record,
    write_tables,
)
from sedcontract.experiments.tradeoff import FINETUNE_EPOCHS, HELDOUT, arms_of, choices_of, rules

DEVELOPMENT_STEM = "contract_tradeoff_development"
HELDOUT_STEM = "contract_tradeoff"
SOURCE = "scripts/contract_tradeoff.py"
SYSTEMS = tuple(arms_of(FINETUNE_EPOCHS, targets=True))  # every arm either round 2 page names
COLUMNS = {
    "rows": ("benchmark", "system", "seed", "post", "mode", "coordinate", "satisfied",
             "obligations"),
    "post": ("benchmark", "system", "seed", "median_filter", "threshold", "low",
             "validation_logic"),
    "intervals": ("benchmark", "system", "post", "control", "control_post", "mode",
                  "coordinate", "point", "lo", "hi", "level", "defined", "resamples"),
    "runs": ("benchmark", "system", "seed", "reading", "quantity", "value"),
    "systems": ("benchmark", "system", "reading", "quantity", "point", "lo", "hi", "defined",
                "resamples"),
    "contrasts": ("benchmark", "system", "control", "reading", "quantity", "point", "lo", "hi",
                  "defined", "resamples"),
}


def paths_of(out: Path, stem: str) -> dict[str, Path]:
    """A page's source files, run record and page in ``out``."""
    return {**{k: out / f"{stem}_{k}.csv" for k in COLUMNS}, "meta": out / f"{stem}_run.json",
            "page": out / f"{stem}.md"}


def stem_of(data_seed: int) -> str:
    """The page a benchmark's rows belong to."""
    return HELDOUT_STEM if data_seed in HELDOUT else DEVELOPMENT_STEM


def read_all_tables(out: Path, stem: str) -> Tables:
    """A page's source rows, each file checked (one line naming the file and row)."""
    return read_tables(paths_of(out, stem), COLUMNS, f"{stem}.md", SOURCE, SYSTEMS)


def write_all(out: Path, stem: str, tables: Mapping[str, Sequence[Mapping[str, Any]]],
              meta: Mapping[str, Any]) -> str:
    """The source files and the page rendered from their text, put in place together; the
    page."""
    return write_tables(paths_of(out, stem), COLUMNS, tables, meta, tradeoff_page.render)


def render_to(out: Path, stem: str) -> str:
    """The page again from its source files; the page."""
    paths = paths_of(out, stem)
    tables = read_all_tables(out, stem)
    return render_again(paths, tables, run_record(paths["meta"]), tradeoff_page.render)


def lock_paths(out: Path) -> tuple[Path, Path]:
    """The choices file and the lock holding its digest."""
    return out / "round2_choices.json", out / "round2_lock.json"


def lock(out: Path, runs: Path, code: CodeState) -> tuple[dict[str, Any], Path, str]:
    """Apply the rules to the development rows in ``out`` and freeze the choices, refused over a
    lock, after a held-out run or on uncommitted ``code``; the outcome, choices file, sha256."""
    choices_path, lock_path = lock_paths(out)
    if heldout_runs(runs, HELDOUT):
        raise ProtocolError(f"held-out runs exist ({heldout_runs(runs, HELDOUT)[0]}): the lock "
                         "must come before any held-out run")
    for path in (choices_path, lock_path):
        if path.exists():
            raise ProtocolError(f"{path} exists: the choices are locked already")
    head, dirty = code()
    if dirty:
        raise ProtocolError("scripts/ or src/ have changes not committed: commit the code that "
                         "makes the choices, so the lock names it")
    tables = read_all_tables(out, DEVELOPMENT_STEM)
    chosen = rules(tables["rows"], tables["intervals"])
    digest = write_lock(choices_path, lock_path, {**choices_of(chosen), "commit": head})
    return chosen, choices_path, digest


def locked(out: Path) -> dict[str, Any]:
    """The locked choices, refused unless the file's digest is the lock's and they are the
    choices the protocol makes now from the same rules' outcome."""
    return read_lock(*lock_paths(out), lambda chosen: choices_of(chosen.get("rules") or {}),
                     "python scripts/contract_tradeoff.py lock")


def mismatches(committed: Tables, fresh: Mapping[str, Sequence[Mapping[str, Any]]],
               data_seed: int, arm: str, seed: int) -> list[str]:
    """How one run's fresh rows (``rows``, ``post``, ``runs``) differ from the committed ones,
    character for character: a line a table, none when they are equal."""
    found = []
    for key in ("rows", "post", "runs"):
        ours = [{c: "" if r[c] is None else str(r[c]) for c in COLUMNS[key]} for r in fresh[key]]
        theirs = [r for r in committed[key] if (r["benchmark"], r["system"], r["seed"])
                  == (str(data_seed), arm, str(seed))]
        if ours != theirs:
            found.append(f"{key}: {sum(a != b for a, b in zip(ours, theirs, strict=True))} of "
                         f"{len(theirs)} rows differ" if len(ours) == len(theirs) else
                         f"{key}: {len(ours)} rows here, {len(theirs)} committed")
    return found
