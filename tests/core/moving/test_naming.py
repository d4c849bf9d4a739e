"""An imported job's routine name comes from what its command does (DESIGN §15)."""

from __future__ import annotations

import pytest

from coven_core.moving.naming import slug_of_command, unique


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("/usr/bin/rsync -a ~/docs /mnt", "rsync-docs"),
        # a redirection's file is where the output goes, not what the job is
        ("/usr/local/bin/backup.sh --full >> /var/log/backup.log 2>&1", "backup-sh"),
        ("curl -fsS https://example.com/ping > /dev/null", "curl-ping"),
        ("sort < /srv/in.txt", "sort"),
        ("cd ~/notes && git pull -q", "cd-notes"),
        ("", "routine"),
    ],
)
def test_a_name_is_the_program_and_its_first_meaningful_argument(command: str, name: str) -> None:
    assert slug_of_command(command) == name


def test_a_name_taken_earlier_gets_a_number() -> None:
    assert unique("backup-sh", ["backup-sh", "backup-sh-2"]) == "backup-sh-3"
