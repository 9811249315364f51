"""`memgauge view` starting its server: a port another process holds is exit 3 with what to do,
and no address line announces a server that never served (uvicorn logged the OSError and
exited after the command had printed "memgauge view: http://... Ctrl-C stops")."""

from __future__ import annotations

import socket

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
