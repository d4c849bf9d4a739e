"""Whether the machine is online, from Qt's network information (DESIGN §14): the platform's
own reachability (Network List Manager on Windows, the system configuration framework on
macOS), where no NetworkManager on a system bus says it. A state Qt cannot tell (unknown
reachability, or no backend) leaves the portable reading in charge.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtNetwork import QNetworkInformation

from coven_core.host import HostWatch, Network

Reachability = QNetworkInformation.Reachability

#: Only reaching the internet counts as online: a local network alone does not sync a backup.
_NETWORK = {
    Reachability.Online: Network.ONLINE,
    Reachability.Site: Network.OFFLINE,
    Reachability.Local: Network.OFFLINE,
    Reachability.Disconnected: Network.OFFLINE,
}


class Information(Protocol):
    """What is used of a QNetworkInformation (a test gives a fake)."""

    @property
    def reachabilityChanged(self) -> object: ...

    def reachability(self) -> QNetworkInformation.Reachability: ...

    def backendName(self) -> str: ...


def default_information() -> Information | None:
    """The platform's network information, or None where Qt has no backend for it."""
    if not QNetworkInformation.loadDefaultBackend():
        return None
    return QNetworkInformation.instance()


def watch_reachability(
    host: HostWatch, information: Callable[[], Information | None] = default_information
) -> Information | None:
    """Follow the network's reachability into ``host``; the source, or None without one."""
    found = information()
    if found is None:
        return None
    source = f"qt:{found.backendName()}"

    def deliver(reachability: QNetworkInformation.Reachability) -> None:
        network = _NETWORK.get(reachability)
        if network is not None:
            host.set(network=network, network_source=source)

    found.reachabilityChanged.connect(deliver)  # type: ignore[attr-defined]
    deliver(found.reachability())
    return found
