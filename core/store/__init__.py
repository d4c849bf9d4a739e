"""The durable store: SQLite through apsw (CONTRACT §9, §11, §13)."""
