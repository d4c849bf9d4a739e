"""Schedule specs: cron, RRULE, interval and once (DESIGN §4)."""
