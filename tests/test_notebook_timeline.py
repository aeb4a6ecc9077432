"""The timeline ``_notebooks.execute`` records names where a run waited longest."""

from __future__ import annotations

import asyncio
import time
from queue import Empty

import nbformat
import pytest

from _notebooks import SlicedChannel, SlicedKernelManager, execute, longest_wait


def test_the_longest_gap_between_two_events_is_named_by_both():
    timeline = [(1.5, "kernel ready", None), (1.6, "cell start", 0), (1.7, "request sent", 0),
                (2.0, "cell done", 0), (302.0, "cell start", 1), (302.5, "kernel shut down", None)]
    wait, where = longest_wait(timeline)
    assert abs(wait - 300.0) < 1e-9 and where == "cell done 0 -> cell start 1"
    assert longest_wait([(4.0, "kernel ready", None)]) == (4.0, "start -> kernel ready")
    assert longest_wait([]) == (0.0, "")


def test_a_run_records_the_kernel_each_cell_and_the_shutdown_in_order(tmp_path):
    path = tmp_path / "two_cells.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"),
                                         nbformat.v4.new_code_cell("x + 1")])
    nbformat.write(nb, path)
    timeline: list = []
    ran, seconds = execute(path, timeline=timeline)
    assert ran.cells[1].outputs[0]["data"]["text/plain"] == "2"
    assert [(event, cell) for _, event, cell in timeline] == [
        ("kernel ready", None), ("cell start", 0), ("request sent", 0), ("cell done", 0),
        ("cell start", 1), ("request sent", 1), ("cell done", 1), ("kernel shut down", None)]
    times = [t for t, _, _ in timeline]
    assert times == sorted(times) and times[-1] <= seconds



class _Socket:
    """A socket whose blocking poll never wakes; a message is there from the ``ready_at``-th poll
    (a missed wake-up: the message waits until something looks again)."""

    def __init__(self, ready_at: int | None):
        self.polls: list[int] = []
        self.ready_at = ready_at

    async def poll(self, timeout):
        self.polls.append(timeout)
        if timeout == 0:
            return self.ready_at is not None and len(self.polls) >= self.ready_at
        await asyncio.sleep(timeout / 1000)
        return 0


def _channel(ready_at):
    channel = SlicedChannel.__new__(SlicedChannel)  # no kernel: only get_msg is exercised
    channel.socket, channel.SLICE = _Socket(ready_at), 0.05

    async def recv():
        return {"msg": "reply"}

    channel._recv = recv
    return channel


def test_a_missed_wake_up_costs_one_slice_not_the_timeout():
    channel = _channel(ready_at=3)  # arrives while the first blocking poll sleeps
    start = time.monotonic()
    assert asyncio.run(channel.get_msg(timeout=300)) == {"msg": "reply"}
    assert time.monotonic() - start < 1 and channel.socket.polls == [0, 50, 0]


def test_a_real_timeout_still_ends_in_empty_as_nbclient_expects():
    channel = _channel(ready_at=None)
    start = time.monotonic()
    with pytest.raises(Empty):
        asyncio.run(channel.get_msg(timeout=0.12))
    assert 0.12 <= time.monotonic() - start < 1
    blocking = [t for t in channel.socket.polls if t]
    assert blocking[:2] == [50, 50] and all(t <= 50 for t in blocking)


def test_execute_uses_the_sliced_channels():
    client = SlicedKernelManager().client()
    assert isinstance(client.shell_channel, SlicedChannel)
    assert isinstance(client.iopub_channel, SlicedChannel)
