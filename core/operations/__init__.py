"""The commands a person gives, each in the operator's transaction: add, edit, pause, run now,
cancel, stop, reconcile, settings."""
