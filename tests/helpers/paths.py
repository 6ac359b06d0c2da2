"""Where things are: the repository and the fixture files the tests ship."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEST_DATA = REPO / "tests" / "data"
