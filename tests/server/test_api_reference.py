"""The API reference page (docs/reference/ladder-api.md) names every route of the API and every cause of an
upload's refusal with its meaning, so the page cannot fall behind the code."""

from __future__ import annotations

from pathlib import Path

from served import Served

from tournaments.server.uploads import Refusal

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "ladder-api.md"


def test_every_route_is_in_the_reference(served: Served) -> None:
    text = PAGE.read_text()
    for path, methods in served.client.get("/api/openapi.json").json()["paths"].items():
        for method in methods:
            assert f"`{method.upper()} {path}`" in text, f"{method.upper()} {path}"


def test_every_upload_refusal_is_in_the_reference() -> None:
    text = PAGE.read_text()
    for cause in Refusal:
        assert f"| `{cause.value}` | {cause.meaning} |" in text, cause


def test_the_documented_caps_are_the_code_s() -> None:
    from tournaments.server.edge import Settings
    from tournaments.server.uploads import DEFAULT_LIMITS as caps

    text = " ".join(PAGE.read_text().split())
    mib = 2**20
    for phrase in (
        f"an upload of at most {caps.upload_bytes // mib} MiB",
        f"{caps.total_bytes // mib} MiB unpacked",
        f"{caps.file_bytes // mib} MiB per file",
        f"{caps.files} entries",
        f"{caps.depth} folders deep",
        f"at most {caps.name_bytes} bytes",
        f"at most {caps.ratio} times",
        f"past {caps.ratio_floor // mib} MiB",
        f"per address ({Settings().login_rate.count} a minute)",
        f"per token ({Settings().upload_rate.count} a minute",
    ):
        assert phrase in text, phrase
    assert Settings().login_rate.seconds == Settings().upload_rate.seconds == 60
