"""Imports point down the floors of docs/architecture.md: traces → contracts → scores →
guard → analysis → experiments → data / models → lightning → the Hydra edge and the CLI, and
no module imports itself through others (no cycle, function-level imports included). The core
needs numpy only (torch only in the torch backend of the monitor and in contracts/soft); the
networks in ``models`` never import Lightning; Lightning code never imports Hydra; Hydra only at
the edge (``config``, ``training``, ``evaluation``); ``import sedcontract`` imports neither torch
nor Lightning nor Hydra. Tests import helpers (``tests/helpers``), never another test module,
and nothing outside ``tests/`` imports from it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

PACKAGE = REPO / "src" / "sedcontract"
ORDER = ["renamed", "errors", "numbers", "requires", "outputs", "figures", "blocks",
         "resampling", "traces", "contracts", "scores", "guard", "analysis", "experiments",
         "data", "models", "kernels", "lightning", "config", "training", "evaluation", "cli"]
CORE = ("renamed", "errors", "numbers", "requires", "outputs", "figures", "blocks", "resampling",
        "traces", "contracts", "scores", "guard", "analysis", "experiments")
EDGE = {"config", "training", "evaluation"}
HEAVY = {"torch", "torchaudio", "lightning", "torchmetrics", "hydra", "omegaconf", "wandb",
         "transformers"}
TORCH_IN_CORE = {("contracts", "torch_backend.py"), ("contracts", "soft")}


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
        top = module.split(".")[0]
        if own in CORE:
            allowed = {"torch"} if relative.parts[:2] in TORCH_IN_CORE else set()
            assert top not in HEAVY - allowed, f"{relative} imports {module}"
        if own in ("data", "models"):  # plain torch: no Lightning, no metrics, no Hydra
            assert top not in {"lightning", "torchmetrics", "wandb", "hydra", "omegaconf"}, \
                f"{relative} imports {module}"
        if own not in EDGE:
            assert top not in {"hydra", "omegaconf"}, f"{relative} imports {module}"


def test_the_layer_check_sees_real_imports():
    monitor = PACKAGE / "contracts" / "monitor.py"
    assert "sedcontract.traces.activity" in imports(monitor)
    assert "lightning.pytorch" in imports(PACKAGE / "lightning" / "module.py")


def test_importing_the_package_stays_light():
    code = ("import sys, sedcontract, sedcontract.guard, sedcontract.contracts, "
            "sedcontract.scores, sedcontract.scores.psds, sedcontract.analysis, "
            "sedcontract.experiments.losses_files, sedcontract.experiments.tradeoff_files, "
            "sedcontract.experiments.tradeoff_readings; "
            "print(sorted(m for m in {'torch', 'lightning', 'hydra', 'omegaconf', 'wandb', "
            "'pandas'} "
            "if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "[]"


RECEIVE_THE_POLICY = [PACKAGE / "data", PACKAGE / "models",
                      *(PACKAGE / "lightning" / f"{name}.py"
                        for name in ("datamodule", "losses", "transforms", "module"))]


@pytest.mark.parametrize("path", sorted(p for place in RECEIVE_THE_POLICY
                                        for p in ([place] if place.is_file()
                                                  else place.rglob("*.py"))),
                         ids=lambda p: p.stem)
def test_data_models_and_losses_receive_the_policy_rather_than_build_one(path):
    """The entry points build the run's one policy; data, networks, losses and the detector
    module take it as an argument and never make their own (nor a copy of its grid)."""
    builders = {"AuditPolicy", "policy_of", "from_config", "instantiate"}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            assert name not in builders, f"{path.name}:{node.lineno} calls {name}"


def module_of(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """Module → the project's modules it imports anywhere in its text (function-level
    imports too); ``from package import name`` is the submodule when ``name`` is one."""
    modules = {module_of(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}"
                           in modules else node.module for alias in node.names]
            else:
                continue
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_through_others():
    graph = import_graph()
    # the package roots re-export their modules; a module importing its own package root
    # would close a cycle through it, and is a cycle too
    assert cycles(graph) == []


def test_the_cycle_check_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    graph = import_graph()
    assert "sedcontract.blocks" in graph["sedcontract.scores.psds.of_scores"]


TESTS = REPO / "tests"
OUTSIDE_THE_TESTS = [*(p for folder in ("src", "benchmarks", "scripts")
                       for p in sorted((REPO / folder).rglob("*.py"))),
                     REPO / "train.py", REPO / "evaluate.py"]


def imports_from_tests(path: Path) -> list[str]:
    """What ``path`` imports from ``tests`` (a relative import counts: it names a sibling)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            found.append("." * node.level + (node.module or ""))
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level \
            else []
        found += [n for n in names if n == "tests" or n.startswith("tests.")]
    return found


@pytest.mark.parametrize("path", sorted(TESTS.rglob("*.py")),
                         ids=lambda p: str(p.relative_to(TESTS)))
def test_tests_import_helpers_never_another_test_module(path):
    for name in imports_from_tests(path):
        assert name == "tests.helpers" or name.startswith("tests.helpers."), \
            f"{path.relative_to(REPO)} imports {name}: move what it needs into tests/helpers/"


@pytest.mark.parametrize("path", OUTSIDE_THE_TESTS, ids=lambda p: str(p.relative_to(REPO)))
def test_nothing_outside_the_tests_imports_them(path):
    assert imports_from_tests(path) == [], f"{path.relative_to(REPO)} imports from tests/"


def test_the_test_import_check_sees_test_modules_and_relative_imports(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import tests.unit.test_api\nfrom tests.conftest import build\n"
                     "from .test_cli import x\nfrom tests.helpers.paths import REPO\n"
                     "def f():\n    from tests import helpers\n")
    assert imports_from_tests(probe) == ["tests.unit.test_api", "tests.conftest", ".test_cli",
                                      "tests.helpers.paths", "tests"]


MAX_FILE_LINES, MAX_FUNCTION_LINES = 600, 80
LIMITS = {"cli/audit.py": 400}  # a command module composes: options, request, render


def sizes() -> dict[str, int]:
    """Lines of every module of the package, and of every function over the limit."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = str(path.relative_to(PACKAGE))
        text = path.read_text()
        found[name] = len(text.splitlines())
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    found[f"{name}:{node.name}"] = max(lines, found.get(f"{name}:{node.name}", 0))
    return found


def test_no_file_or_function_grows_past_the_limits():
    """600 lines a module (the audit command's 400), 80 a function: a newcomer edits rooms
    that fit."""
    for name, lines in sizes().items():
        limit = MAX_FUNCTION_LINES if ":" in name else LIMITS.get(name, MAX_FILE_LINES)
        assert lines <= limit, f"{name} has {lines} lines (at most {limit})"
