"""The project's kernel starts over IPC in a short private folder, runs code, survives a restart,
and leaves nothing behind; without IPC it is jupyter_client's local provisioner unchanged."""

from __future__ import annotations

import json
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from jupyter_client.provisioning import KernelProvisionerFactory

from ragspine_eval.workbench.rendering import kernel, kernel_ipc

TCP_WARNING = "Kernel is running over TCP without encryption"


def manager(tmp_path: Path, connection_file: Path) -> KernelManager:
    folder = kernel.ensure_kernel(tmp_path / "prefix")
    specs = KernelSpecManager(kernel_dirs=[str(folder.parent)])
    return KernelManager(kernel_name=kernel.KERNEL_NAME, kernel_spec_manager=specs,
                         connection_file=str(connection_file))


def run(km: KernelManager, code: str) -> str:
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        printed: list[str] = []
        kc.execute_interactive(code, timeout=60, output_hook=lambda msg: printed.append(
            msg["content"].get("text", "")))
        return "".join(printed)
    finally:
        kc.stop_channels()


def test_the_kernelspec_names_the_registered_ipc_provisioner(tmp_path):
    spec = json.loads((kernel.ensure_kernel(tmp_path) / "kernel.json").read_text())
    name = spec["metadata"]["kernel_provisioner"]["provisioner_name"]
    assert name == kernel.PROVISIONER_NAME
    factory = KernelProvisionerFactory.instance()
    assert factory._check_availability(name)
    assert factory.provisioners[name].load() is kernel_ipc.IpcProvisioner


@pytest.fixture
def long_runtime_dir(tmp_path):
    """A connection file as deep as JupyterLab's runtime folder under a pytest tmp_path can be:
    its own name would make ipykernel's default socket paths longer than a Unix socket allows."""
    folder = tmp_path / ("runtime-" + "x" * 90)
    folder.mkdir()
    return folder / "kernel-0123456789abcdef0123456789abcdef.json"


def test_the_kernel_runs_over_ipc_in_a_short_private_folder(tmp_path, long_runtime_dir):
    km = manager(tmp_path, long_runtime_dir)
    km.start_kernel(stderr=subprocess.PIPE)
    try:
        info = json.loads(long_runtime_dir.read_text())
        assert info["transport"] == "ipc" and km.transport == "ipc"
        folder = Path(info["ip"]).parent
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        ports = [info[f"{c}_port"] for c in ("shell", "iopub", "stdin", "control", "hb")]
        assert all(len(f"{info['ip']}-{port}") < kernel_ipc.SOCKET_PATH_MAX for port in ports)
        assert run(km, "print(6 * 7)") == "42\n"
        assert {p.name for p in folder.iterdir()} == {f"k-{port}" for port in ports}

        km.restart_kernel(now=True)
        assert Path(km.ip).parent == folder and run(km, "print('again')") == "again\n"
    finally:
        km.shutdown_kernel(now=True)
    assert not folder.exists()


def test_the_kernel_prints_no_transport_warning(tmp_path):
    km = manager(tmp_path, tmp_path / "kernel.json")
    with open(tmp_path / "stderr.txt", "w", encoding="utf-8") as stderr:
        km.start_kernel(stderr=stderr)
        try:
            assert run(km, "print('up')") == "up\n"
        finally:
            km.shutdown_kernel(now=True)
    err = (tmp_path / "stderr.txt").read_text(encoding="utf-8")
    assert TCP_WARNING not in err, err


def test_without_ipc_the_kernel_starts_as_jupyter_client_would(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel_ipc.zmq, "has", lambda capability: capability != "ipc")
    km = manager(tmp_path, tmp_path / "kernel.json")
    km.start_kernel(stderr=subprocess.PIPE)
    try:
        assert json.loads((tmp_path / "kernel.json").read_text())["transport"] == "tcp"
        assert run(km, "print('tcp')") == "tcp\n"
    finally:
        km.shutdown_kernel(now=True)


def test_a_long_temporary_directory_puts_the_sockets_under_tmp(monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", "/var/folders/" + "y" * 80 + "/T")
    assert kernel_ipc.socket_parent() == "/tmp"
    monkeypatch.setattr(tempfile, "tempdir", "/tmp/short")
    assert kernel_ipc.socket_parent() == "/tmp/short"
