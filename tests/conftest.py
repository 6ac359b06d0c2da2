"""Settings and fixtures of every tier. The CPU kernels are pinned as ``reproducible=true`` pins
them. Hypothesis: no per-example deadline (CI machines vary); under CI the examples are
derandomized so a clean clone always runs the same cases. The DCASE baseline's operating points
and the score files they imply, made once per session."""

import os

import pytest
from hypothesis import settings

from sedcontract.kernels import pin_environment
from tests.helpers.paths import TEST_DATA

# pytest-xdist runs a worker per core and each worker's torch runs threads of its own: threads
# that spin while they wait take the cores from the other worker (the relaxation properties ran
# 6x slower), so waiting threads sleep. Where they wait changes no result.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# the kernels train.py pins (reproducible=true), set before any test imports torch: each library
# reads them at its first kernel, so every test runs them, whatever ran first
pin_environment()

settings.register_profile("default", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(scope="session")
def teacher_points(tmp_path_factory):
    """The DCASE baseline's 50 operating-point tables on DESED validation
    (``tests/data/real_dcase/teacher``), extracted once for the session."""
    import tarfile

    folder = tmp_path_factory.mktemp("points")
    archive = TEST_DATA / "real_dcase" / "teacher" / \
        "operating_points.tar.xz"
    with tarfile.open(archive) as opened:
        opened.extractall(folder, filter="data")
    return folder / "teacher"


@pytest.fixture(scope="session")
def teacher_scores(tmp_path_factory):
    """The baseline's frame scores its operating points imply
    (:func:`sedcontract.data.dcase_baseline.implied_scores`), written as sed_scores_eval score
    files, one per clip. Every clip has 156 frames, so frames run past the clips shorter than
    9.984 s, as the baseline writes them."""
    from tests.helpers.real_dcase import write_implied_scores

    return write_implied_scores(tmp_path_factory.mktemp("scores") / "scores")


