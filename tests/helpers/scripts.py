"""The scripts of ``scripts/`` loaded as modules (their ``main``, constants and functions)."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys

from tests.helpers.paths import REPO

SCRIPTS = REPO / "scripts"


def script(name: str):
    """A fetch script as a module (its ``main`` and URLs)."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def imported_script(name: str):
    """A script of ``scripts/`` as a module, its folder on the path as when it runs."""
    folder = str(SCRIPTS)
    sys.path.insert(0, folder)
    try:
        yield importlib.import_module(name)
    finally:
        sys.path.remove(folder)
