"""An audit on a Dask cluster: the client is the audit's executor (``sedcontract.audit(...,
executor=client)``): every block of clips is a task given its clips' events, the reports come
back and join into the corpus's report (the bytes of one ``sedcontract audit --format json``).

    pip install -e '.[dask]'
    python scripts/audit_with_dask.py --ref ref.tsv --pred pred.tsv --durations durations.tsv \\
        --shards 8 --workers 4 --out report.json
    python scripts/audit_with_dask.py --ref ref.tsv --pred-scores scores/ --with-scores \\
        --durations durations.tsv --shards 8 --out report.json   # PSDS counted on the cluster

``--scheduler tcp://host:8786`` uses a running cluster instead of a ``LocalCluster``; the
events travel with the tasks, so the workers need no shared files, except for PSDS from a
score folder (``--pred-scores``), whose blocks each worker reads from the folder itself. Any
other executor (a process pool, Ray's, submitit's) is passed the same way. Where only
commands can be mapped: ``sedcontract audit … --shard I/N --format json`` per task (a SLURM
array), then ``sedcontract merge shard-*.json``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import sedcontract
from sedcontract.cli.command import given, reported
from sedcontract.cli.options import whole_number
from sedcontract.contracts import contract_file
from sedcontract.errors import SedContractError
from sedcontract.guard import GuardReport, to_json
from sedcontract.outputs import Outputs
from sedcontract.scores.psds.request import PsdsRequest
from sedcontract.scores.segment_roc import AurocRequest
from sedcontract.traces import EventList, read_events
from sedcontract.traces.score_files import (
    DecisionPolicy,
    ScoreFolder,
    score_files,
    tables_to_events,
)


def audit_on_dask(client: Any, ref: str | EventList, pred: str | EventList,
                  durations: str | None, shards: int, **settings: Any) -> GuardReport:
    """The audit with the cluster behind ``client`` as its executor, in ``shards`` blocks."""
    # the task is sedcontract.audit itself, so every worker imports it by name
    return sedcontract.audit(ref, pred, durations=durations, executor=client, blocks=shards,
                             **settings)


def run(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", required=True)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--pred", help="the system's events (tsv)")
    source.add_argument("--pred-scores", help="a folder of score files (events at score > 0.5; "
                                             "PSDS1/PSDS2 with --with-scores)")
    parser.add_argument("--durations", default=None)
    parser.add_argument("--contract", default="standard")
    parser.add_argument("--with-scores", action="store_true")
    parser.add_argument("--shards", type=whole_number(1), default=8,
                        help="blocks of clips, one task each (default 8)")
    parser.add_argument("--workers", type=whole_number(1), default=2,
                        help="processes of the LocalCluster (default 2)")
    parser.add_argument("--scheduler", default=None, help="address of a running cluster")
    parser.add_argument("--out", default=None, help="report file (default: standard output)")
    args = parser.parse_args(argv)
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise SedContractError("this recipe needs Dask: pip install -e '.[dask]'") from None
    reads = {"--ref": args.ref, "--pred": args.pred, "--durations": args.durations,
             "--contract": contract_file(args.contract),
             "--pred-scores": score_files(args.pred_scores) if args.pred_scores else []}
    with Outputs(reads=reads, writes={"--out": given(args.out)}) as out:  # checked first
        settings: dict[str, Any] = {"contract": args.contract}
        if args.with_scores:
            settings["scores"] = sedcontract.ScoreSettings()
        # the events read here, before a cluster starts: a bad row stops the run at once
        ref = read_events(args.ref)
        pred = read_events(args.pred) if args.pred else None
        if args.pred_scores:  # read one clip at a time; PSDS counted by the workers
            # an absolute path: the workers of a remote cluster read their blocks' files
            folder = ScoreFolder.open(Path(args.pred_scores).resolve(), ref.clips)
            settings["decision"] = DecisionPolicy()
            pred = tables_to_events(folder.tables(), settings["decision"], args.pred_scores)
            if args.with_scores:  # and the segment-based AUROC, read here
                settings["psds"] = PsdsRequest(scores=folder)
                settings["auroc"] = AurocRequest(folder)
        if args.scheduler:
            with Client(args.scheduler) as client:
                report = audit_on_dask(client, ref, pred, args.durations, args.shards,
                                       **settings)
        else:
            with LocalCluster(n_workers=args.workers, threads_per_worker=1,
                              dashboard_address=None) as cluster, Client(cluster) as client:
                report = audit_on_dask(client, ref, pred, args.durations, args.shards,
                                       **settings)
        text = to_json(report)
        if args.out is None:
            sys.stdout.write(text)
        else:
            out.write(args.out, text)
    return 0


def main(argv: list[str] | None = None) -> int:
    """The recipe; a mistake ends with one line and status 2, as the CLI's do."""
    return reported("audit_with_dask", run, argv)


if __name__ == "__main__":
    sys.exit(main())
