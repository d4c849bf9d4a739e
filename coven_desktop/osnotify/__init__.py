"""OS notifications about time: sleep and resume, wall-clock steps, time-zone changes.

One public entry, :func:`start_notifiers`, returns a :class:`Notifier` whose ``occurred``
signal carries an :class:`OsEvent`. The app turns each into an engine wake reason
(:func:`wake_reason_for`) and a recorded fact (DESIGN §3, §12).

Sources, one module per platform and kind:

* Linux — ``logind`` (``PrepareForSleep`` on the system bus), ``timedated``
  (``PropertiesChanged`` of ``Timezone``) and ``timerfd`` (cancelled when the clock is set);
* Windows — ``windows`` (``WM_POWERBROADCAST`` and ``WM_TIMECHANGE`` through a native filter);
* macOS — none yet (``macos`` documents why);
* everywhere — ``drift``, a 30-second comparison of the clocks that runs only for the kinds
  of event no source covers, and not at all when every kind is covered.
"""

from coven_desktop.osnotify.event import KINDS, OsEvent, OsEventKind, wake_reason_for
from coven_desktop.osnotify.notifier import Notifier
from coven_desktop.osnotify.start import FALLBACK_INTERVAL_MS, host_zone, start_notifiers

__all__ = [
    "FALLBACK_INTERVAL_MS",
    "KINDS",
    "Notifier",
    "OsEvent",
    "OsEventKind",
    "host_zone",
    "start_notifiers",
    "wake_reason_for",
]
