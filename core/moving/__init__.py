"""Moving in and out: importing crontab, systemd and launchd jobs; exporting to systemd and
Kubernetes — each saying what does not carry over and where DST behaviour differs (§15)."""
