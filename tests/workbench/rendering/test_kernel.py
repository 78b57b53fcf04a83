"""The notebooks' kernelspec cannot go stale, and a missing or edited one is rewritten."""

from __future__ import annotations

import json
import sys

from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager

from ragspine_eval.workbench.rendering import kernel


def test_missing_kernelspec_is_written(tmp_path):
    folder = kernel.ensure_kernel(tmp_path)
    spec = json.loads((folder / "kernel.json").read_text())
    assert spec["argv"][0] == "python" and folder.name == kernel.KERNEL_NAME


def test_stale_kernelspec_is_repaired(tmp_path):
    path = kernel.kernel_dir(tmp_path) / "kernel.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"argv": ["/gone/.venv/bin/python", "-m", "ipykernel_launcher",
                                         "-f", "{connection_file}"], "display_name": "old",
                                "language": "python"}))
    kernel.ensure_kernel(tmp_path)
    assert json.loads(path.read_text())["argv"][0] == "python"


def test_the_spec_starts_the_interpreter_that_runs_the_notebook(tmp_path):
    folder = kernel.ensure_kernel(tmp_path)
    manager = KernelManager(kernel_name=kernel.KERNEL_NAME,
                            kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(folder.parent)]))
    cmd = manager.format_kernel_cmd()
    assert cmd[0] == sys.executable


def test_the_environment_running_the_tests_has_the_kernel():
    assert kernel.KERNEL_NAME in KernelSpecManager().find_kernel_specs()
