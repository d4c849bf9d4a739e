"""The machine's state a routine's conditions read (DESIGN §14), injected like the clock.

The engine never asks the OS itself: a host (the tray app, from UPower and NetworkManager on
the system bus) keeps a :class:`HostWatch` current and wakes the scheduler when it changes;
``coven daemon`` and any host without notifications read :func:`portable_state` at each
pass. Tests set a :class:`HostWatch` by hand.

A state nobody can tell is ``unknown``, and an unknown state meets the condition: a person
who asked for "on AC power" on a desktop without a battery, or on a system whose network
cannot be read, expects the routine to run, not to wait forever. The decision still records
``unknown``, so ``explain`` says the condition could not be checked.
"""

from __future__ import annotations

import enum
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from coven_core.keepawake import PowerRequests


class Power(enum.StrEnum):
    AC = "ac"
    BATTERY = "battery"
    UNKNOWN = "unknown"


class Network(enum.StrEnum):
    ONLINE = "online"
    OFFLINE = "offline"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class HostState:
    """What the conditions are decided on, and who said so (``upower``, ``sysfs``, …)."""

    power: Power = Power.UNKNOWN
    network: Network = Network.UNKNOWN
    power_source: str = "none"
    network_source: str = "none"

    def on_ac_power(self) -> bool:
        return self.power is not Power.BATTERY

    def online(self) -> bool:
        return self.network is not Network.OFFLINE


#: Who logind says holds the sleep inhibitors a host takes (``systemd-inhibit --list``).
WHO = "Coven"


class Host(Protocol):
    """Where the scheduler reads the machine's state, once per pass, and takes sleep
    inhibitors (see ``scheduling.awake``)."""

    def state(self) -> HostState: ...

    def inhibit(self, mode: str, why: str) -> int | None:
        """A handle holding a ``block`` or ``delay`` sleep inhibitor; None: none here."""
        ...

    def release(self, handle: int) -> None:
        """Let go of an inhibitor :meth:`inhibit` gave."""
        ...


class HostWatch:
    """A state a host keeps current from its notifications (any thread may set it); each
    change calls ``on_change`` (the host wakes the scheduler with it). What no notification
    reports (its source is ``none``) is read from ``fallback`` when asked."""

    def __init__(
        self,
        state: HostState | None = None,
        on_change: Callable[[], None] | None = None,
        inhibit: Callable[[str, str], int | None] | None = None,
        fallback: Host | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._state = state or HostState()
        self.on_change = on_change
        self.inhibitor = inhibit  # logind's descriptors, set by the host once its bus is known
        self._fallback = fallback

    def inhibit(self, mode: str, why: str) -> int | None:
        if self.inhibitor is not None:
            return self.inhibitor(mode, why)
        return None if self._fallback is None else self._fallback.inhibit(mode, why)

    def release(self, handle: int) -> None:
        if self.inhibitor is None and self._fallback is not None:
            self._fallback.release(handle)
        else:
            os.close(handle)

    def state(self) -> HostState:
        with self._lock:
            watched = self._state
        if self._fallback is None or "none" not in (watched.power_source, watched.network_source):
            return watched
        read = self._fallback.state()
        if watched.power_source == "none":
            watched = replace(watched, power=read.power, power_source=read.power_source)
        if watched.network_source == "none":
            watched = replace(watched, network=read.network, network_source=read.network_source)
        return watched

    def set(self, **changes: object) -> None:
        """Change some fields (``power=Power.AC, power_source="upower"``); a change that
        changes nothing wakes nobody."""
        with self._lock:
            before = self._state
            self._state = replace(before, **changes)  # type: ignore[arg-type]
            changed = self._state != before
        if changed and self.on_change is not None:
            self.on_change()


class PortableHost:
    """The reading without notifications: ``/sys/class/power_supply`` for power (any mains
    adapter online → AC; one offline with a battery present → battery), and the kernel's
    routing table for the network (a default route → online, none → offline). What cannot
    be read (another OS, a container without /sys) is unknown."""

    def __init__(self, root: Path = Path("/"), requests: PowerRequests | None = None) -> None:
        self._root = root
        self._requests = requests  # the system's sleep inhibitors, looked for when first wanted
        self._looked_for_requests = requests is not None

    def state(self) -> HostState:
        power = read_power(self._root / "sys/class/power_supply")
        network = read_route(self._root / "proc/net/route")
        return HostState(
            power, network,
            "sysfs" if power is not Power.UNKNOWN else "none",
            "routes" if network is not Network.UNKNOWN else "none",
        )  # fmt: skip

    def inhibit(self, mode: str, why: str) -> int | None:
        """The system's own inhibitors on macOS and Windows (``keepawake``); none on
        Linux without a bus (``system.logind.LogindHost`` is this with logind's)."""
        requests = self._power_requests()
        return None if requests is None else requests.inhibit(mode, why)

    def release(self, handle: int) -> None:
        requests = self._power_requests()
        if requests is None:
            os.close(handle)
        else:
            requests.release(handle)

    def _power_requests(self) -> PowerRequests | None:
        if not self._looked_for_requests:  # once, when first wanted: ctypes is not free
            from coven_core.keepawake import for_this_platform

            self._requests, self._looked_for_requests = for_this_platform(), True
        return self._requests


def read_power(supplies: Path) -> Power:
    try:
        entries = sorted(supplies.iterdir())
    except OSError:
        return Power.UNKNOWN
    kinds = {entry: _read(entry / "type") for entry in entries}
    mains = [entry for entry, kind in kinds.items() if kind == "Mains"]
    if any(_read(entry / "online") == "1" for entry in mains):
        return Power.AC
    batteries = [entry for entry, kind in kinds.items() if kind == "Battery"]
    if mains and any(_read(entry / "present") != "0" for entry in batteries):
        return Power.BATTERY
    return Power.UNKNOWN  # no adapter reported (a desktop, a VM): nobody can tell


def read_route(route: Path) -> Network:
    """``/proc/net/route``: a row with destination 00000000 is a default route."""
    try:
        rows = route.read_text().splitlines()[1:]
    except OSError:
        return Network.UNKNOWN
    defaults = [row for row in rows if row.split()[1:2] == ["00000000"]]
    return Network.ONLINE if defaults else Network.OFFLINE


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def portable_state() -> HostState:
    return PortableHost().state() if os.name == "posix" else HostState()
