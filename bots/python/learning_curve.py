"""Draw learning curves (the CSV files train_dmc.py writes) as one SVG picture, no plotting library needed:
minutes of training across, the share of the heuristic seats the greedy network finished above up the side,
with the even line at 0.5 dashed. Each file is one line, labelled with its name.

    python -m bots.python.learning_curve scout-2.csv scout-4.csv --out curve.svg
"""

from __future__ import annotations

import argparse
import csv
from html import escape
from pathlib import Path

WIDTH, HEIGHT, MARGIN = 640, 360, 48
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")
Y_FIELD = "share_above_heuristic"


def read_curve(path: Path) -> list[tuple[float, float]]:
    with path.open(newline="") as file:
        return [(float(row["minutes"]), float(row[Y_FIELD])) for row in csv.DictReader(file)]


def svg(curves: dict[str, list[tuple[float, float]]]) -> str:
    """The picture of `curves` (label: (minutes, share) points)."""
    longest = max((minutes for points in curves.values() for minutes, _ in points), default=1.0) or 1.0
    inner_w, inner_h = WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN

    def x(minutes: float) -> float:
        return MARGIN + inner_w * minutes / longest

    def y(share: float) -> float:
        return HEIGHT - MARGIN - inner_h * share

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" '
        'font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<line x1="{MARGIN}" y1="{y(0)}" x2="{WIDTH - MARGIN}" y2="{y(0)}" stroke="black"/>',
        f'<line x1="{MARGIN}" y1="{y(0)}" x2="{MARGIN}" y2="{y(1)}" stroke="black"/>',
        f'<line x1="{MARGIN}" y1="{y(0.5)}" x2="{WIDTH - MARGIN}" y2="{y(0.5)}" stroke="grey" stroke-dasharray="4 4"/>',
    ]
    for share in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<text x="{MARGIN - 6}" y="{y(share) + 4}" text-anchor="end">{share:.2f}</text>')
    for step in range(5):
        minutes = longest * step / 4
        label = f"{round(minutes, 1):g}"
        parts.append(f'<text x="{x(minutes)}" y="{HEIGHT - MARGIN + 16}" text-anchor="middle">{label}</text>')
    parts.append(f'<text x="{WIDTH / 2}" y="{HEIGHT - 8}" text-anchor="middle">minutes of training (one core)</text>')
    parts.append(
        f'<text x="14" y="{HEIGHT / 2}" text-anchor="middle" transform="rotate(-90 14 {HEIGHT / 2})">'
        "share of heuristic seats finished above</text>"
    )
    for number, (label, points) in enumerate(curves.items()):
        colour = COLOURS[number % len(COLOURS)]
        line = " ".join(f"{x(minutes):.1f},{y(share):.1f}" for minutes, share in points)
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{line}"/>')
        parts.append(f'<text x="{MARGIN + 10}" y="{MARGIN + 16 * number}" fill="{colour}">{escape(label)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("curves", type=Path, nargs="+", help="CSV files written by train_dmc.py --curve")
    parser.add_argument("--out", type=Path, required=True, help="the SVG file to write")
    options = parser.parse_args(argv)
    options.out.write_text(svg({path.stem: read_curve(path) for path in options.curves}))
    print(f"wrote {options.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
