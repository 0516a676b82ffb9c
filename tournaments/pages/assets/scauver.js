// Scauver's board: pot, amphora, deck and the bet in progress; every seat's chips, hand (faces in the full
// view and in a seat's own view, backs otherwise) and field of two flanks; the round's bets and folds; and the
// last showdown with each seat's vanguards, link and score.
"use strict";
(function () {
  const V = (window.RefereeViewer = window.RefereeViewer || { games: {} });
  const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
  let values = {};
  // Face cards show their value in a corner: the ranks whose value is not their name.
  const named = (id) => id.slice(0, -1) !== String(values[id]);
  const PHASES = {
    setup: "setting up the fields (a simultaneous decision)", bet: "bet, check or fold", answer: "answering a bet", place: "placing a card",
    final: "final placement", final_bet: "final bet", showdown: "showdown: naming vanguards (a simultaneous decision)", over: "game over",
  };

  function value(id) {
    return values[id];
  }

  function card(h, id, extra) {
    const rank = id.slice(0, -1);
    const suit = id.slice(-1);
    const red = suit === "H" || suit === "D";
    return h(
      "div",
      { class: "sv-card" + (red ? " red" : "") + (extra ? " " + extra : ""), "data-card": id, title: id + " (value " + value(id) + ")" },
      h("span", { class: "sv-rank" }, rank),
      h("span", { class: "sv-suit" }, SUITS[suit] || suit),
      named(id) ? h("span", { class: "sv-value" }, value(id)) : null
    );
  }

  function badge(h, text, kind) {
    return h("span", { class: "badge " + (kind || "") }, text);
  }

  function sum(cards) {
    return cards.reduce((total, id) => total + value(id), 0);
  }

  function flank(h, cards, chosen, side) {
    const picked = new Set(chosen || []);
    return h("div", { class: "flank " + side, "data-flank": side }, cards.length ? cards.map((id) => card(h, id, picked.has(id) ? "vanguard" : "")) : h("span", { class: "empty-flank" }, "empty"));
  }

  function field(h, sides, choice, seat) {
    const vanguards = choice && choice.kind === "vanguards" ? choice : null;
    const left = sides.left;
    const right = sides.right;
    const summary = left.length || right.length ? "left " + sum(left) + " · right " + sum(right) + " · difference " + Math.abs(sum(left) - sum(right)) : "";
    return h(
      "div",
      { class: "field", "data-field": seat },
      flank(h, left, vanguards && vanguards.left, "left"),
      h("div", { class: "field-gap" }),
      flank(h, right, vanguards && vanguards.right, "right"),
      h("div", { class: "field-sum muted" }, summary)
    );
  }

  function newCards(context, seat, hand) {
    const before = context.previous(seat);
    if (!before || before.round !== context.observation(seat).round) return new Set();
    const had = new Set(before.hand);
    return new Set(hand.filter((id) => !had.has(id)));
  }

  function seatRow(context, table, seat) {
    const h = context.h;
    const own = context.view === null || context.view === seat;
    const mine = context.observation(seat);
    const out = table.eliminated[seat];
    const folded = !out && !table.in_round[seat];
    const toMove = table.to_move.includes(seat);
    const badges = [];
    if (table.dealer === seat && !out) badges.push(badge(h, "dealer"));
    if (toMove) badges.push(badge(h, "to move", "turn"));
    if (folded) badges.push(badge(h, "folded", "folded"));
    if (out) badges.push(badge(h, "out of the game", "folded"));
    if (context.view === seat) badges.push(badge(h, "this view", "viewer"));
    badges.push(V.forfeitBadge(context, seat));
    let hand;
    if (own) {
      const fresh = newCards(context, seat, mine.hand);
      hand = mine.hand.map((id) => card(h, id, fresh.has(id) ? "drawn" : ""));
    } else {
      hand = Array.from({ length: table.hand_sizes[seat] }, () => h("div", { class: "sv-card back" }));
    }
    const sides = context.view === null ? mine.fields[seat] : table.fields[seat];
    const choice = own && table.phase === "showdown" ? mine.my_choice : null;
    return h(
      "div",
      { class: "seat-row" + (toMove ? " to-move" : "") + (out || folded ? " inactive" : "") + (context.view === seat ? " viewer" : ""), "data-seat": seat },
      h(
        "div",
        { class: "seat-side" },
        h("div", { class: "seat-name" }, h("b", {}, "seat " + seat), " ", context.names[seat]),
        h("div", { class: "seat-stats" }, "chips " + table.chips[seat] + " · in the pot " + table.put[seat]),
        h("div", { class: "badges" }, badges)
      ),
      h("div", { class: "hand" + (own ? "" : " hidden-hand"), "data-hand": seat, "data-face": own ? "up" : "down" }, hand.length ? hand : h("span", { class: "muted" }, out ? "" : "no cards")),
      field(h, sides, choice, seat)
    );
  }

  function tableZone(context, table) {
    const h = context.h;
    const facts = ["pot " + table.pot, "amphora " + table.amphora, "cap " + table.cap, "deck " + table.deck_left + " cards"];
    if (table.lap) facts.push("lap " + table.lap + " of 3");
    const bet = table.bet
      ? h("div", { class: "bet-box" }, "Bet by seat " + table.bet.bettor + ": level " + table.bet.level + (table.bet.raises ? ", " + table.bet.raises + " raise(s)" : "") + " · to call: " +
          table.bet.to_call.map((owed, seat) => (table.in_round[seat] && owed ? "seat " + seat + " " + owed : null)).filter(Boolean).join(", "))
      : null;
    return h(
      "div",
      { class: "table-zone" },
      h("div", { class: "round-info" }, h("b", {}, "Round " + table.round), " · " + (PHASES[table.phase] || table.phase)),
      h("div", { class: "pot-line" }, facts.map((fact) => h("span", { class: "fact" }, fact))),
      bet,
      betting(context, table)
    );
  }

  function betting(context, table) {
    const h = context.h;
    const entries = table.betting.map((entry) => {
      const text = entry.kind === "amphora" ? "posts the amphora " + entry.amount : entry.kind === "fold" ? "folds" : entry.kind === "check" ? "checks" :
        entry.kind === "call" ? "calls " + entry.amount : entry.kind === "raise" ? "raises " + entry.amount : "bets " + entry.amount;
      return h("span", { class: "bet-entry kind-" + entry.kind }, "seat " + entry.seat + " " + text);
    });
    return h("div", { class: "betting" }, h("span", { class: "zone-label" }, "This round's bets"), entries);
  }

  function showdown(context, table) {
    const h = context.h;
    const outcome = table.last_round;
    if (!outcome) return null;
    const before = context.previous(context.view === null ? 0 : context.view);
    const just = before && JSON.stringify(before.last_round) !== JSON.stringify(outcome);
    const won = new Set(outcome.winners);
    const rows = outcome.fields.map((sides, seat) => {
      const choice = outcome.choices[seat];
      if (!choice && !won.has(seat)) return null;
      let text;
      if (!choice) text = "took the pot";
      else if (choice.kind === "no_link") text = "no link";
      else text = "link " + sum(choice.left) + (outcome.scores[seat] === null ? "" : " · score " + outcome.scores[seat]);
      return h(
        "div",
        { class: "showdown-row" + (won.has(seat) ? " winner" : "") },
        h("div", { class: "seat-name" }, h("b", {}, "seat " + seat), " " + context.names[seat], won.has(seat) ? badge(h, "won " + outcome.won[seat], "owner") : null),
        outcome.by_fold ? h("div", { class: "muted" }, text) : field(h, sides, choice, seat),
        outcome.by_fold ? null : h("div", { class: "showdown-score" }, text)
      );
    });
    // The engine posts the next round's amphoras as it pays the pot: the chips then were the stacks plus them.
    const paid = just && table.phase !== "over"
      ? h("div", { class: "muted", "data-paid": "" }, "chips when the pot was paid: " + table.chips.map((chips, seat) => "seat " + seat + " " + (chips + table.put[seat])).join(", ") +
          "; then the amphora of " + table.amphora + " was posted for round " + table.round)
      : null;
    const title = "Round " + outcome.round + (outcome.by_fold ? ": everyone else folded; pot " + outcome.pot : " showdown: pot " + outcome.pot + " (lowest score wins; highlighted cards are the vanguards)");
    return h("div", { class: "showdown" + (just ? " just" : "") }, h("div", { class: "zone-label" }, title), rows, paid);
  }

  V.games.scauver = {
    chart: { label: "chips", value: (observation) => observation.chips },
    draw(context) {
      values = context.meta.constants.card_values;
      const h = context.h;
      const table = context.observation(context.view === null ? 0 : context.view);
      const rows = context.names.map((_, seat) => seatRow(context, table, seat));
      return h("div", { class: "scauver-board" }, tableZone(context, table), h("div", { class: "seats-zone" }, rows), showdown(context, table));
    },
  };
})();
