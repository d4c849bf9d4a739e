"""Test-wide setup: no test touches the real home or the real system bus, and time zones come
from one database."""

from __future__ import annotations

import os

import pytest

# Pin the tz database: the tzdata package, whatever the host has, so vectors are
# deterministic on every machine (the system database may be older or absent).
os.environ["COVEN_TZDB"] = "bundled"
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# A private system bus and a fake logind, for the app's tests and the daemon's alike.
pytest_plugins = ["tests.systembus.fixtures"]


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Point every standard directory into a temp dir (as qutebrowser's tests do)."""
    home = tmp_path_factory.mktemp("home")
    for name, sub in (
        ("HOME", ""),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_STATE_HOME", ".local/state"),
    ):
        path = home / sub
        path.mkdir(parents=True, exist_ok=True)
        monkeypatch.setenv(name, str(path))
    monkeypatch.delenv("COVEN_DATA_DIR", raising=False)
    # Nor the real system bus: a daemon a test starts would hold the machine's logind
    # inhibitors. A test that wants a bus starts its own (``system_bus_address``).
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", f"unix:path={home / 'no-system-bus'}")


@pytest.fixture(autouse=True)
def _environment_locale():
    """A test that sets the app's locale (``desktop.locale = "de_DE"``) leaves it behind."""
    yield
    from coven_core.notation.i18n import use_locale

    use_locale(None)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="also run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow (make test-slow)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
