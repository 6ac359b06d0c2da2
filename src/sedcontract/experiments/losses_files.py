"""Round 1's files in ``docs/results``: the source rows of its pages and the pages rendered
from them, and the lock (``heldout_choices.json``, ``heldout_lock.json``) that freezes its
choices before any held-out run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sedcontract.errors import ProtocolError
from sedcontract.experiments import losses_page
from sedcontract.experiments.contract_losses import ARMS, HELDOUT, choices_now
from sedcontract.experiments.locks import CodeState, read_lock, write_lock
from sedcontract.experiments.runs import heldout_runs
from sedcontract.experiments.tables import (
    Tables,
    read_tables,
    render_again,
    run_record,
    write_tables,
)

HELDOUT_STEM = "contract_losses"
DEVELOPMENT_STEM = "contract_losses_development"
SOURCE = "scripts/contract_losses.py"
SYSTEMS = (*ARMS, "contract")  # the candidates, and the locked one on the held-out page
# the columns of each source file
COLUMNS = {"rows": ("benchmark", "system", "seed", "post", "mode", "coordinate", "satisfied",
                    "obligations"),
           "psds": ("benchmark", "system", "seed", "psds1"),
           "post": ("benchmark", "system", "seed", "median_filter", "threshold", "low",
                    "validation_logic"),
           "intervals": ("benchmark", "system", "post", "control", "control_post", "mode",
                         "coordinate", "point", "lo", "hi", "level", "defined", "resamples")}


def paths_of(out: Path, stem: str) -> dict[str, Path]:
    """A page's source files, run record and page in ``out``."""
    return {"rows": out / f"{stem}.csv", "psds": out / f"{stem}_psds.csv",
            "post": out / f"{stem}_post.csv", "intervals": out / f"{stem}_intervals.csv",
            "meta": out / f"{stem}_run.json", "page": out / f"{stem}.md"}


def read_all_tables(out: Path, stem: str) -> Tables:
    """A page's source rows, each file checked (one line naming the file and row)."""
    return read_tables(paths_of(out, stem), COLUMNS, "the table", SOURCE, SYSTEMS)


def write_all(out: Path, stem: str, tables: Mapping[str, Sequence[Mapping[str, Any]]],
              meta: Mapping[str, Any]) -> str:
    """The source files and the page rendered from their text, all put in place together;
    the page."""
    return write_tables(paths_of(out, stem), COLUMNS, tables, meta, losses_page.render)


def render_to(out: Path, stem: str) -> str:
    """The page again from its source files; the page."""
    paths = paths_of(out, stem)
    tables = read_all_tables(out, stem)
    if not tables["rows"] or not tables["intervals"]:
        raise ProtocolError(f"{paths['rows' if not tables['rows'] else 'intervals']} has no rows")
    meta = run_record(paths["meta"], absent_is_incomplete=True)
    return render_again(paths, tables, meta, losses_page.render)


def lock_paths(out: Path) -> tuple[Path, Path]:
    """The choices file and the lock holding its digest."""
    return out / "heldout_choices.json", out / "heldout_lock.json"


def lock(out: Path, runs: Path, arm: str, code: CodeState) -> tuple[Path, str]:
    """Freeze the choices with ``arm``, refused over a lock, after held-out runs or tables, or
    on code with changes not committed (``code``); the choices file and its sha256."""
    choices_path, lock_path = lock_paths(out)
    chosen = choices_now(arm)
    seen = heldout_runs(runs, HELDOUT) + [p for p in (paths_of(out, HELDOUT_STEM)["rows"],)
                                          if p.exists()]
    if seen:
        raise ProtocolError(f"held-out results exist ({seen[0]}, {len(seen)} in all): a lock made "
                         "now could follow them; the protocol allows one lock before any "
                         "held-out run")
    for path in (lock_path, choices_path):
        if path.exists():
            raise ProtocolError(f"{path} exists: the choices are locked already (a new lock would "
                             "be a choice made again; remove it only if no held-out run was "
                             "ever made)")
    head, dirty = code()
    if dirty:
        raise ProtocolError("scripts/ or src/ (with the configs) have changes not committed: "
                         "commit the code that makes the choices, so the lock names it")
    return choices_path, write_lock(choices_path, lock_path, {**chosen, "commit": head})


def locked(out: Path) -> dict[str, Any]:
    """The locked choices, refused unless the file's digest is the lock's and every choice is
    the one the protocol makes now (a choice changed after the lock is named)."""
    def now_of(chosen: dict[str, Any]) -> dict[str, Any]:
        contract = chosen.get("contract")
        return choices_now(str(contract.get("name") if isinstance(contract, dict) else None))

    return read_lock(*lock_paths(out), now_of, "python scripts/contract_losses.py lock ARM")
