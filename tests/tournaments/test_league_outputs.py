"""A league's log and replay folders and its bots: every folder made before the first bot starts, the whole log
and replay folders hidden from every sandbox, and a league refused whose outputs hold a folder shown to a bot."""

from __future__ import annotations

from pathlib import Path

import pytest

from tournaments.league.league_file import LeagueFileError, load_league
from tournaments.league.runner import plan_league
from tournaments.league.store import LeagueStore

BOT = "from protocol.sdk import run_bot\nrun_bot(lambda observation, legal: legal[0], name='first')\n"


def _league(tmp_path: Path, log_dir: str, replay_dir: str = "replays") -> Path:
    (tmp_path / "bots").mkdir(exist_ok=True)
    (tmp_path / "bots" / "first.py").write_text(BOT)
    lines = ['game = "scout"', "players = 2", "seed = 1", f'log_dir = "{log_dir}"', f'replay_dir = "{replay_dir}"']
    for name in ("a", "b", "c"):
        lines += ["[[bots]]", f'name = "{name}"', 'command = "bots/first.py"']
    path = tmp_path / "league.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_every_log_folder_is_made_before_any_bot_starts_and_the_roots_are_hidden(tmp_path: Path) -> None:
    league = load_league(_league(tmp_path, "out/logs", "out/replays"))
    with LeagueStore(tmp_path / "league.sqlite") as store:
        plan = plan_league(league, store)
    assert len(plan.specs) == 3
    for spec in plan.specs:
        assert spec.log_dir is not None and Path(spec.log_dir).is_dir()
        assert {str(tmp_path / "out" / "logs"), str(tmp_path / "out" / "replays")} <= set(spec.private_paths)
    assert (tmp_path / "out" / "replays").is_dir()


@pytest.mark.parametrize(("key", "log_dir", "replay_dir"), [("log_dir", ".", "replays"), ("replay_dir", "logs", "")])
def test_a_league_whose_outputs_hold_a_bots_folder_is_refused(
    tmp_path: Path, key: str, log_dir: str, replay_dir: str
) -> None:
    league = load_league(_league(tmp_path, log_dir, replay_dir or "."))
    with LeagueStore(tmp_path / "league.sqlite") as store:
        with pytest.raises(LeagueFileError, match="which the sandbox shows bot 'a'") as caught:
            plan_league(league, store)
        assert caught.value.key == key
        assert plan_league(league, store, sandbox=False).specs, "unsandboxed bots see everything anyway"
