"""Helpers to find and execute the chapter notebooks (used by tests and benchmarks)."""

from __future__ import annotations

import time
from itertools import pairwise
from pathlib import Path
from queue import Empty

import nbformat
import yaml
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from traitlets import Type, default

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"


class SlicedChannel(AsyncZMQSocketChannel):
    """A kernel channel whose ``get_msg`` looks again at least once a second.

    pyzmq's asyncio ``poll`` wakes on an edge-triggered file descriptor and can miss the wake-up:
    here a cell's reply sat unread until nbclient's 300-s cell timeout ended its single
    ``poll(300000)``. Polling in slices of ``SLICE`` seconds, each slice starting with a
    non-blocking look, bounds such a miss to one slice."""

    SLICE = 1.0

    async def get_msg(self, timeout: float | None = None) -> dict:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if await self.socket.poll(0):
                return await self._recv()
            left = self.SLICE if deadline is None else min(self.SLICE, deadline - time.monotonic())
            if left <= 0:
                raise Empty
            if await self.socket.poll(int(left * 1000)):
                return await self._recv()


class SlicedClient(AsyncKernelClient):
    """nbclient's kernel client with :class:`SlicedChannel` for the shell and IOPub replies."""

    shell_channel_class = Type(SlicedChannel)
    iopub_channel_class = Type(SlicedChannel)


class SlicedKernelManager(AsyncKernelManager):
    """An ``AsyncKernelManager`` whose clients are :class:`SlicedClient`."""

    @default("client_factory")
    def _sliced_client(self) -> type:
        return SlicedClient


def toc_files() -> list[str]:
    """Every file named in _toc.yml, in reading order, without suffix (e.g. chapters/01_x)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for chapter in part["chapters"]:
            files.append(chapter["file"])
            files.extend(s["file"] for s in chapter.get("sections", []))
    return files


def notebooks() -> list[Path]:
    """The chapter notebooks in reading order."""
    paths = [ROOT / f"{f}.ipynb" for f in toc_files()]
    return [p for p in paths if p.exists()]


def execute(path: Path, timeout: int = 120, timeline: list | None = None
            ) -> tuple[nbformat.NotebookNode, float]:
    """Execute a notebook in a fresh kernel; return it with the wall time in seconds.

    With ``timeline`` (a list), append ``(seconds since the start, event, cell index)`` for the
    kernel's start, each cell's request, reply and completion, and the kernel's shutdown: where a
    run waited outside its cells."""
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()

    def mark(event):
        def hook(cell=None, cell_index=None, **_):
            if timeline is not None:
                timeline.append((time.perf_counter() - start, event, cell_index))
        return hook

    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        kernel_manager_class=SlicedKernelManager,
        resources={"metadata": {"path": str(path.parent)}},
        on_notebook_start=mark("kernel ready"), on_cell_start=mark("cell start"),
        on_cell_complete=mark("request sent"), on_cell_executed=mark("cell done"),
        on_notebook_complete=mark("kernel shut down"),
    )
    client.execute()
    return nb, time.perf_counter() - start


def longest_wait(timeline: list) -> tuple[float, str]:
    """The longest interval between two consecutive events of :func:`execute`'s timeline."""
    def name(event):
        return event[1] if event[2] is None else f"{event[1]} {event[2]}"

    gaps = [(b[0] - a[0], f"{name(a)} -> {name(b)}")
            for a, b in pairwise([(0.0, "start", None), *timeline])]
    return max(gaps) if gaps else (0.0, "")
