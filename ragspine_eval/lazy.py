"""The names a package exports, each imported on first use.

`lazy_exports(package, where)` gives a package's `__all__` and its module-level `__getattr__`
(PEP 562) from a map of name -> the module inside the package that defines it, so that
importing one part of a package does not import all of it: a warm `qa` run never imports the
engine or pandas. One definition for every package's `__init__`.
"""

from collections.abc import Callable, Iterable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(package: str, where: Mapping[str, str], also: Iterable[str] = ()
                 ) -> tuple[list[str], Callable[[str], Any]]:
    """(`__all__`, `__getattr__`) of `package`; `also` names what the package defines itself."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{where[name]}"), name)

    return sorted([*where, *also]), __getattr__
