"""Hypothesis profiles: no per-example deadline (CI machines vary); under CI the examples are
derandomized so a clean clone always runs the same cases."""

import os

from hypothesis import settings

settings.register_profile("default", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")
