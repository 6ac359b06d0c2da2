"""Run psds_eval on the cases of a JSON job (standard input) and print their PSDS (standard
output): the oracle of the PSDS-from-operating-points tests, run by .venv-oracle's Python.

A case holds ``truth`` (rows filename, onset, offset, event_label) or ``truth_path`` (a tsv),
``durations`` ({filename: seconds}) or ``durations_path``, ``points`` (tables of rows) or
``point_paths`` (tsv files), and ``settings`` (dtc, gtc, cttc, alpha_ct, alpha_st, max_efpr).
The answer per case is ``{"value", "efpr", "etpr", "seconds"}`` (``seconds``: psds_eval's own
time on the case, the tables read) or ``{"error"}`` when psds_eval refuses."""

import json
import sys
import time
import warnings

import pandas as pd
from psds_eval import PSDSEval, PSDSEvalError

COLUMNS = ["filename", "onset", "offset", "event_label"]


def table(rows):
    return pd.DataFrame(rows, columns=COLUMNS).astype({"onset": float, "offset": float})


def run(case):
    truth = (pd.read_csv(case["truth_path"], sep="\t") if "truth_path" in case
             else table(case["truth"]))
    meta = (pd.read_csv(case["durations_path"], sep="\t") if "durations_path" in case else
            pd.DataFrame(list(case["durations"].items()), columns=["filename", "duration"]))
    points = ([pd.read_csv(p, sep="\t") for p in case["point_paths"]] if "point_paths" in case
              else [table(rows) for rows in case["points"]])
    s = case["settings"]
    start = time.perf_counter()
    try:
        ev = PSDSEval(dtc_threshold=s["dtc"], gtc_threshold=s["gtc"], cttc_threshold=s["cttc"],
                      ground_truth=truth, metadata=meta)
        for i, det in enumerate(points):
            ev.add_operating_point(det, info={"point": i})
        result = ev.psds(alpha_ct=s["alpha_ct"], alpha_st=s["alpha_st"],
                         max_efpr=s["max_efpr"])
    except PSDSEvalError as exc:
        return {"error": str(exc)}
    return {"value": float(result.value), "efpr": result.plt.xp.tolist(),
            "etpr": result.plt.yp.tolist(), "seconds": time.perf_counter() - start}


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    job = json.load(sys.stdin)
    json.dump([run(case) for case in job["cases"]], sys.stdout)
