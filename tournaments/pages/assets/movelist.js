// The move list beside the board: every decision, grouped by round, with what it set off (a round's end and its
// scores) and the faults where they happened; a click goes to that step, and the list follows the current one.
"use strict";
(function () {
  const V = (window.RefereeViewer = window.RefereeViewer || { games: {} });
  V.parts = V.parts || [];
  let shownView;
  let current = null;

  function moveText(api, move, view) {
    return view !== null && view !== move.seat && move.pub ? move.pub : move.text;
  }

  function faultLine(api, fault) {
    const h = api.h;
    return h("li", { class: "ml-fault kind-" + fault.kind, "data-step": fault.step, "data-seat": fault.seat },
      h("b", {}, fault.kind.replace("_", " ")), " of seat " + fault.seat + ": " + fault.detail.split("\n")[0]);
  }

  function build(api) {
    const h = api.h;
    const { meta, moves } = api;
    const groups = [];
    const starts = meta.rounds.map(([round, first]) => ({ round, first }));
    // A round's moves are the decisions made in it: from the step after its deal to the one that ended it.
    for (let index = 0; index < starts.length; index++) {
      const { round, first } = starts[index];
      const end = index + 1 < starts.length ? starts[index + 1].first : api.last;
      const items = [];
      if (first === 0) items.push(h("li", { class: "ml-move", "data-step": 0 }, h("span", { class: "ml-n" }, "0"), "the deal"));
      for (const fault of first === 0 ? api.faultsAt.get(0) || [] : []) items.push(faultLine(api, fault));
      for (let step = first + 1; step <= end; step++) {
        const move = moves[step - 1];
        items.push(h("li", { class: "ml-move" + (move.by === "fallback" ? " fallback" : ""), "data-step": step },
          h("span", { class: "ml-n" }, String(step)), h("span", { class: "ml-who" }, "s" + move.seat), " " + moveText(api, move, api.state.view)));
        for (const fault of api.faultsAt.get(step) || []) items.push(faultLine(api, fault));
        for (const note of move.notes) items.push(h("li", { class: "ml-note", "data-step": step }, note));
      }
      groups.push(h("li", { class: "ml-round", "data-round": round },
        h("div", { class: "ml-round-head", "data-step": first }, "Round " + round), h("ol", {}, items)));
    }
    const list = h("ol", { class: "ml-rounds" }, groups);
    document.getElementById("moves").replaceChildren(h("div", { class: "zone-label" }, "Moves"), list);
    shownView = api.state.view;
    current = null;
  }

  V.parts.push({
    setUp(api) {
      const box = document.getElementById("moves");
      box.addEventListener("click", (event) => {
        const item = event.target.closest("[data-step]");
        if (!item) return;
        if (item.dataset.seat !== undefined && api.state.view !== null) api.setView(Number(item.dataset.seat));
        api.go(Number(item.dataset.step));
      });
      build(api);
    },
    draw(api) {
      if (shownView !== api.state.view) build(api);
      const box = document.getElementById("moves");
      const row = box.querySelector('.ml-move[data-step="' + api.state.step + '"]');
      if (current === row) return;
      if (current) current.classList.remove("current");
      current = row;
      if (!row) return;
      row.classList.add("current");
      // Scroll the list only, never the page.
      const top = row.offsetTop;
      if (top < box.scrollTop + 20 || top > box.scrollTop + box.clientHeight - 40) box.scrollTop = Math.max(0, top - box.clientHeight / 3);
    },
  });
})();
