"""The kernel provisioner that starts the project's kernel over IPC instead of TCP.

jupyter_client starts kernels over TCP on localhost unless the kernel manager is told otherwise,
and ipykernel 7 then warns "Kernel is running over TCP without encryption" on the terminal of
whatever started it (`make run`, papermill, JupyterLab). The transport is the manager's choice,
written into the connection file the kernel reads: a kernelspec argument cannot change it. A
kernelspec can name its provisioner, though, and the project's (kernel.kernelspec) names this
one, registered as an entry point, so every client that starts the kernel through jupyter_client
(papermill's CLI, `ragspine-eval notebooks`, JupyterLab) gets IPC without being configured.

Invariants:
- a kernel it starts listens on Unix sockets in a folder of its own, made with mode 0700 (only
  the user can connect: nothing is sent over the network) in the temporary directory, or in /tmp
  when that directory's path is too long; the socket paths stay under SOCKET_PATH_MAX
  characters, whatever the runtime folder of the connection file (a Unix socket path is limited
  to about 104-108 bytes);
- a restart keeps the folder and the ports; shutting the kernel down removes the folder;
- where zmq has no IPC transport (Windows), it is jupyter_client's LocalProvisioner, unchanged.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import zmq
from jupyter_client.provisioning import LocalProvisioner

SOCKET_PATH_MAX = 100  # below sun_path's 104 (macOS) and 108 (Linux) bytes, with room for "-NN"
SOCKET_STEM = "k"  # each socket is <folder>/k-<port>, the port a small number


def socket_parent() -> str:
    """Where the socket folders go: the temporary directory, or /tmp if its path is too long
    for a socket folder (mkdtemp's name is ~16 characters) and the socket names under it."""
    parent = tempfile.gettempdir()
    return parent if len(parent) + 40 <= SOCKET_PATH_MAX else "/tmp"


class IpcProvisioner(LocalProvisioner):
    """LocalProvisioner with the kernel manager switched to IPC before it writes the connection
    file, its sockets in a short private folder."""

    socket_dir: str | None = None

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        km = self.parent
        if km is not None and zmq.has("ipc"):
            if self.socket_dir is None:  # a restart keeps the folder (and the manager's ports)
                self.socket_dir = tempfile.mkdtemp(prefix="rse-kernel-", dir=socket_parent())
            km.transport = "ipc"
            km.ip = str(Path(self.socket_dir) / SOCKET_STEM)
            km.cache_ports = False  # the port cache binds TCP ports; IPC needs none
        return await super().pre_launch(**kwargs)

    async def cleanup(self, restart: bool = False) -> None:
        await super().cleanup(restart=restart)
        if not restart and self.socket_dir is not None:
            shutil.rmtree(self.socket_dir, ignore_errors=True)
            self.socket_dir = None
