"""A private "system" bus for the tests (a dbus-daemon on a socket in tmp_path, its address in
``DBUS_SYSTEM_BUS_ADDRESS``) and a fake logind on it, shared by the app's tests (QtDBus) and
the daemon's (jeepney). Registered for every test in tests/conftest.py."""
