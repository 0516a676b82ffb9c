"""mybot: shows the longest set it can; otherwise it plays the first legal move."""

from protocol.sdk import run_bot


def choose(observation, legal_actions):
    shows = [action for action in legal_actions if action["kind"] == "show"]
    if shows:
        return max(shows, key=lambda action: action["length"])
    return legal_actions[0]


if __name__ == "__main__":
    raise SystemExit(run_bot(choose, name="mybot", version="0.2"))
