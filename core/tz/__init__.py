"""Time zones: the tz database in use, binding wall times to instants, the host's zone."""
