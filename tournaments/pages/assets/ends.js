// The ends of things on the board: a round's final position (a SCOUT round's last action is followed at once by
// the next deal, so the step after it shows new hands; this panel draws the hands as that action left them), and
// at the last step the game-over panel with the standings.
"use strict";
(function () {
  const V = (window.RefereeViewer = window.RefereeViewer || { games: {} });
  V.parts = V.parts || [];

  function standings(api) {
    const h = api.h;
    const seats = api.meta.seats.slice().sort((a, b) => a.rank - b.rank || a.seat - b.seat);
    const rows = seats.map((seat) =>
      h("tr", { "data-seat": seat.seat },
        h("td", { class: "num" }, String(seat.rank)),
        h("td", {}, "seat " + seat.seat + " · " + seat.bot, seat.forfeited ? h("span", { class: "badge forfeit" }, "forfeited") : null),
        h("td", { class: "num" }, String(seat.score)),
        h("td", { class: "muted" }, seat.forfeited ? "the game counted " + seat.game_score + "; a forfeit scores the table's lowest" : ""))
    );
    return h("div", { class: "game-over", id: "game-over" },
      h("div", { class: "zone-label" }, "Game over: standings"),
      h("table", { class: "standings" }, h("thead", {}, h("tr", {}, h("th", {}, "rank"), h("th", {}, "seat"), h("th", { class: "num" }, "score"), h("th", {}, ""))), h("tbody", {}, rows)));
  }

  V.parts.push({
    setUp() {},
    draw(api, context) {
      const board = document.getElementById("board").firstChild;
      const game = V.games[api.meta.game];
      const end = api.data.round_ends[String(api.state.step)];
      if (end && game.roundEnd && api.state.step < api.last) board.prepend(game.roundEnd(context, end));
      if (api.state.step === api.last) board.prepend(standings(api));
    },
  });
})();
