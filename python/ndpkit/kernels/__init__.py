"""Real application kernels: device part, host part, reference, generator (one module each).

App names are shared with the models, planner and simulator: lc, he, knn2, knn6, knn8
(group knn), fft2d, kmeans, binarize, sobel; beyond the papers, knn2-topk, knn6-topk and
knn8-topk keep the k best on the device. `he` sends per-image histograms (α = 32);
`he-remap` is the papers' split, where the device also remaps the pixels (α = 1). Each module
defines `kernels()`, returning its kernels by name; they are imported on first use.
"""

from __future__ import annotations

from importlib import import_module

from ndpkit.errors import SpecError, UnknownNameError
from ndpkit.kernels.base import Kernel, KernelMismatchError, RowKernel, RowSpec, run_in_memory

_MODULES = {
    "lc": "lc",
    "he": "he",
    "he-remap": "he",
    "knn2": "knn",
    "knn6": "knn",
    "knn8": "knn",
    "knn2-topk": "knn",
    "knn6-topk": "knn",
    "knn8-topk": "knn",
    "fft2d": "fft2d",
    "kmeans": "kmeans",
    "binarize": "binarize",
    "sobel": "sobel",
}
GROUPS = {"knn": ("knn2", "knn6", "knn8")}


def kernel_names() -> list[str]:
    """Every app name `get_kernel` knows (not the groups: see `GROUPS`)."""
    return list(_MODULES)


def get_kernel(name: str, *, source: str | None = None) -> Kernel:
    """The kernel for an app name (e.g. "knn8"); `source` names where an unknown name came
    from in the error (a command's argument)."""
    # A list (["lc"]) was "unhashable type: 'list'" from the lookup.
    module = _MODULES.get(name) if isinstance(name, str) else None
    if module is None:
        # A group names several apps: where one is needed, say which it stands for.
        members = GROUPS.get(name) if isinstance(name, str) else None
        hint = f"{name} is a group ({', '.join(members)}): name one" if members else None
        raise UnknownNameError("app", name, kernel_names(), source=source, hint=hint)
    found: dict[str, Kernel] = import_module(f"ndpkit.kernels.{module}").kernels()
    return found[name]


def expand(names: list[str]) -> list[str]:
    """App names with groups expanded: ["knn", "lc"] → ["knn2", "knn6", "knn8", "lc"]."""
    if isinstance(names, str):  # iterated, "knn" was the apps 'k', 'n' and 'n'
        raise SpecError(
            f"must be a list of app names, got the string {names!r}: give [{names!r}]",
            field="names",
        )
    out: list[str] = []
    for name in names:
        out.extend(GROUPS.get(name, (name,)))
    return out


__all__ = [
    "GROUPS",
    "Kernel",
    "KernelMismatchError",
    "RowKernel",
    "RowSpec",
    "expand",
    "get_kernel",
    "kernel_names",
    "run_in_memory",
]
