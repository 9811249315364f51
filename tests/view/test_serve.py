"""`memgauge view` starting its server: a port another process holds is exit 3 with what to do,
and no address line announces a server that never served (uvicorn logged the OSError and
exited after the command had printed "memgauge view: http://... Ctrl-C stops")."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.error import HTTPError
from urllib.request import urlopen

import pytest
from tests.helpers import run_memgauge
from viewer_store import ViewerStore


def test_a_port_in_use_is_exit_3_saying_what_to_do(viewer_store: ViewerStore) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        r = run_memgauge("view", "--store", str(viewer_store.path), "--port", str(port))
    assert r.returncode == 3, r.stderr
    assert f"port {port} on 127.0.0.1 is in use" in r.stderr
    assert "pass another --port" in r.stderr
    assert "memgauge view: http" not in r.stdout
    assert "Traceback" not in r.stderr


def test_a_host_not_of_this_machine_is_exit_3_saying_what_to_do(
    viewer_store: ViewerStore,
) -> None:
    r = run_memgauge("view", "--store", str(viewer_store.path), "--host", "192.0.2.1")
    assert r.returncode == 3, r.stderr
    assert "cannot listen on 192.0.2.1 port 8765" in r.stderr
    assert "--host" in r.stderr
    assert "memgauge view: http" not in r.stdout


def test_access_log_writes_a_line_per_request(viewer_store: ViewerStore) -> None:
    """A shared server logged nothing of its requests: no way to tell who asked for what, or
    which pages failed. A real process: the log is uvicorn's, configured when it starts.
    Started on `--port 0`, its address line names the port the system chose (it said
    `http://127.0.0.1:0/`, no address to open)."""
    argv = ["view", "--store", str(viewer_store.path), "--port", "0", "--access-log"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memgauge", *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        said = proc.stdout.readline()
        found = re.match(r"memgauge view: http://127\.0\.0\.1:(\d+)/ ", said)
        assert found is not None, said
        port = int(found.group(1))
        assert port != 0, said
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                with urlopen(base + "/static/style.css", timeout=1):
                    break
            except OSError:
                assert proc.poll() is None, "memgauge view ended"
                assert time.monotonic() < deadline, "memgauge view did not answer in 30 s"
                time.sleep(0.1)
        with pytest.raises(HTTPError):
            urlopen(base + "/runs/no-such-run", timeout=5)
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    assert '"GET /static/style.css HTTP/1.1" 200' in out
    assert '"GET /runs/no-such-run HTTP/1.1" 404' in out
    assert "Uvicorn running" not in out
