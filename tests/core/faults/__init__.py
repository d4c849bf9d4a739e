"""Fault injection: a failing SQLite VFS, a busy store, a full disk, runtime chaos (issue #6)."""
