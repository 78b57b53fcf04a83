"""The Jupyter kernel the notebooks are pinned to: `ragspine-eval`.

Invariant: the kernelspec never goes stale. Its argv starts with plain "python", which
jupyter_client replaces with the interpreter that starts the kernel (the one running papermill
or JupyterLab), so moving or re-creating .venv cannot leave it pointing at a Python that is gone.
`ensure_kernel()` (re)writes it into the running environment; the set-up calls it, and so does
`ragspine-eval notebooks` before it runs anything, so a missing or hand-edited spec is repaired.
The spec names the project's kernel provisioner (kernel_ipc), so the kernel starts over IPC,
never plain TCP, whoever starts it (papermill, `ragspine-eval notebooks`, JupyterLab).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PROVISIONER_NAME = "ragspine-eval-ipc"  # kernel_ipc.IpcProvisioner's entry point (pyproject.toml)
KERNEL_NAME = "ragspine-eval"
DISPLAY_NAME = "ragspine-eval (.venv)"


def kernelspec() -> dict:
    return {
        "argv": ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": DISPLAY_NAME,
        "language": "python",
        "metadata": {"debugger": True,
                     "kernel_provisioner": {"provisioner_name": PROVISIONER_NAME}},
    }


def kernel_dir(prefix: str | Path | None = None) -> Path:
    return Path(prefix or sys.prefix) / "share" / "jupyter" / "kernels" / KERNEL_NAME


def ensure_kernel(prefix: str | Path | None = None) -> Path:
    """Write the kernelspec unless an identical one is there; return its folder."""
    from ragspine_eval.files import write_atomic

    folder = kernel_dir(prefix)
    path = folder / "kernel.json"
    text = json.dumps(kernelspec(), indent=1) + "\n"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        write_atomic(path, text)
    return folder


if __name__ == "__main__":
    print(f"kernel {KERNEL_NAME!r} registered in {ensure_kernel()}")
