// SCOUT's board: the Active Set and its owner, every seat's hand in order (faces in the full view and in a
// seat's own view, backs for hands that seat cannot see), the scouted card where it went, chips, captured
// cards and the scores of every finished round.
"use strict";
(function () {
  const V = (window.RefereeViewer = window.RefereeViewer || { games: {} });
  const HUES = [0, 4, 28, 48, 92, 150, 186, 212, 248, 282, 326];
  const PHASES = { orient: "orienting hands (a simultaneous decision)", play: "play", over: "game over" };

  // 6 and 9 are underlined, as on playing cards, so that the small upside-down number reads right.
  function mark(number) {
    return number === 6 || number === 9 ? " underlined" : "";
  }

  function card(h, pair, extra) {
    const [top, bottom] = pair;
    return h(
      "div",
      { class: "sc-card" + (extra ? " " + extra : ""), "data-card": top + "/" + bottom, style: "--top:" + HUES[top] + ";--bottom:" + HUES[bottom], title: top + " in use; " + bottom + " when turned" },
      h("span", { class: "sc-top" + mark(top) }, top),
      h("span", { class: "sc-bottom" + mark(bottom) }, bottom)
    );
  }

  function back(h, extra) {
    return h("div", { class: "sc-card back" + (extra ? " " + extra : "") });
  }

  function badge(h, text, kind) {
    return h("span", { class: "badge " + (kind || "") }, text);
  }

  function seatRow(context, table, seat) {
    const h = context.h;
    const own = context.view === null || context.view === seat;
    const move = context.move;
    const scouted = move && move.seat === seat && move.action.kind === "scout" && context.previous(seat) && context.previous(seat).round === table.round ? move.action.insert : -1;
    const toMove = table.to_move.includes(seat);
    const badges = [];
    if (toMove) badges.push(badge(h, table.must_show ? "to move: must show" : "to move", "turn"));
    if (table.round_starter === seat) badges.push(badge(h, "started the round"));
    if (table.active_owner === seat) badges.push(badge(h, "owns the Active Set", "owner"));
    if (table.scout_show_used[seat]) badges.push(badge(h, "Scout & Show used"));
    if (context.view === seat) badges.push(badge(h, "this view", "viewer"));
    badges.push(V.forfeitBadge(context, seat));
    let cards;
    if (own) {
      cards = context.observation(seat).hand.map((pair, index) => card(h, pair, index === scouted ? "scouted" : ""));
    } else {
      cards = Array.from({ length: table.hand_sizes[seat] }, (_, index) => back(h, index === scouted ? "scouted" : ""));
    }
    return h(
      "div",
      { class: "seat-row" + (toMove ? " to-move" : "") + (context.view === seat ? " viewer" : ""), "data-seat": seat },
      h(
        "div",
        { class: "seat-side" },
        h("div", { class: "seat-name" }, h("b", {}, "seat " + seat), " ", context.names[seat]),
        h("div", { class: "seat-stats" }, table.hand_sizes[seat] + " cards · captured " + table.captured[seat] + " · chips " + table.chips[seat] + " · total " + table.scores[seat]),
        h("div", { class: "badges" }, badges)
      ),
      h("div", { class: "hand" + (own ? "" : " hidden-hand"), "data-hand": seat, "data-face": own ? "up" : "down" }, cards.length ? cards : h("span", { class: "muted" }, "no cards"))
    );
  }

  function activeSet(context, table) {
    const h = context.h;
    const move = context.move;
    const justShown = move && move.action.kind === "show" && table.active_owner === move.seat && table.history.length;
    let label;
    if (table.active_owner === null) label = table.phase === "orient" ? "no Active Set: the hands are being oriented" : "no Active Set yet: the first seat shows anything";
    else if (!table.active_set.length) label = "scouted down to nothing; owner seat " + table.active_owner + " · " + context.names[table.active_owner];
    else label = (justShown ? "just shown by " : "owned by ") + "seat " + table.active_owner + " · " + context.names[table.active_owner];
    return h(
      "div",
      { class: "table-zone" },
      h("div", { class: "round-info" }, h("b", {}, "Round " + table.round + " of " + table.rounds), " · " + (PHASES[table.phase] || table.phase) + " · seat " + table.round_starter + " started"),
      h("div", { class: "active-zone" }, h("div", { class: "zone-label" }, "Active Set"), h("div", { class: "hand active-set", "data-active": "" }, table.active_set.map((pair) => card(h, pair, justShown ? "shown" : ""))), h("div", { class: "muted" }, label))
    );
  }

  function scores(context, table) {
    const h = context.h;
    const finished = table.finished_rounds;
    if (!finished.length) return null;
    const previous = context.previous(0);
    const justEnded = previous && previous.finished_rounds.length < finished.length ? finished.length - 1 : -1;
    const head = h("tr", {}, h("th", {}, "seat"), finished.map((entry, index) => h("th", { class: "num" + (index === justEnded ? " just" : "") }, "round " + entry.round)), h("th", { class: "num" }, "total"));
    const rows = context.names.map((name, seat) =>
      h(
        "tr",
        {},
        h("td", {}, "seat " + seat + " · " + name),
        finished.map((entry, index) => h("td", { class: "num" + (index === justEnded ? " just" : ""), title: "captured " + entry.captured[seat] + ", chips " + entry.chips[seat] + ", in hand " + entry.hand_sizes[seat] + (entry.exempt === seat ? " (exempt)" : "") }, (entry.scores[seat] > 0 ? "+" : "") + entry.scores[seat])),
        h("td", { class: "num" }, h("b", {}, table.scores[seat]))
      )
    );
    return h("div", { class: "scores-zone" }, h("div", { class: "zone-label" }, "Scores by round"), h("table", { class: "scores" }, h("thead", {}, head), h("tbody", {}, rows)));
  }

  // The table as a round's last action left it (replay_page.py round_ends): every hand, the Active Set, and the
  // round's scores; hands a seat's view cannot see stay backs.
  function roundEnd(context, end) {
    const h = context.h;
    const finished = end.finished;
    const rows = end.hands.map((hand, seat) => {
      const own = context.view === null || context.view === seat;
      const cards = own ? hand.map((pair) => card(h, pair, "mini")) : hand.map(() => back(h, "mini"));
      const score = finished.scores[seat];
      return h("div", { class: "end-row", "data-seat": seat },
        h("div", { class: "seat-name" }, h("b", {}, "seat " + seat), " " + context.names[seat], finished.exempt === seat ? badge(h, "owns the Active Set: hand not counted", "owner") : null),
        h("div", { class: "hand", "data-end-hand": seat }, cards.length ? cards : h("span", { class: "muted" }, "no cards")),
        h("div", { class: "end-score" }, (score > 0 ? "+" : "") + score + " (captured " + finished.captured[seat] + ", chips " + finished.chips[seat] + ", in hand " + finished.hand_sizes[seat] + ") · total " + end.totals[seat]));
    });
    const owner = end.active_owner === null ? "" : " (owner seat " + end.active_owner + ")";
    return h("div", { class: "round-end", "data-round-end": finished.round },
      h("div", { class: "zone-label" }, "Round " + finished.round + " ended · its final position, before the next deal"),
      h("div", { class: "end-active" }, h("span", { class: "muted" }, "Active Set" + owner + ": "), h("div", { class: "hand" }, end.active_set.map((pair) => card(h, pair, "mini")))),
      rows);
  }

  V.games.scout = {
    roundEnd,
    chart: { label: "total score", value: (observation) => observation.scores },
    describe(action, before) {
      if (action.kind === "orient") return action.flip ? "turn the hand around" : "keep the hand as dealt";
      if (action.kind === "show") return "show " + before.hand.slice(action.start, action.start + action.length).map((pair) => pair[0]).join(" ");
      const taken = action.end === "left" ? before.active_set[0] : before.active_set[before.active_set.length - 1];
      const card = taken ? (action.flip ? taken[1] + "/" + taken[0] : taken[0] + "/" + taken[1]) : "?";
      return "scout " + card + " from the " + action.end + " into position " + action.insert + (action.and_show ? ", then show" : "");
    },
    draw(context) {
      const h = context.h;
      const table = context.observation(context.view === null ? 0 : context.view);
      const rows = context.names.map((_, seat) => seatRow(context, table, seat));
      return h("div", { class: "scout-board" }, activeSet(context, table), h("div", { class: "seats-zone" }, rows), scores(context, table));
    },
  };
})();
