// The decision view: for the step's decision, its seat's legal moves with the one played marked, the time it
// took against the seat's clock, the faults charged for it with the illegal action as the bot sent it, a link to
// the bot's log, and what the bot was shown, compact.
"use strict";
(function () {
  const V = (window.RefereeViewer = window.RefereeViewer || { games: {} });
  V.parts = V.parts || [];
  const SHOWN = 300;
  let drawn = -1;

  function generic(action) {
    const rest = Object.entries(action).filter(([key]) => key !== "kind").map(([key, value]) => key + " " + (Array.isArray(value) ? value.join(" ") : value));
    return [action.kind, ...rest].join(" · ");
  }

  function clock(api, move) {
    const h = api.h;
    const limits = api.meta.limits || {};
    if (move.by === "fallback") return h("div", { class: "clock" }, "played by the fallback (a seeded random legal action), not by the bot");
    const allowed = (limits.move_time_ms || 0) + (limits.time_bank_ms || 0);
    if (!allowed || move.ms === null || move.ms === undefined) return h("div", { class: "clock" }, "no clock recorded");
    const share = Math.min(1, move.ms / allowed);
    return h("div", { class: "clock" }, "time " + move.ms.toFixed(1) + " ms of " + limits.move_time_ms + " ms per move" + (limits.time_bank_ms ? " (+ a bank of " + limits.time_bank_ms + " ms)" : "") + " · " + (100 * share).toFixed(1) + "%",
      h("span", { class: "clock-bar" + (share > 0.5 ? " warn" : "") }, h("span", { style: "width:" + (100 * share).toFixed(1) + "%" })));
  }

  function faults(api, step, seat) {
    const h = api.h;
    return (api.faultsAt.get(step) || []).filter((fault) => fault.seat === seat).map((fault) =>
      h("div", { class: "decision-fault kind-" + fault.kind },
        h("b", {}, fault.kind.replace("_", " ")), " ", V.faultDetail(h, fault.detail),
        fault.sent ? h("div", {}, "the bot sent: ", h("code", { class: "sent" }, fault.sent)) : null));
  }

  async function options(api, step, move, box) {
    const h = api.h;
    const lists = await api.legal();
    if (drawn !== step) return;
    const legal = lists[step - 1] || [];
    const chosen = api.data.chosen[step - 1];
    const game = V.games[api.meta.game];
    const before = api.observation(move.seat, step - 1);
    const describe = (action) => {
      try {
        return game.describe ? game.describe(action, before) : generic(action);
      } catch (error) {
        return generic(action);
      }
    };
    const items = legal.slice(0, SHOWN).map((action, index) =>
      h("li", { class: index === chosen ? "chosen" : "", "data-option": index }, describe(action), index === chosen ? h("span", { class: "badge turn" }, move.by === "fallback" ? "played (fallback)" : "chosen") : null));
    if (chosen !== null && chosen >= SHOWN) items.push(h("li", { class: "chosen", "data-option": chosen }, describe(legal[chosen]), h("span", { class: "badge turn" }, "chosen")));
    if (legal.length > SHOWN) items.push(h("li", { class: "muted" }, "and " + (legal.length - SHOWN) + " more"));
    const list = h("ol", { class: "legal" }, items);
    box.replaceChildren(h("div", { class: "zone-label" }, legal.length + " legal move" + (legal.length === 1 ? "" : "s")), list);
    const marked = list.querySelector("li.chosen");
    if (marked) list.scrollTop = Math.max(0, marked.offsetTop - list.clientHeight / 3);
  }

  V.faultDetail = function faultDetail(h, detail) {
    const lines = detail.split("\n");
    if (lines.length === 1) return h("span", { class: "detail" }, detail);
    return h("details", { class: "detail" }, h("summary", {}, lines[0] + " (" + (lines.length - 1) + " more lines)"), h("pre", {}, lines.slice(1).join("\n")));
  };

  V.parts.push({
    setUp() {},
    draw(api) {
      const h = api.h;
      const step = api.state.step;
      const box = document.getElementById("decision");
      if (drawn === step && box.dataset.view === String(api.state.view)) return;
      drawn = step;
      box.dataset.view = String(api.state.view);
      if (step === 0) {
        box.replaceChildren(h("div", { class: "muted" }, "The deal: no decision yet. Step forward to see each decision: the legal moves, the one chosen and its time."));
        return;
      }
      const move = api.moves[step - 1];
      const seat = api.meta.seats[move.seat];
      // Another seat's legal moves would show its hand: a seat's view shows only its own decisions in full.
      const hidden = api.state.view !== null && api.state.view !== move.seat;
      const log = seat.log ? h("a", { href: seat.log, class: "log-link" }, "the bot's log") : null;
      const list = h("div", { class: "options" }, hidden ? h("div", { class: "muted" }, "another seat's decision: its legal moves are hidden in this view") : h("div", { class: "muted" }, "unpacking the legal moves\u2026"));
      const shown = h("details", { class: "shown" }, h("summary", {}, "what the bot was shown (its observation before deciding)"), h("pre", {}));
      shown.addEventListener("toggle", () => shown.open && shown.querySelector("pre").replaceChildren(...V.compact(h, api.observation(move.seat, step - 1))));
      box.replaceChildren(
        h("div", { class: "zone-label" }, "Decision at step " + step + " · " + api.seatLabel(move.seat), log),
        h("div", {}, clock(api, move), faults(api, step, move.seat), list, hidden ? null : shown));
      if (!hidden) options(api, step, move, list);
    },
  });
})();
