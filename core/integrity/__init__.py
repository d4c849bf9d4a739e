"""Keeping the store honest: doctor, the audit log, retention, privacy."""
