// The move list beside the board: every decision, grouped by round, with what it set off (a round's end and its
// scores) and the faults where they happened; a click goes to that step, and the list follows the current one.
// Each round is a <details>: the current round's opens by itself, and closed rounds cost no layout (a long
// game has thousands of moves).
"use strict";
(function () {
  const V = (window.RefereeViewer = window.RefereeViewer || { games: {} });
  V.parts = V.parts || [];
  let shownView;
  let current = null;

  function moveText(api, move, view) {
    return view !== null && view !== move.seat && move.pub ? move.pub : move.text;
  }

  const escape = (text) => String(text).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);

  function faultLine(fault) {
    return '<li class="ml-fault kind-' + escape(fault.kind) + '" data-step="' + fault.step + '" data-seat="' + fault.seat + '"><b>' +
      escape(fault.kind.replace("_", " ")) + "</b> of seat " + fault.seat + ": " + escape(fault.detail.split("\n")[0]) + "</li>";
  }

  function moveLine(step, text, extra) {
    return '<li class="ml-move' + extra + '" data-step="' + step + '"><span class="ml-n">' + step + "</span>" + text + "</li>";
  }

  // Built as one string: a long game has thousands of moves, and one parse is many times faster than a node each.
  function build(api) {
    const h = api.h;
    const { meta, moves } = api;
    const html = [];
    const starts = meta.rounds.map(([round, first]) => ({ round, first }));
    // A round's moves are the decisions made in it: from the step after its deal to the one that ended it.
    for (let index = 0; index < starts.length; index++) {
      const { round, first } = starts[index];
      const end = index + 1 < starts.length ? starts[index + 1].first : api.last;
      const count = end - first;
      html.push('<li class="ml-round" data-round="' + round + '"><details><summary class="ml-round-head">Round ' + round +
        ' <span class="muted">· ' + count + " move" + (count === 1 ? "" : "s") + "</span></summary><ol>");
      if (first === 0) {
        html.push(moveLine(0, "the deal", ""));
        for (const fault of api.faultsAt.get(0) || []) html.push(faultLine(fault));
      }
      for (let step = first + 1; step <= end; step++) {
        const move = moves[step - 1];
        const text = '<span class="ml-who">s' + move.seat + "</span> " + escape(moveText(api, move, api.state.view));
        html.push(moveLine(step, text, move.by === "fallback" ? " fallback" : ""));
        for (const fault of api.faultsAt.get(step) || []) html.push(faultLine(fault));
        for (const note of move.notes) html.push('<li class="ml-note" data-step="' + step + '">' + escape(note) + "</li>");
      }
      html.push("</ol></details></li>");
    }
    const list = h("ol", { class: "ml-rounds" });
    list.innerHTML = html.join("");
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
      const group = row.closest("details");
      if (!group.open) {
        for (const other of box.querySelectorAll("details[open][data-auto]")) {
          other.open = false;
          delete other.dataset.auto;
        }
        group.open = true;
        group.dataset.auto = "1";
      }
      // Scroll the list only, never the page.
      const top = row.offsetTop;
      if (top < box.scrollTop + 20 || top > box.scrollTop + box.clientHeight - 40) box.scrollTop = Math.max(0, top - box.clientHeight / 3);
    },
  });
})();
