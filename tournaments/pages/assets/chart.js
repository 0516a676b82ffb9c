// A chart over the whole game (inline SVG): each seat's value step by step (SCOUT: total score, Scauver: chips,
// as the game script's `chart` says, from what every seat was shown alike), round starts as faint lines, the current step as a bar; a click or a tap
// goes to the step under it.
"use strict";
(function () {
  const V = (window.RefereeViewer = window.RefereeViewer || { games: {} });
  V.parts = V.parts || [];
  const WIDTH = 600;
  const HEIGHT = 150;
  const PAD = 4;
  const COLOURS = ["#2563a8", "#b83227", "#2d7a4b", "#8a4fbf", "#b86e00", "#117a8b"];
  let cursor = null;

  function svg(tag, attributes) {
    // The SVG namespace, taken from the page's own icons (a page names no address, not even a namespace's).
    const node = document.createElementNS(document.querySelector("svg.icon").namespaceURI, tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
    return node;
  }

  // Each seat's points where its value changes: [[step, value], ...].
  function series(api, value) {
    const lines = Array.from({ length: api.players }, () => []);
    let before = null;
    for (let step = 0; step <= api.last; step++) {
      const now = value(api.shared(step));
      for (let seat = 0; seat < api.players; seat++) {
        if (!before || before[seat] !== now[seat]) {
          if (before) lines[seat].push([step, before[seat]]);
          lines[seat].push([step, now[seat]]);
        }
      }
      before = now;
    }
    for (let seat = 0; seat < api.players; seat++) lines[seat].push([api.last, before[seat]]);
    return lines;
  }

  V.parts.push({
    setUp(api) {
      const game = V.games[api.meta.game];
      const box = document.getElementById("chart");
      if (!game.chart) return;
      const lines = series(api, game.chart.value);
      const values = lines.flat().map(([, value]) => value);
      const low = Math.min(0, ...values);
      const high = Math.max(1, ...values);
      const x = (step) => PAD + ((WIDTH - 2 * PAD) * step) / Math.max(1, api.last);
      const y = (value) => HEIGHT - PAD - ((HEIGHT - 2 * PAD) * (value - low)) / (high - low);
      const chart = svg("svg", { viewBox: "0 0 " + WIDTH + " " + HEIGHT, preserveAspectRatio: "none", class: "chart", role: "img", "aria-label": game.chart.label + " by step; click to go there" });
      const every = Math.ceil(api.meta.rounds.length / 25);
      for (const [, first] of api.meta.rounds.filter((_, index) => index % every === 0)) chart.append(svg("line", { x1: x(first), x2: x(first), y1: 0, y2: HEIGHT, class: "chart-round" }));
      chart.append(svg("line", { x1: 0, x2: WIDTH, y1: y(0), y2: y(0), class: "chart-zero" }));
      lines.forEach((points, seat) => {
        const path = points.map(([step, value], index) => (index ? "L" : "M") + x(step).toFixed(1) + " " + y(value).toFixed(1)).join("");
        chart.append(svg("path", { d: path, stroke: COLOURS[seat % COLOURS.length], class: "chart-line", "data-seat": seat }));
      });
      cursor = svg("line", { x1: 0, x2: 0, y1: 0, y2: HEIGHT, class: "chart-cursor" });
      chart.append(cursor);
      chart.addEventListener("click", (event) => {
        const box = chart.getBoundingClientRect();
        const share = (event.clientX - box.left) / box.width;
        api.go(Math.round(((share * WIDTH - PAD) / (WIDTH - 2 * PAD)) * api.last));
      });
      const legend = api.h("div", { class: "chart-legend" },
        api.names.map((name, seat) => api.h("span", { style: "--colour:" + COLOURS[seat % COLOURS.length] }, "seat " + seat)));
      const range = api.h("span", { class: "muted" }, " from " + low + " to " + high);
      box.replaceChildren(api.h("div", { class: "zone-label" }, game.chart.label + " by step", range), chart, legend);
      box.dataset.x0 = String(PAD / WIDTH);
    },
    draw(api) {
      if (!cursor) return;
      const x = PAD + ((WIDTH - 2 * PAD) * api.state.step) / Math.max(1, api.last);
      cursor.setAttribute("x1", x);
      cursor.setAttribute("x2", x);
    },
  });
})();
