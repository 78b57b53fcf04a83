"""Old module paths of ragspine_eval, importable for one release with a DeprecationWarning.

Notebooks and `module:callable` engines import by path (`from ragspine_eval.engines.base import
CaseOutcome`); the layout of 0.2 moved every module into a subpackage. An import of an old path
is answered with the new module itself (one module object, not a copy) and warns once, naming
the new path. To be removed in 0.3.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType

MOVED = {
    "ragspine_eval.golden": "ragspine_eval.qa.golden",
    "ragspine_eval.golden_check": "ragspine_eval.qa.golden_check",
    "ragspine_eval.kb": "ragspine_eval.qa.kb",
    "ragspine_eval.gates": "ragspine_eval.qa.gates",
    "ragspine_eval.groundedness": "ragspine_eval.qa.groundedness",
    "ragspine_eval.runner": "ragspine_eval.qa.runner",
    "ragspine_eval.service": "ragspine_eval.qa.service",
    "ragspine_eval.qa_eval": "ragspine_eval.qa.report",
    "ragspine_eval.engines": "ragspine_eval.qa.engines",
    "ragspine_eval.engines.base": "ragspine_eval.qa.engines.base",
    "ragspine_eval.engines.inprocess": "ragspine_eval.qa.engines.inprocess",
    "ragspine_eval.engines.http": "ragspine_eval.qa.engines.http",
    "ragspine_eval.engines.callable_engine": "ragspine_eval.qa.engines.callable_engine",
    "ragspine_eval.engines.factory": "ragspine_eval.qa.engines.factory",
    "ragspine_eval.extraction_records": "ragspine_eval.extraction.records",
    "ragspine_eval.extraction_eval": "ragspine_eval.extraction.scoring",
    "ragspine_eval.extraction_adapter": "ragspine_eval.extraction.adapter",
    "ragspine_eval.extraction_run": "ragspine_eval.extraction.run",
    "ragspine_eval.fixtures": "ragspine_eval.extraction.fixtures",
    "ragspine_eval.baseline": "ragspine_eval.ratchet",
    "ragspine_eval.console": "ragspine_eval.outputs.console",
    "ragspine_eval.junit": "ragspine_eval.outputs.junit",
    "ragspine_eval.summary_md": "ragspine_eval.outputs.summary_md",
    "ragspine_eval.diff": "ragspine_eval.outputs.diff",
    "ragspine_eval.stats": "ragspine_eval.outputs.stats",
    "ragspine_eval.provenance": "ragspine_eval.outputs.provenance",
    "ragspine_eval.frames": "ragspine_eval.workbench.frames",
    "ragspine_eval.charts": "ragspine_eval.workbench.charts",
    "ragspine_eval.tables": "ragspine_eval.workbench.tables",
    "ragspine_eval.kernel": "ragspine_eval.workbench.kernel",
    "ragspine_eval.notebook_reports": "ragspine_eval.workbench.notebooks",
    "ragspine_eval.cli_extraction": "ragspine_eval.cli.extraction",
}


class _Alias(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(f"{spec.name} moved to {self.new}; import it from there (the old path "
                      f"goes in ragspine-eval 0.3)", DeprecationWarning, stacklevel=2)
        module = importlib.import_module(self.new)
        sys.modules[spec.name] = module
        return module

    def exec_module(self, module: ModuleType) -> None:
        pass  # the new module is already executed


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: object = None, target: object = None
                  ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(name)
        if new is None:
            return None
        return importlib.util.spec_from_loader(name, _Alias(new))


def install() -> None:
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())  # before the path finder, which would load a copy
