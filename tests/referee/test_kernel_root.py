"""The slim root a bot's kernel shows at the kernel level (referee.isolation.kernel_root): what its file-set rules
put in it and leave out, what they refuse, and the tmpfs it is copied into (as root). runsc is not needed: the
kernel level's own tests (test_gvisor.py) run bots on it."""

from __future__ import annotations

import errno
import os
import shutil
import sys
import sysconfig
from pathlib import Path

import pytest
from referee_helpers import FIXTURE_BOTS

from referee.isolation import kernel_root
from referee.isolation.kernel_root import KernelRoot, SlimRootRefused

REPOSITORY = Path(__file__).resolve().parents[2]
C_BOT = REPOSITORY / "bots" / "c" / "random_bot"
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="a tmpfs is mounted only as root")


def _python_root() -> KernelRoot:
    return KernelRoot.plan([sys.executable, "-m", "bots.python.random_bot"], (), (), organisers=True)


def test_a_python_bot_gets_its_interpreter_standard_library_and_the_sdk_and_nothing_else() -> None:
    root = _python_root()
    stdlib = sysconfig.get_paths()["stdlib"]
    shown = root.files | set(root.links)
    assert os.path.realpath(sys.executable) in root.files
    assert {os.path.join(stdlib, "os.py"), os.path.join(stdlib, "json", "__init__.py")} <= root.files
    for package in ("zmq", "msgpack", "numpy"):
        assert any(f"/{package}/__init__.py" in path for path in root.files), package
    assert any(path.endswith("/protocol/sdk.py") or "/protocol/sdk/" in path for path in root.files)
    assert any(path.endswith("libc.so.6") for path in shown)
    assert not [path for path in root.files if f"{os.sep}test{os.sep}" in path and path.startswith(stdlib)]
    assert not [path for path in root.files if "/tkinter/" in path or "/node_modules/" in path]
    assert not [path for path in root.files if "/pytest/" in path or "/_pytest/" in path]
    assert not [path for path in root.files if path.endswith((".opt-1.pyc", ".opt-2.pyc"))]
    assert "/usr/bin/bash" not in root.files and "/etc/shadow" not in root.files
    assert root.size() < kernel_root.MAX_ROOT_BYTES


def test_the_sdk_is_the_interpreter_s_installed_one_whatever_the_search_path_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editable install leaves card_referee.egg-info in the source tree, which is on the search path under
    pytest; its file list lacks the installed import hooks, so a root planned from it gave bots no `protocol`."""
    stray = tmp_path / "card_referee.egg-info"
    stray.mkdir()
    (stray / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: card-referee\nVersion: 0.0.0\n")
    (stray / "SOURCES.txt").write_text("pyproject.toml\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    root = KernelRoot.plan([sys.executable, "-m", "bots.python.random_bot"], (), (), organisers=True)
    installed = sysconfig.get_paths()["purelib"]
    assert any(path.startswith(installed) and "card_referee" in path for path in root.files)
    assert not [path for path in root.files if path.startswith(str(tmp_path))]


@pytest.mark.skipif(not C_BOT.exists(), reason="the C bot is not built (make -C bots/c)")
def test_an_elf_program_gets_its_loader_and_libraries_found_without_running_it() -> None:
    root = KernelRoot.plan([str(C_BOT)], [str(C_BOT.parent)], (), organisers=True)
    interpreter, needed = kernel_root.elf_needs(str(C_BOT))
    assert interpreter is not None and needed
    assert {os.path.realpath(interpreter), str(C_BOT)} <= root.files
    for name in needed:
        assert any(os.path.basename(path) == name for path in [*root.files, *root.links]), name
    assert not [path for path in root.files if "/python" in path]


def test_a_program_of_another_kind_is_refused_with_what_to_do(tmp_path: Path) -> None:
    script = tmp_path / "bot.sh"
    script.write_text("#!/bin/sh\nexec true\n")
    script.chmod(0o755)
    with pytest.raises(SlimRootRefused, match="play it at the full level"):
        KernelRoot.plan([str(script)], [str(tmp_path)], (), organisers=False)


def test_a_folder_of_its_own_is_copied_whole_its_symlinks_kept_and_never_followed_out(tmp_path: Path) -> None:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    mine.mkdir()
    theirs.mkdir()
    (theirs / "secret.py").write_text("hand = 42\n")
    (mine / "bot.py").write_text("print('hi')\n")
    (mine / "data").mkdir()
    (mine / "data" / "table.txt").write_text("1 2 3\n")
    (mine / "peek.py").symlink_to(theirs / "secret.py")
    (mine / "logs").mkdir()
    (mine / "logs" / "match.log").write_text("the match's own\n")
    root = KernelRoot.plan([sys.executable, str(mine / "bot.py")], [str(mine)], [str(mine / "logs")], False)
    assert {str(mine / "bot.py"), str(mine / "data" / "table.txt")} <= root.files
    assert root.links[str(mine / "peek.py")] == str(theirs / "secret.py")
    assert not [path for path in root.files if path.startswith(str(theirs))]
    assert str(mine / "logs" / "match.log") not in root.files and str(mine / "logs") in root.hidden


def test_an_organisers_words_show_the_system_files_they_name_and_a_submissions_do_not() -> None:
    named = os.path.realpath(shutil.which("true") or "/bin/true")
    command = [sys.executable, str(FIXTURE_BOTS / "kernel_channels.py"), named]
    assert named in KernelRoot.plan(command, [str(FIXTURE_BOTS)], (), organisers=True).files
    assert named not in KernelRoot.plan(command, [str(FIXTURE_BOTS)], (), organisers=False).files


def test_what_is_not_elf_needs_no_library() -> None:
    assert kernel_root.elf_needs(str(FIXTURE_BOTS / "kernel_channels.py")) == (None, ())
    assert kernel_root.elf_needs("/nonexistent/file") == (None, ())


def test_a_root_beyond_the_bound_is_refused_before_anything_is_mounted(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.mkdir()
    with open(big / "weights.bin", "wb") as file:
        file.truncate(kernel_root.MAX_ROOT_BYTES + (1 << 20))
    root = KernelRoot.plan([sys.executable, "-m", "bots.python.random_bot"], [str(big)], (), organisers=True)
    target = tmp_path / "root"
    target.mkdir()
    with pytest.raises(SlimRootRefused, match="slim the bot's folder, or play it at the full level"):
        kernel_root.mount_root(root, str(target))
    assert not os.path.ismount(target)


@as_root
def test_the_copy_is_a_read_only_tmpfs_of_its_own_sized_to_what_it_holds(tmp_path: Path) -> None:
    target = tmp_path / "root"
    target.mkdir()
    root = KernelRoot.plan([str(shutil.which("true"))], (), (), organisers=True)
    socket = {"destination": "/run/referee/referee.sock", "type": "bind", "source": str(FIXTURE_BOTS / "_raw.py")}
    size = kernel_root.mount_root(root, str(target), [socket])
    try:
        assert os.path.ismount(target)
        true = os.path.realpath(shutil.which("true") or "/bin/true")
        copy = target / true.lstrip("/")
        assert copy.read_bytes() == Path(true).read_bytes()
        assert os.stat(copy).st_dev != os.stat(true).st_dev
        assert (target / "run" / "referee" / "referee.sock").is_file()
        assert (target / "etc" / "passwd").is_file() and not (target / "etc" / "shadow").exists()
        with pytest.raises(OSError) as refused:
            (target / "note").write_text("x")
        assert refused.value.errno == errno.EROFS
        assert os.statvfs(target).f_blocks * os.statvfs(target).f_frsize <= size + (1 << 20)
    finally:
        kernel_root.detach(str(target))
    assert not os.path.ismount(target)
