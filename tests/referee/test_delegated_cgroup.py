"""A cgroup v2 subtree delegated to the referee (systemd's Delegate=yes, as `systemd-run --user --scope -p
Delegate=yes referee ...` gives a user without root): the referee's own cgroup becomes the parent of its
bots' cgroups. The kernel's part cannot be had on every machine, so this checks the steps on a folder laid
out as a cgroup (the files the kernel would have)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from referee.isolation import cgroups


def _fake_cgroup(folder: Path, controllers: str) -> Path:
    folder.mkdir()
    (folder / "cgroup.controllers").write_text(controllers + "\n")
    (folder / "cgroup.procs").write_text(f"{os.getpid()}\n4242\n")
    (folder / "cgroup.subtree_control").write_text("")
    return folder


def test_a_delegated_cgroup_moves_its_processes_to_a_leaf_and_hands_down_memory_and_pids(tmp_path: Path) -> None:
    """cpu is handed down too where offered (each bot's CPU weight and quota, referee/isolation/cgroups.py)."""
    folder = _fake_cgroup(tmp_path / "run-u7.scope", "cpuset cpu io memory pids")
    found = cgroups.delegated_subtree(folder)
    assert found == cgroups.Hierarchy(folder, frozenset({"memory", "pids", "cpuset", "cpu"}))
    assert (folder / cgroups.REFEREE_LEAF / "cgroup.procs").read_text() == "4242", "each pid written in turn"
    assert (folder / "cgroup.subtree_control").read_text() == "+cpu +cpuset +memory +pids"


def test_a_cgroup_without_memory_or_pids_to_hand_down_is_not_used(tmp_path: Path) -> None:
    folder = _fake_cgroup(tmp_path / "run-u8.scope", "cpu io")
    assert cgroups.delegated_subtree(folder) is None
    assert not (folder / cgroups.REFEREE_LEAF).exists()


def test_only_a_cgroup_marked_delegated_is_split(tmp_path: Path) -> None:
    folder = _fake_cgroup(tmp_path / "run-u9.scope", "memory pids")
    assert not cgroups._delegated_to_us(folder)
    try:
        os.setxattr(folder, "user.delegate", b"1")
    except OSError as error:
        pytest.skip(f"this file system keeps no user xattrs ({error.strerror})")
    assert cgroups._delegated_to_us(folder)
