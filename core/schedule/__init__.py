"""Schedule specs: cron, RRULE, interval and once (CONTRACT §4)."""
