"""The scheduling engine: the loop and its passes, planning, claims, settlement, recovery, the
lease, delivery."""
