"""The data directory: chosen by option, environment or platform; refused when unsafe."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from coven_core.notation.i18n import use_locale
from coven_core.store.errors import StoreLocationError
from coven_core.store.location import (
    check_store_file,
    filesystem_type,
    prepare_data_dir,
    resolve_data_dir,
)

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def mountinfo(tmp_path: Path, *entries: tuple[str, str]) -> Path:
    """A fake /proc/self/mountinfo with a local root and the given (mount point, fstype)."""
    lines = ["22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro"]
    for number, (point, fstype) in enumerate(entries, start=40):
        escaped = point.replace(" ", "\\040")
        lines.append(
            f"{number} 22 0:{number} / {escaped} rw,relatime shared:9 - {fstype} srv:/x rw"
        )
    table = tmp_path / "mountinfo"
    table.write_text("\n".join(lines) + "\n")
    return table


# resolve_data_dir ---------------------------------------------------------------------------


def test_explicit_wins_over_environment(tmp_path: Path) -> None:
    env = {"COVEN_DATA_DIR": str(tmp_path / "env")}
    assert resolve_data_dir(tmp_path / "opt", env) == tmp_path / "opt"


def test_environment_wins_over_platform(tmp_path: Path) -> None:
    assert resolve_data_dir(None, {"COVEN_DATA_DIR": str(tmp_path / "env")}) == tmp_path / "env"


def test_platform_default_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if sys.platform != "linux":
        pytest.skip("the XDG layout is Linux's")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    assert resolve_data_dir(None, {}) == tmp_path / "share" / "coven"


def test_empty_environment_value_counts_as_unset(tmp_path: Path) -> None:
    assert resolve_data_dir(None, {"COVEN_DATA_DIR": ""}) == resolve_data_dir(None, {})


def test_empty_option_is_refused() -> None:
    with pytest.raises(StoreLocationError, match="--data-dir is empty"):
        resolve_data_dir("", {})


def test_reads_os_environ_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COVEN_DATA_DIR", str(tmp_path / "from-env"))
    assert resolve_data_dir(None) == tmp_path / "from-env"


def test_tilde_expanded_and_relative_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_data_dir("~/coven", {}) == tmp_path / "coven"
    monkeypatch.chdir(tmp_path)
    assert resolve_data_dir("rel", {}) == tmp_path / "rel"


def test_symlinks_are_not_resolved(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert resolve_data_dir(tmp_path / "link", {}) == tmp_path / "link"


# prepare_data_dir ---------------------------------------------------------------------------


@posix_only
def test_created_directory_is_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        made = prepare_data_dir(tmp_path / "a" / "b" / "data")
    finally:
        os.umask(old)
    assert made == tmp_path / "a" / "b" / "data"
    assert made.is_dir()
    assert mode_of(made) == 0o700


def test_existing_private_directory_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir(mode=0o700)
    os.chmod(tmp_path / "data", 0o700)
    assert prepare_data_dir(tmp_path / "data") == tmp_path / "data"


def test_symlinked_directory_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(StoreLocationError) as info:
        prepare_data_dir(tmp_path / "link")
    message = str(info.value)
    assert "is a symbolic link" in message
    assert f"Point --data-dir at the real directory: {os.path.realpath(real)}" in message


def test_dangling_symlink_is_refused_and_nothing_created(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "missing")
    with pytest.raises(StoreLocationError, match="symbolic link"):
        prepare_data_dir(tmp_path / "link")
    assert not (tmp_path / "missing").exists()


@posix_only
def test_a_refusal_is_said_in_the_readers_language(tmp_path: Path) -> None:
    """A German desktop said "Coven konnte nicht starten." over an English reason."""
    data = tmp_path / "data"
    data.mkdir()
    os.chmod(data, 0o755)
    use_locale("de_DE")  # the app's choice (conftest chooses none again)
    with pytest.raises(StoreLocationError) as info:
        prepare_data_dir(data)
    assert str(info.value) == (
        f"{data} hat die Berechtigungen 0755; Coven hält seinen Datenspeicher nur für Sie "
        f"zugänglich. Führen Sie aus: chmod 700 {data}"
    )


@posix_only
@pytest.mark.parametrize("mode", [0o755, 0o750, 0o701, 0o710])
def test_loose_directory_is_refused_with_chmod_hint(tmp_path: Path, mode: int) -> None:
    data = tmp_path / "data dir"
    data.mkdir()
    os.chmod(data, mode)
    with pytest.raises(StoreLocationError) as info:
        prepare_data_dir(data)
    assert f"has permissions {mode:04o}" in str(info.value)
    assert f"Run: chmod 700 '{data}'" in str(info.value)
    assert mode_of(data) == mode  # refused, not repaired behind the user's back


@posix_only
def test_directory_of_another_user_is_refused(tmp_path: Path) -> None:
    data = prepare_data_dir(tmp_path / "data")
    with pytest.raises(StoreLocationError, match=r"owned by user id \d+, not by you"):
        prepare_data_dir(data, uid=os.geteuid() + 1)


def test_a_file_in_the_way_is_refused(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("x")
    with pytest.raises(StoreLocationError, match="is not a directory"):
        prepare_data_dir(tmp_path / "data")


@pytest.mark.skipif(os.name == "posix" and os.geteuid() == 0, reason="root may write anywhere")
def test_uncreatable_directory_is_refused(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(StoreLocationError, match="cannot create the data directory"):
        prepare_data_dir(locked / "data")


@pytest.mark.parametrize("fstype", ["nfs4", "fuse.sshfs", "cifs", "9p"])
def test_network_filesystem_is_refused_before_creating(tmp_path: Path, fstype: str) -> None:
    table = mountinfo(tmp_path, (str(tmp_path.resolve() / "remote"), fstype))
    data = tmp_path / "remote" / "coven"
    with pytest.raises(StoreLocationError) as info:
        prepare_data_dir(data, mount_table=table)
    assert f"is on a network filesystem ({fstype})" in str(info.value)
    assert "Use a local directory with --data-dir" in str(info.value)
    assert not data.exists()


def test_local_filesystem_is_accepted(tmp_path: Path) -> None:
    table = mountinfo(tmp_path, (str(tmp_path.resolve() / "local"), "ext4"))
    assert prepare_data_dir(tmp_path / "local" / "coven", mount_table=table).is_dir()


def test_real_mount_table_accepts_tmp(tmp_path: Path) -> None:
    assert prepare_data_dir(tmp_path / "coven").is_dir()


# filesystem_type ----------------------------------------------------------------------------


def test_longest_mount_point_wins(tmp_path: Path) -> None:
    base = str(tmp_path.resolve())
    table = mountinfo(tmp_path, (base, "nfs4"), (base + "/local", "ext4"))
    assert filesystem_type(tmp_path / "local" / "x", table) == "ext4"
    assert filesystem_type(tmp_path / "other", table) == "nfs4"


def test_mount_point_matches_whole_components_only(tmp_path: Path) -> None:
    table = mountinfo(tmp_path, (str(tmp_path.resolve() / "nf"), "nfs"))
    assert filesystem_type(tmp_path / "nfs-not" / "x", table) == "ext4"


def test_later_mount_on_the_same_point_is_on_top(tmp_path: Path) -> None:
    point = str(tmp_path.resolve() / "m")
    table = mountinfo(tmp_path, (point, "nfs4"), (point, "tmpfs"))
    assert filesystem_type(tmp_path / "m" / "x", table) == "tmpfs"


def test_escaped_spaces_in_mount_points(tmp_path: Path) -> None:
    table = mountinfo(tmp_path, (str(tmp_path.resolve() / "my share"), "fuse.sshfs"))
    assert filesystem_type(tmp_path / "my share" / "coven", table) == "fuse.sshfs"


def test_mountinfo_with_several_optional_fields(tmp_path: Path) -> None:
    point = tmp_path.resolve() / "m"
    table = tmp_path / "mountinfo"
    table.write_text(
        "22 1 8:1 / / rw shared:1 - ext4 /dev/sda1 rw\n"
        f"50 22 0:50 / {point} rw shared:7 master:3 propagate_from:2 - nfs4 srv:/e rw\n"
    )
    assert filesystem_type(point / "x", table) == "nfs4"


def test_proc_mounts_format(tmp_path: Path) -> None:
    table = tmp_path / "mounts"
    table.write_text(
        "/dev/sda1 / ext4 rw,relatime 0 0\n"
        f"srv:/export {tmp_path.resolve() / 'n'} nfs4 rw,vers=4.2 0 0\n"
    )
    assert filesystem_type(tmp_path / "n" / "coven", table) == "nfs4"
    assert filesystem_type(tmp_path / "elsewhere", table) == "ext4"


def test_symlink_into_a_network_mount_is_followed_for_the_check(tmp_path: Path) -> None:
    (tmp_path / "remote").mkdir()
    (tmp_path / "via").symlink_to(tmp_path / "remote")
    table = mountinfo(tmp_path, (str(tmp_path.resolve() / "remote"), "nfs4"))
    assert filesystem_type(tmp_path / "via" / "coven", table) == "nfs4"


def test_missing_mount_table_means_unknown(tmp_path: Path) -> None:
    assert filesystem_type(tmp_path, tmp_path / "absent") is None


# check_store_file ---------------------------------------------------------------------------


def private_file(path: Path) -> Path:
    path.write_bytes(b"")
    os.chmod(path, 0o600)
    return path


def test_missing_store_file_passes(tmp_path: Path) -> None:
    check_store_file(tmp_path / "coven.db")


def test_private_store_file_passes(tmp_path: Path) -> None:
    check_store_file(private_file(tmp_path / "coven.db"))


@posix_only
@pytest.mark.parametrize("suffix", ["", "-wal", "-shm"])
def test_loose_store_file_is_refused_with_chmod_hint(tmp_path: Path, suffix: str) -> None:
    store = private_file(tmp_path / "coven.db")
    loose = private_file(tmp_path / f"coven.db{suffix}")
    os.chmod(loose, 0o644)
    with pytest.raises(StoreLocationError) as info:
        check_store_file(store)
    assert f"{loose} has permissions 0644" in str(info.value)
    assert f"Run: chmod 600 {loose}" in str(info.value)


def test_symlinked_store_file_is_refused(tmp_path: Path) -> None:
    real = private_file(tmp_path / "elsewhere.db")
    (tmp_path / "coven.db").symlink_to(real)
    with pytest.raises(StoreLocationError) as info:
        check_store_file(tmp_path / "coven.db")
    assert "is a symbolic link" in str(info.value)
    assert str(tmp_path.resolve()) in str(info.value)


def test_directory_as_store_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "coven.db").mkdir()
    with pytest.raises(StoreLocationError, match="not a regular file"):
        check_store_file(tmp_path / "coven.db")


@posix_only
def test_store_file_of_another_user_is_refused(tmp_path: Path) -> None:
    store = private_file(tmp_path / "coven.db")
    with pytest.raises(StoreLocationError, match="owned by user id"):
        check_store_file(store, uid=os.geteuid() + 1)
