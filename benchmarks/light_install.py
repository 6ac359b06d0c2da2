"""The evaluation install measured: a wheel of the project installed without extras in a fresh
virtual environment beside only what its requirements need (numpy, scipy, matplotlib and
theirs), against the development environment (``.venv``, the ``train`` and ``test`` extras):
the size of each, ``import sedcontract`` and ``sedcontract scores`` on the real DCASE files in
each (median of fresh processes). Run: ``.venv/bin/python benchmarks/light_install.py``
(``--from-index``: the requirements installed by pip from the configured index instead of
linked from this environment — what ``pip install sedcontract`` does on a fresh machine)."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import venv
import zipfile
from importlib import metadata
from pathlib import Path

from _rows import record
from _timing import wall

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "real_dcase"
SCORES = ["scores", "--ref", str(DATA / "validation.tsv"), "--pred",
          str(DATA / "teacher" / "predictions0.5.csv"), "--durations",
          str(DATA / "validation_durations.tsv"), "--format", "json"]


def build_wheel(dest: Path) -> Path:
    """A wheel of the project, built from a copy of its sources (nothing written in the
    repository), without network or build isolation."""
    tree = dest / "tree"
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        tree.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tree / name)
    shutil.copytree(ROOT / "src", tree / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--no-index", "-q", "-w", str(dest / "dist"), str(tree)], check=True,
                   capture_output=True)
    return next((dest / "dist").glob("sedcontract-*.whl"))


def requirements(wheel: Path) -> list[str]:
    """The wheel's own requirements (``Requires-Dist`` without an extra): what ``pip install
    sedcontract`` installs."""
    with zipfile.ZipFile(wheel) as opened:
        name = next(n for n in opened.namelist() if n.endswith(".dist-info/METADATA"))
        text = opened.read(name).decode()
    return [line.split(":", 1)[1].strip() for line in text.splitlines()
            if line.startswith("Requires-Dist:") and "extra ==" not in line]


def closure(required: list[str]) -> list[metadata.Distribution]:
    """The installed distributions of ``required`` and everything they require (markers
    evaluated here, extras left out), each once."""
    from packaging.requirements import Requirement

    seen: dict[str, metadata.Distribution] = {}
    todo = list(required)
    while todo:
        requirement = Requirement(todo.pop())
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        key = requirement.name.lower().replace("_", "-")
        if key in seen:
            continue
        seen[key] = metadata.distribution(requirement.name)
        todo += seen[key].requires or []
    return list(seen.values())


def clean_env() -> dict[str, str]:
    """This process's environment without what would point a fresh environment's Python at
    other packages (``PYTHONPATH``, ``PYTHONHOME``, an active venv, the user's site folder):
    the evaluation install sees only what it holds."""
    drop = {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV"}
    return {**{k: v for k, v in os.environ.items() if k not in drop}, "PYTHONNOUSERSITE": "1"}


def site_packages(env: Path) -> Path:
    return next((env / "lib").glob("python*/site-packages"))


def light_env(dest: Path, *, from_index: bool = False) -> tuple[Path, list[str]]:
    """A fresh environment holding the project's wheel without extras and its requirements
    (linked from this environment, or installed from the index): its ``bin`` folder and the
    distributions it holds besides the project."""
    wheel = build_wheel(dest)
    env = dest / "env"
    venv.create(env, with_pip=True, clear=True)
    pip = [str(env / "bin" / "python"), "-m", "pip", "install", "-q"]
    if from_index:
        subprocess.run([*pip, str(wheel)], check=True, capture_output=True, env=clean_env())
        names = sorted(d.metadata["Name"] for d in metadata.distributions(
            path=[str(site_packages(env))]) if d.metadata["Name"] not in ("sedcontract", "pip"))
        return env / "bin", names
    subprocess.run([*pip, "--no-deps", "--no-index", str(wheel)], check=True,
                   capture_output=True, env=clean_env())
    site = site_packages(env)
    names = []
    for dist in closure(requirements(wheel)):
        names.append(dist.metadata["Name"])
        base = Path(dist.locate_file(""))
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops:
            if not (site / top).exists():
                (site / top).symlink_to(base / top)
    return env / "bin", sorted(names)


def size_mb(path: Path) -> float:
    """Bytes of every file below ``path``, links followed, each file once (a venv's ``lib64``
    is a link to ``lib``), in MB."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for folder, _, files in os.walk(path, followlinks=True):
        for name in files:
            with contextlib.suppress(OSError):  # a dangling link
                stat = os.stat(os.path.join(folder, name))
                if (stat.st_dev, stat.st_ino) not in seen:
                    seen.add((stat.st_dev, stat.st_ino))
                    total += stat.st_size
    return total / 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--from-index", action="store_true",
                        help="install the requirements from the configured index (network or "
                             "a local mirror) instead of linking them from this environment")
    parser.add_argument("--smoke", action="store_true",
                        help="one run each, which only checks the script works (tests use it)")
    args = parser.parse_args(argv)
    repeats = 1 if args.smoke else args.repeats
    full = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as tmp:
        light, names = light_env(Path(tmp), from_index=args.from_index)
        rows = []
        for label, bin_dir in (("evaluation install", light), ("development (.venv)", full)):
            python = str(bin_dir / "python")
            env = clean_env() if bin_dir == light else None
            rows.append((label, size_mb(bin_dir.parent),
                         wall([python, "-c", "import sedcontract"], repeats, env),
                         wall([str(bin_dir / "sedcontract"), *SCORES], repeats, env)))
        print(f"evaluation install: sedcontract + {', '.join(names)} "
              f"({'from the index' if args.from_index else 'linked from this environment'})")
        print("| environment | size MB | import sedcontract s | sedcontract scores s |")
        print("|---|---|---|---|")
        for label, size, start, scores in rows:
            print(f"| {label} | {size:.0f} | {start:.3f} | {scores:.3f} |")
        print(f"the evaluation install is {rows[0][1] / rows[1][1]:.1%} of the development "
              f"environment's size")
        cells = (("size", "{:.0f} MB"), ("import sedcontract", "{:.3f} s"),
                 ("sedcontract scores", "{:.3f} s"))
        for (what, shown), ours, theirs in zip(cells, rows[0][1:], rows[1][1:], strict=True):
            record("light_install.py", f"evaluation install: {what}", shown.format(ours),
                   "development venv (.venv)", shown.format(theirs), f"{theirs / ours:.1f}×")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
