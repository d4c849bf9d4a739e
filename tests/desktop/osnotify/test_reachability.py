"""Qt's network information, where no NetworkManager says it (macOS, Windows): reaching the
internet is online, a local network alone is not, and what Qt cannot tell changes nothing."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QNetworkInformation

from coven_core.host import HostWatch, Network
from coven_desktop.osnotify.reachability import watch_reachability

Reachability = QNetworkInformation.Reachability


class FakeInformation(QObject):
    reachabilityChanged = Signal(object)

    def __init__(self, now: QNetworkInformation.Reachability) -> None:
        super().__init__()
        self.now = now

    def reachability(self) -> QNetworkInformation.Reachability:
        return self.now

    def backendName(self) -> str:
        return "fake"

    def becomes(self, reachability: QNetworkInformation.Reachability) -> None:
        self.now = reachability
        self.reachabilityChanged.emit(reachability)


def test_reachability_is_followed_into_the_host_state_and_wakes_the_scheduler() -> None:
    woken: list[str] = []
    host = HostWatch(on_change=lambda: woken.append("conditions"))
    fake = FakeInformation(Reachability.Online)
    assert watch_reachability(host, lambda: fake) is fake
    assert (host.state().network, host.state().network_source) == (Network.ONLINE, "qt:fake")
    fake.becomes(Reachability.Local)  # the router, but not the internet
    assert host.state().network is Network.OFFLINE and woken == ["conditions", "conditions"]
    fake.becomes(Reachability.Unknown)  # Qt cannot tell: the last known state stands
    assert host.state().network is Network.OFFLINE and len(woken) == 2


def test_without_a_backend_nothing_is_watched() -> None:
    host = HostWatch()
    assert watch_reachability(host, lambda: None) is None
    assert host.state().network_source == "none"
