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
from sedcontract.audit import GuardReport, to_json
from sedcontract.audit.psds import PsdsRequest
from sedcontract.outputs import atomic_write
from sedcontract.traces import EventList, read_events
from sedcontract.traces.scores import DecisionPolicy, ScoreFolder, tables_to_events


def audit_on_dask(client: Any, ref: str | EventList, pred: str | EventList,
                  durations: str | None, shards: int, **settings: Any) -> GuardReport:
    """The audit with the cluster behind ``client`` as its executor, in ``shards`` blocks."""
    # the task is sedcontract.audit itself, so every worker imports it by name
    return sedcontract.audit(ref, pred, durations=durations, executor=client, blocks=shards,
                             **settings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", required=True)
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("--pred", help="the system's events (tsv)")
    given.add_argument("--pred-scores", help="a folder of score files (events at score > 0.5; "
                                             "PSDS1/PSDS2 with --with-scores)")
    parser.add_argument("--durations", default=None)
    parser.add_argument("--contract", default="standard")
    parser.add_argument("--with-scores", action="store_true")
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2, help="processes of the LocalCluster")
    parser.add_argument("--scheduler", default=None, help="address of a running cluster")
    parser.add_argument("--out", default=None, help="report file (default: standard output)")
    args = parser.parse_args(argv)
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        print("this recipe needs Dask: pip install -e '.[dask]'", file=sys.stderr)
        return 2
    settings: dict[str, Any] = {"contract": args.contract}
    if args.with_scores:
        settings["scores"] = sedcontract.ScoreSettings()
    ref, pred = args.ref, args.pred
    if args.pred_scores:  # the events read here one clip at a time; PSDS counted by workers
        ref = read_events(args.ref)
        # an absolute path: the workers of a remote cluster read their blocks' files
        folder = ScoreFolder.open(Path(args.pred_scores).resolve(), ref.clips)
        settings["decision"] = DecisionPolicy()
        pred = tables_to_events(folder.tables(), settings["decision"], args.pred_scores)
        if args.with_scores:
            settings["psds"] = PsdsRequest(scores=folder)
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
        atomic_write(args.out, text, inputs=[p for p in (args.ref, args.pred, args.pred_scores,
                                                         args.durations) if p])
    return 0


if __name__ == "__main__":
    sys.exit(main())
