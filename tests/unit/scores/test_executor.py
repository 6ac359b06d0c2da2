"""Any executor: ``audit(..., executor=...)`` hands blocks of the clips to anything with
``submit`` (a thread or process pool here; a Dask client in scripts/dask_audit.py), each block
given only its clips' events, and the joined report is the one process's byte for byte; PSDS
from operating points is summed from the blocks' whole counts, equal bit for bit."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from multiprocessing import get_context

import numpy as np
import pytest

from sedcontract.errors import ContractCheckError, TraceFormatError
from sedcontract.guard import AuditPolicy, ScoreSettings, audit, to_csv, to_json, to_markdown
from sedcontract.scores.psds.operating_points import psds_of_points
from sedcontract.scores.psds.request import PsdsRequest
from sedcontract.scores.psds.settings import PRESETS
from sedcontract.traces import EventList


def corpus(clips: int = 23, seed: int = 0) -> tuple[EventList, EventList, dict[str, float]]:
    """Three classes, events that overlap (merged), vanish on the grid, end past the clip
    (cut), clips without events; predictions jittered, missed, confused and false."""
    rng = np.random.default_rng(seed)
    names = [f"c{i:02d}" for i in range(clips)]
    rows, pred = [], []
    for i, clip in enumerate(names):
        if i % 7 == 3:
            continue  # a clip without events
        for _ in range(int(rng.integers(1, 6))):
            on = float(np.round(rng.uniform(0, 9), 3))
            off = float(np.round(min(on + rng.uniform(0.005, 2.5), 10.1), 3))
            label = str(rng.choice(["dog", "cat", "speech"]))
            rows.append((clip, on, off, label))
            if rng.random() < 0.8:
                p_on = max(0.0, on + float(rng.normal(0, 0.1)))
                p_label = label if rng.random() < 0.9 else "cat"
                pred.append((clip, round(p_on, 3), round(max(p_on + 0.05, off + rng.normal(0,
                                                                                    0.1)), 3),
                             p_label))
        pred.append((clip, 1.0, 1.2, "dog"))
    ref = EventList.from_rows(rows, clips=names)
    return ref, EventList.from_rows(pred, clips=names), dict.fromkeys(names, 10.0)


@pytest.mark.parametrize("blocks", [1, 4, 23, 40])
def test_blocks_on_a_thread_pool_give_the_one_process_report(blocks):
    ref, pred, durations = corpus()
    policy = AuditPolicy(scores=ScoreSettings())
    alone = audit(ref, pred, policy, durations=durations)
    with ThreadPoolExecutor(3) as pool:
        joined = audit(ref, pred, policy, durations=durations, executor=pool, blocks=blocks)
    assert to_json(joined) == to_json(alone)
    assert to_markdown(joined) == to_markdown(alone)
    assert to_csv(joined, "s") == to_csv(alone, "s")
    assert alone.traces["cut"]["ref"] > 0 and alone.traces["merged"]["ref"] > 0


def test_a_process_pool_gives_the_same_bytes_with_psds_from_operating_points():
    ref, pred, durations = corpus(31, seed=3)
    points = [pred, pred.select(classes=["dog", "speech"]),
              EventList(pred.clip, pred.onset, pred.offset + 0.3, pred.label, clips=pred.clips)]
    request = PsdsRequest(points=points)
    alone = audit(ref, pred, durations=durations, psds=request)
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        joined = audit(ref, pred, durations=durations, psds=request, executor=pool, blocks=5)
        direct = psds_of_points(points, ref, durations, executor=pool, blocks=7)
    assert to_json(joined) == to_json(alone)
    for name in PRESETS:
        assert joined.psds[name]["value"] == alone.psds[name]["value"] == direct[name]["value"]
        assert joined.psds[name]["roc"] == alone.psds[name]["roc"]
    assert 0 < alone.psds["psds2"]["value"] < 1


def test_an_executor_keeps_the_checks_of_the_whole_corpus():
    ref, pred, durations = corpus()
    stray = EventList.from_rows([*pred.to_rows(), ("elsewhere", 0.0, 1.0, "dog")])
    with ThreadPoolExecutor(2) as pool:
        with pytest.raises(TraceFormatError, match="prediction for clip 'elsewhere'"):
            audit(ref, stray, durations=durations, executor=pool)
        with pytest.raises(TraceFormatError, match="label 'cat' is not one of the declared"):
            audit(ref, pred, durations=durations, classes=["dog", "speech"], executor=pool)
        with pytest.raises(ContractCheckError, match="shard or executor"):
            audit(ref, pred, durations=durations, executor=pool, shard=(0, 2))
        with pytest.raises(ContractCheckError, match="blocks must be a whole number"):
            audit(ref, pred, durations=durations, executor=pool, blocks=0)


def _one_and_blocks(ref, pred, blocks=(2, 4), **kwargs):
    """The refusal of one process, then that of each block count on a thread pool."""
    out = []
    for count in (None, *blocks):
        try:
            if count is None:
                audit(ref, pred, **kwargs)
            else:
                with ThreadPoolExecutor(2) as pool:
                    audit(ref, pred, executor=pool, blocks=count, **kwargs)
        except Exception as exc:  # compared, not handled
            out.append(f"{type(exc).__name__}: {exc}")
        else:
            out.append("accepted")
    return out


def _cases():
    names = ["a", "b", "c", "d"]
    ref = EventList.from_rows([("a", 1.0, 1.005, "dog"), ("b", 1.0, 1.004, "dog"),
                               ("c", 1.0, 3.0, "dog"), ("d", 2.0, 4.0, "cat")], clips=names)
    interleaved = EventList.from_rows([("c", 1.0, 2.0, "cat"), ("a", 1.0, 2.0, "bird"),
                                       ("d", 1.0, 2.0, "cat")], clips=names)
    late = EventList.from_rows([("d", 1.0, 11.0, "dog"), ("e", 1.0, 2.0, "dog")], clips=names)
    durations = dict.fromkeys(names, 10.0)
    return {
        # two clips' events vanish on a 100 ms grid: one process warns, a block must not refuse
        "vanishing": (ref, ref, {"durations": durations, "hop": 0.1}),
        "labels": (ref, interleaved, {"durations": durations, "classes": ["dog", "cat"]}),
        "missing durations": (ref, ref, {"durations": {"a": 10.0}}),
        "frames": (ref, ref, {"durations": {**durations, "c": 1e5}, "max_frames": 1000}),
        "order": (ref, late, {"durations": durations, "strict_durations": True}),
        "durations type": (ref, ref, {"durations": [1, 2]}),
    }


@pytest.mark.parametrize("case", list(_cases()))
def test_an_executor_refuses_and_accepts_exactly_what_one_process_does(case):
    ref, pred, kwargs = _cases()[case]
    one, *blocks = _one_and_blocks(ref, pred, **kwargs)
    assert blocks == [one] * len(blocks), case
    assert (one == "accepted") == (case == "vanishing"), one


def test_refusals_name_the_row_one_process_names():
    ref, pred, durations = corpus()
    policy = AuditPolicy(strict_durations=True)
    with pytest.raises(TraceFormatError) as alone:
        audit(ref, pred, policy, durations=durations)
    with ThreadPoolExecutor(2) as pool, pytest.raises(TraceFormatError) as joined:
        audit(ref, pred, policy, durations=durations, executor=pool, blocks=6)
    assert str(joined.value) == str(alone.value) and "--strict-durations" in str(alone.value)


def test_jobs_audit_a_shard_and_bad_blocks_are_refused():
    """--jobs N with --shard I/N audits the shard's clips on N processes: the shard's report."""
    ref, pred, durations = corpus(17)
    shard = audit(ref, pred, durations=durations, shard=(1, 3))
    assert to_json(audit(ref, pred, durations=durations, shard=(1, 3), jobs=2)) == to_json(shard)
    for bad in (0, False, 2.5):
        with pytest.raises(ContractCheckError, match="blocks must be a whole number"):
            audit(ref, pred, durations=durations, jobs=2, blocks=bad)


def test_an_event_list_travels_to_a_process_whole_and_compact():
    """Pickled, the text columns go as codes into their distinct values: the same events,
    rows and files back, in a fraction of the bytes of one string object each."""
    import pickle

    ref, _, _ = corpus(200)
    block = ref.select(clips=ref.clips[50:120])
    back = pickle.loads(pickle.dumps(block))
    assert back.to_rows() == block.to_rows() and back.clips == block.clips
    assert back.where(3) == block.where(3) and back.rows is not None
    files = EventList(ref.clip, ref.onset, ref.offset, ref.label, clips=ref.clips,
                      files=np.array([f"{c}.tsv" for c in ref.clip], dtype=object),
                      rows=np.arange(len(ref)) + 2)
    again = pickle.loads(pickle.dumps(files))
    assert again.where(7) == {"path": f"{ref.clip[7]}.tsv", "row": 9}
    youtube = EventList(np.array([f"Y{c}pbt6aJV8Y_350.000_360.000" for c in ref.clip],
                                 dtype=object), ref.onset, ref.offset, ref.label)
    read = read_back(youtube)  # a string object per field, as a file gives them
    assert len(pickle.dumps(read)) < len(pickle.dumps(vars(read)))  # the dataclass's own way
    assert pickle.loads(pickle.dumps(read)).to_rows() == read.to_rows()


def read_back(events: EventList) -> EventList:
    """The events as a file gives them: a string object per field."""
    import tempfile
    from pathlib import Path

    from sedcontract.traces import read_events, write_events

    with tempfile.TemporaryDirectory() as tmp:
        write_events(Path(tmp) / "e.tsv", events)
        return read_events(Path(tmp) / "e.tsv")


def test_jobs_start_their_processes_before_the_inputs_are_read(monkeypatch):
    """``audit(jobs=3)`` makes its 2 processes first (the calling process is the third): they
    are already running (each importing the tasks' module) while the inputs are read and
    checked, instead of starting after; the last block is the caller's, and the report is the
    one process's."""
    from sedcontract import blocks
    from sedcontract.guard import pipeline as guard

    made, alive_when_read, ran_here = [], [], []

    class Watched(blocks.ProcessesAndCaller):
        def __init__(self, jobs, module):
            super().__init__(jobs, module)
            made.append(self)

        def submit(self, fn, /, *args, **kwargs):
            future = super().submit(fn, *args, **kwargs)
            ran_here.append(future not in self.sent)
            return future

    monkeypatch.setattr(blocks, "ProcessesAndCaller", Watched)
    read = guard.events_of

    def reading(value, what):
        if made:
            alive_when_read.append(sum(p.is_alive()
                                       for p in (made[-1].pool._processes or {}).values()))
        return read(value, what)

    monkeypatch.setattr(guard, "events_of", reading)
    ref, pred, durations = corpus(19, seed=4)
    joined = audit(ref, pred, durations=durations, jobs=3)
    assert alive_when_read[0] == 2  # when the reference is read
    assert ran_here == [False, False, True]  # two blocks sent, the last one audited here
    assert to_json(joined) == to_json(audit(ref, pred, durations=durations))


def test_a_task_the_caller_runs_fails_where_its_result_is_taken():
    """A block the calling process audits that raises is reported as a worker's would be: by
    the future, where the results are joined."""
    from sedcontract.blocks import ProcessesAndCaller

    pool = ProcessesAndCaller(2, "sedcontract.blocks")
    try:
        sent = pool.submit(abs, -3)
        here = pool.submit(int, "not a number")  # the one process is busy: runs here
        assert sent.result() == 3
        with pytest.raises(ValueError):
            here.result()
    finally:
        pool.shutdown()
