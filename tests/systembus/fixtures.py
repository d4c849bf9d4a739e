"""The fixtures: ``system_bus_address`` (a private dbus-daemon, its address in
``DBUS_SYSTEM_BUS_ADDRESS`` for this process and every process it starts) and
``fake_logind`` (tests/systembus/fake_logind.py on it, and a :class:`FakeLogind` to ask it
what it holds and to make it announce a sleep). No Qt here: the test speaks jeepney."""

from __future__ import annotations

import select
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

#: The Debian package that ships /usr/bin/dbus-daemon (`.ci/run` must install it).
DBUS_DAEMON_PACKAGE = "dbus-daemon"

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="method_return"/>
    <allow send_type="error"/>
    <allow send_type="signal"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
  </policy>
</busconfig>
"""

LOGIND = "org.freedesktop.login1"
LOGIND_PATH = "/org/freedesktop/login1"
MANAGER = "org.freedesktop.login1.Manager"

FAKE_LOGIND = Path(__file__).with_name("fake_logind.py")
#: The Python that runs the fake logind: it needs dbus-python and PyGObject (Debian packages
#: python3-dbus and python3-gi; .ci/run installs them).
SYSTEM_PYTHON = "/usr/bin/python3"


@pytest.fixture
def system_bus_address(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    daemon = shutil.which("dbus-daemon")
    if daemon is None:
        pytest.skip(
            "dbus-daemon is not installed: the D-Bus end-to-end tests need it "
            f"(Debian package {DBUS_DAEMON_PACKAGE!r}; .ci/run must apt-get install it)"
        )
    config = tmp_path / "system-bus.conf"
    config.write_text(BUS_CONFIG.format(socket=tmp_path / "system_bus_socket"))
    process = subprocess.Popen(
        [daemon, f"--config-file={config}", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # it cannot raise its fd limit unprivileged, and says so
        text=True,
    )
    try:
        address = _read_address(process)
        monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", address)
        yield address
    finally:
        process.terminate()
        process.wait(timeout=10)


def _read_address(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], 10)
    address = process.stdout.readline().strip() if ready else ""
    if not address:
        raise RuntimeError("the private dbus-daemon did not print its address within 10 s")
    return address


class FakeLogind:
    """The test's line to the fake logind (its own connection, no Qt)."""

    def __init__(self, address: str) -> None:
        from jeepney.io.blocking import open_dbus_connection

        self.address = address
        self._connection = open_dbus_connection(address)

    def held(self) -> list[str]:
        """``mode:why`` of each inhibitor whose descriptor someone still holds."""
        return list(self._call(MANAGER, "Held")[0])

    def held_modes(self) -> list[str]:
        return sorted(entry.split(":")[0] for entry in self.held())

    def prepare_for_sleep(self, going: bool) -> None:
        """logind's ``PrepareForSleep(going)``, sent by the owner of its name."""
        self._call("io.coven.test.FakeLogind", "Announce", "b", (going,))

    def _call(self, interface: str, method: str, signature: str | None = None,
              body: tuple[object, ...] = ()) -> tuple[object, ...]:  # fmt: skip
        from jeepney import DBusAddress, new_method_call
        from jeepney.wrappers import unwrap_msg

        logind = DBusAddress(LOGIND_PATH, bus_name=LOGIND, interface=interface)
        reply = self._connection.send_and_get_reply(
            new_method_call(logind, method, signature, body), timeout=5
        )
        return tuple(unwrap_msg(reply))

    def close(self) -> None:
        self._connection.close()


@pytest.fixture
def fake_logind(system_bus_address: str) -> Iterator[FakeLogind]:
    if (
        not shutil.which(SYSTEM_PYTHON)
        or subprocess.run([SYSTEM_PYTHON, "-c", "import dbus, gi"], capture_output=True).returncode
    ):
        pytest.skip("the fake logind needs python3-dbus and python3-gi for /usr/bin/python3")
    process = subprocess.Popen([SYSTEM_PYTHON, str(FAKE_LOGIND), system_bus_address],
                               stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        line = FakeLogind(system_bus_address)
        yield line
        line.close()
    finally:
        process.terminate()
        process.wait(timeout=10)
