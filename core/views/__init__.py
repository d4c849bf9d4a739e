"""Read models: what the query API returns to the CLI, the tray and the windows."""
