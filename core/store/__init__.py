"""The durable store: SQLite through apsw (DESIGN §9, §11, §13)."""
