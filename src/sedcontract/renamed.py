"""Old import paths that keep working, each with a FutureWarning naming the new one. The
package ``sedcontract.audit`` is ``sedcontract.guard`` now: ``sedcontract.audit`` is the audit
function, which shadowed a package of that name (``import sedcontract.audit.curves`` failed
once ``sedcontract`` was imported). Its module ``guard`` is ``guard.report`` (the report types)
and ``guard.pipeline`` (the audit). Modules renamed for what they hold: score files are
``traces.score_files`` (was ``traces.scores``), PSDS from score tables is
``scores.psds.of_scores`` (was ``scores.psds.score_tables``)."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from typing import Any

OLD, NEW = "sedcontract.audit", "sedcontract.guard"
SPLIT = {f"{OLD}.guard": (f"{NEW}.report", f"{NEW}.pipeline")}
MOVED = {"sedcontract.traces.scores": "sedcontract.traces.score_files",
         "sedcontract.scores.psds.score_tables": "sedcontract.scores.psds.of_scores"}


def _warn(old: str, new: str) -> None:
    warnings.warn(f"{old} is {new} now; {old} will be removed", FutureWarning, stacklevel=3)


class _Forward(types.ModuleType):
    """An old module: each attribute taken from the new modules, with a warning."""

    def __init__(self, name: str, targets: tuple[str, ...]) -> None:
        super().__init__(name)
        self.__path__: list[str] = []  # a package, so ``sedcontract.audit.<module>`` imports
        self._targets = targets

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        for target in self._targets:
            module = importlib.import_module(target)
            if hasattr(module, attribute):
                _warn(f"{self.__name__}.{attribute}", f"{target}.{attribute}")
                return getattr(module, attribute)
        raise AttributeError(f"module {self.__name__!r} has no attribute {attribute!r}")


class _OldPaths:
    """Finds an old module path: the renamed module, the same object (a meta path finder and
    its loader by their methods; ``importlib.abc`` costs ``import sedcontract`` 35 ms)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if name in SPLIT or name in MOVED or (name.startswith(OLD + ".") and importlib.util
                                               .find_spec(NEW + name.removeprefix(OLD))):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if spec.name in SPLIT:
            _warn(spec.name, " and ".join(SPLIT[spec.name]))
            return _Forward(spec.name, SPLIT[spec.name])
        new = MOVED.get(spec.name) or NEW + spec.name.removeprefix(OLD)
        _warn(spec.name, new)
        return importlib.import_module(new)

    def exec_module(self, module: types.ModuleType) -> None:
        """The module is the new one, already run."""


def install() -> None:
    """Keep the old paths importable (once), never rebinding ``sedcontract.audit``."""
    if OLD not in sys.modules:
        # registered, not imported: importing it would bind sedcontract.audit to a module
        sys.modules[OLD] = _Forward(OLD, (NEW,))
        sys.meta_path.insert(0, _OldPaths())
