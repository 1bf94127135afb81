"""`--executor ray` refuses what cannot work on a cluster, at once and saying why.

`--approve ask` is refused for remote agents; `--ray-address` and `[host] executor` choose the cluster;
Ray is an optional extra, and without it the message names the extra.
"""

from __future__ import annotations

import http.server
import socket
import sys
import threading
from pathlib import Path

import pytest

from agent_host.cli import main
from agent_host.cluster.connection import import_ray
from agent_host.config import load_config
from agent_host.errors import ConfigError, UsageError


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["run", "tests/guests/probe", "--input", "{}", *args])
    return code, capsys.readouterr().err


def test_ask_is_refused_for_agents_on_ray(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(["--executor", "ray", "--approve", "ask"], capsys)
    assert code == 2
    assert "--approve ask: agents on Ray run where nobody can answer a prompt" in err
    assert "--approve deny (the default) or --approve all" in err


def test_dev_mode_and_a_ray_address_without_ray_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(["--executor", "ray", "--dev"], capsys)
    assert code == 2 and "--dev runs guests from their source on this machine" in err
    code, err = run(["--ray-address", "auto"], capsys)
    assert code == 2 and '--ray-address goes with --executor ray (or [host] executor = "ray")' in err


def test_an_address_where_no_ray_answers_is_refused_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    code, err = run(["--executor", "ray", "--ray-address", f"127.0.0.1:{port}"], capsys)
    assert code == 2
    assert f"--ray-address 127.0.0.1:{port}: no Ray cluster answers there" in err and "ray start --head" in err
    code, err = run(["--executor", "ray", "--ray-address", "nonsense"], capsys)
    assert code == 2 and "--ray-address: expected `auto` or HOST:PORT" in err


def test_without_the_extra_the_message_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(UsageError) as raised:
        import_ray()
    assert "--executor ray needs Ray, which is not installed" in str(raised.value)
    assert "pip install 'agent-host[ray]'" in str(raised.value)


def test_the_host_table_chooses_the_executor(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text('[host]\nexecutor = "ray"\nray_address = "auto"\nray_cpus = 0.5\nmax_restarts = 2\n')
    host = load_config(config).host
    assert (host.executor, host.ray_address, host.ray_cpus, host.max_restarts) == ("ray", "auto", 0.5, 2)
    config.write_text('[host]\nexecutor = "kubernetes"\n')
    with pytest.raises(ConfigError) as raised:
        load_config(config)
    assert 'host.executor: expected "local" or "ray", got \'kubernetes\'' in str(raised.value)


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("http://head:8265", "expected `auto` or HOST:PORT, not a URL: 'http://head:8265'"),
        ("ray://head:10001", "Ray Client addresses (ray://) are not supported"),
        ("head:99999", "expected `auto` or HOST:PORT (a port from 1 to 65535), got 'head:99999'"),
        ("", "expected `auto` or HOST:PORT"),
    ],
)
def test_a_ray_address_that_cannot_be_joined_is_refused_where_it_was_written(
    address: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(f'[host]\nexecutor = "ray"\nray_address = "{address}"\n')
    with pytest.raises(ConfigError) as raised:
        load_config(config)
    assert f"{config}: host.ray_address: {expected}" in str(raised.value)
    code, err = run(["--executor", "ray", "--ray-address", address], capsys)
    assert code == 2 and f"--ray-address: {expected}" in err
    if address:  # Ray's own variable, when neither the option nor the file names a cluster
        monkeypatch.setenv("RAY_ADDRESS", address)
        code, err = run(["--executor", "ray"], capsys)
        assert code == 2 and f"RAY_ADDRESS: {expected}" in err


def test_a_port_that_answers_but_is_not_ray_is_refused_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        address = f"127.0.0.1:{server.server_address[1]}"
        code, err = run(["--executor", "ray", "--ray-address", address], capsys)
    finally:
        server.shutdown()
        server.server_close()
    assert code == 2
    assert f"--ray-address {address}: something answers there, but not a Ray cluster" in err
