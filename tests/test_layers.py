"""Imports point down the layers of DESIGN.md: traces → contracts → … → CLI; the core needs
numpy only (torch only in contracts/soft); Lightning from ``models`` up; Hydra only at the
edge (``config``, ``training``, ``evaluation``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "sedcontract"
ORDER = ["errors", "outputs", "traces", "contracts", "audit", "data", "models", "config",
         "training", "evaluation", "cli"]
EDGE = {"config", "training", "evaluation"}
HEAVY = {"torch", "torchaudio", "lightning", "hydra", "omegaconf", "wandb", "transformers"}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "sedcontract" else ""


def imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.stem)
def test_imports_point_down(path):
    relative = path.relative_to(PACKAGE)
    own = relative.parts[0].removesuffix(".py") if relative.parts[0] != "__init__.py" else None
    if own not in ORDER:
        return  # the package root re-exports the public API
    for module in imports(path):
        target = layer_of(module)
        if target in ORDER:
            assert ORDER.index(target) <= ORDER.index(own), f"{relative} imports {module}"
        soft = relative.parts[:2] == ("contracts", "soft")  # the torch relaxation (DESIGN)
        top = module.split(".")[0]
        if own in ("errors", "outputs", "traces", "contracts") and not soft:
            assert top not in HEAVY, f"{relative} imports {module}"
        if ORDER.index(own) < ORDER.index("models"):
            assert top not in {"lightning", "torchmetrics", "wandb"}, f"{relative} imports {module}"
        if own not in EDGE:
            assert top not in {"hydra", "omegaconf"}, f"{relative} imports {module}"


def test_the_layer_check_sees_real_imports():
    monitor = PACKAGE / "contracts" / "monitor.py"
    assert "sedcontract.traces.activity" in imports(monitor)
