"""Reading a DCASE 2024 Task 4 baseline score folder: sedcontract's reader (every value
checked, the class map applied, MAESTRO chunks merged back to file time) side by side with
sed_scores_eval's ``read_sed_scores`` (pandas, no checks) on the same folder, in one run.
The folder has the baseline's shape: DESED clips of 156 frames × 27 columns and 10 s MAESTRO
chunks every 5 s of 3-minute files.
Run: ``.venv/bin/python -W ignore benchmarks/score_folders.py``."""

from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from _memory import peak_mb
from _rows import record
from sedcontract.data.dcase_baseline import CLASS_MAPS, COLUMNS, FRAME, FRAMES
from sedcontract.traces.classmap import read_class_map
from sedcontract.traces.score_files import read_score_dir
from standard_scores import timed


def write_folder(folder: Path, desed: int, maestro: int, seed: int = 0) -> list[str]:
    """``desed`` clips and the chunks of ``maestro`` 180 s files; returns the file ids."""
    rng = np.random.default_rng(seed)
    times = np.arange(FRAMES + 1) * FRAME
    header = "\t".join(("onset", "offset", *COLUMNS))

    def write(name: str) -> None:
        scores = rng.random((FRAMES, len(COLUMNS)))
        body = "\n".join(f"{times[k]:.3f}\t{times[k + 1]:.3f}\t" + "\t".join(
            f"{v:.6f}" for v in scores[k]) for k in range(FRAMES))
        (folder / f"{name}.tsv").write_text(f"{header}\n{body}\n")

    for k in range(desed):
        write(f"Y{k:05d}")
    files = [f"scene_{k:02d}" for k in range(maestro)]
    for file in files:
        for start in range(0, 175, 5):
            write(f"{file}-{start * 100:06d}-{min(start + 10, 180) * 100:06d}")
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--desed", type=int, default=1168, help="DESED clips (validation: 1168)")
    parser.add_argument("--maestro", type=int, default=16, help="3-minute MAESTRO files")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny run that only checks the script works (tests use it)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.desed, args.maestro, args.repeat = 3, 1, 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from sed_scores_eval import io
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = write_folder(folder, args.desed, args.maestro)
        n = len(list(folder.glob("*.tsv")))
        desed_map = read_class_map(CLASS_MAPS["desed"])
        maestro_map = read_class_map(CLASS_MAPS["maestro"])
        clips = [p.stem for p in folder.glob("Y*.tsv")]
        rows = [
            ("every file, 27 columns", lambda: read_score_dir(folder),
             lambda: io.read_sed_scores(folder)),
            ("DESED track (map, skip chunks)",
             lambda: read_score_dir(folder, clips, class_map=desed_map, skipped=[]), None),
            ("MAESTRO track (map, merge chunks)",
             lambda: read_score_dir(folder, files, class_map=maestro_map, windows=True,
                                    skipped=[]), None),
        ]
        print(f"folder: {n} score files × {FRAMES} frames × {len(COLUMNS)} "
              f"classes ({args.desed} DESED clips, {args.maestro} MAESTRO files in 10 s "
              f"chunks every 5 s); best of {args.repeat}")
        print(f"{'reading':36s} {'sedcontract':>12s} {'sed_scores_eval':>16s} {'ratio':>7s}  "
              "peak MB (ours / theirs)")
        for name, ours, theirs in rows:
            t_ours, _ = timed(ours, args.repeat)
            case = f"{name}, {n} files"
            if theirs is None:
                our_mb = peak_mb(ours)
                print(f"{name:36s} {t_ours:11.2f}s {'':>16s} {'':>7s}  {our_mb:.0f}")
                record("score_folders.py", case, f"{t_ours:.2f} s", memory=f"{our_mb:.0f} MB")
                continue
            t_theirs, _ = timed(theirs, args.repeat)
            our_mb, their_mb = peak_mb(ours), peak_mb(theirs)
            print(f"{name:36s} {t_ours:11.2f}s {t_theirs:15.2f}s {t_theirs / t_ours:6.2f}×  "
                  f"{our_mb:.0f} / {their_mb:.0f}")
            record("score_folders.py", case, f"{t_ours:.2f} s", "sed_scores_eval (read_sed_scores)",
                   f"{t_theirs:.2f} s", f"{t_theirs / t_ours:.2f}×",
                   f"{our_mb:.0f} / {their_mb:.0f} MB", "— (sed_scores_eval checks nothing)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
