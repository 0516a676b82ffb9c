// The replay viewer: unpacks the steps, rebuilds every seat's observation at every step, and draws the
// controls, the timeline and the caption; a game script (scout.js, scauver.js) draws the board.
// The page's address keeps the place: #step=40&view=1 (view=full or a seat number).
// The parts beside the board (movelist.js, chart.js, decision.js) register in V.parts: each gets setUp(api)
// once and draw(api) at every step.
"use strict";
(function () {
  const V = (window.RefereeViewer = window.RefereeViewer || { games: {} });
  V.parts = V.parts || [];

  V.h = function h(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") node.className = value;
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  };

  // The inverse of tournaments/pages/delta.py `diff`.
  V.applyPatch = function applyPatch(old, patch) {
    if (patch === null || patch === undefined) return old;
    if ("*" in patch) return patch["*"];
    if ("+" in patch) return old.concat(patch["+"]);
    const isList = Array.isArray(old);
    const out = isList ? old.slice() : Object.assign({}, old);
    for (const [key, entry] of Object.entries(patch["~"] || {})) {
      const at = isList ? Number(key) : key;
      out[at] = applyPatch(old ? old[at] : undefined, entry);
    }
    for (const key of patch["-"] || []) delete out[key];
    return out;
  };

  // A seat that forfeited is marked from the step of the fault that forfeited it (replay_page.py forfeited_at).
  V.forfeitBadge = function forfeitBadge(context, seat) {
    const entry = context.meta.seats[seat];
    if (!entry.forfeited || entry.forfeited_at === null || context.step < entry.forfeited_at) return null;
    return context.h("span", { class: "badge forfeit", title: "a fallback plays its decisions; it ranks last" }, "forfeited");
  };

  // Keys belong to the page unless a person is typing into a field.
  V.typing = function typing(target) {
    if (!target || !target.tagName) return false;
    if (target.isContentEditable || target.tagName === "TEXTAREA") return true;
    return target.tagName === "INPUT" && !["range", "checkbox", "radio", "button"].includes(target.type);
  };

  // An observation as a person reads it: one line per key, a list of numbers or cards on one line, the
  // history one entry a line (JSON for each, with no indentation).
  V.compact = function compact(h, value) {
    const line = (item) => JSON.stringify(item).replace(/"([a-z_]+)":/g, "$1: ").replace(/,(?=\S)/g, ", ");
    const out = [];
    for (const [key, item] of Object.entries(value || {})) {
      if (Array.isArray(item) && item.length && item.every((entry) => entry && typeof entry === "object" && !Array.isArray(entry))) {
        out.push(h("b", {}, key), " (" + item.length + "):\n");
        for (const entry of item) out.push("  " + line(entry) + "\n");
      } else {
        out.push(h("b", {}, key), ": " + line(item) + "\n");
      }
    }
    return out;
  };

  async function unpack(text) {
    if (typeof DecompressionStream === "undefined") {
      throw new Error("this browser cannot unpack the game (it lacks DecompressionStream): use a current Chrome, Firefox or Safari");
    }
    const bytes = Uint8Array.from(atob(text.trim()), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function rebuild(frames, players) {
    const shared = [];
    const own = Array.from({ length: players }, () => []);
    let common = {};
    const last = Array.from({ length: players }, () => ({}));
    for (const frame of frames) {
      common = V.applyPatch(common, frame[0]);
      shared.push(common);
      for (let seat = 0; seat < players; seat++) {
        last[seat] = V.applyPatch(last[seat], frame[seat + 1]);
        own[seat].push(last[seat]);
      }
    }
    return { shared, own };
  }

  const SPEEDS = [1, 2, 5, 10, 25, 50, 100];
  const ADDRESS_DELAY_MS = 400;

  function Viewer(meta, data, legalText) {
    const h = V.h;
    const game = V.games[meta.game];
    if (!game) throw new Error("no drawing for the game " + meta.game);
    const players = meta.players;
    const views = rebuild(data.frames, players);
    const moves = data.replay.actions.map((move, index) => {
      const [text, pub, notes] = data.captions[index];
      return { seat: move.seat, action: move.action, ms: move.ms, by: move.by, text, pub, notes };
    });
    const last = meta.steps - 1;
    const names = meta.seats.map((seat) => seat.bot);
    const faultsAt = new Map();
    for (const fault of meta.faults) {
      if (!faultsAt.has(fault.step)) faultsAt.set(fault.step, []);
      faultsAt.get(fault.step).push(fault);
    }
    const state = { step: 0, view: null, timer: null, addressTimer: null };
    const $ = (id) => document.getElementById(id);
    let legalLists = null;
    // The legal actions are packed apart and unpacked on first use (replay_page.py, LEGAL_BLOCK).
    function legal() {
      if (!legalLists) legalLists = unpack(legalText);
      return legalLists;
    }

    function observation(seat, step) {
      if (step < 0 || step > last) return null;
      return Object.assign({}, views.shared[step], views.own[seat][step]);
    }

    function roundOf(step) {
      let found = meta.rounds[0][0];
      for (const [round, first] of meta.rounds) if (first <= step) found = round;
      return found;
    }

    function seatLabel(seat) {
      return "seat " + seat + " · " + names[seat];
    }

    function timing(move) {
      if (move.by === "fallback") return "fallback (not the bot's choice)";
      return move.ms === null || move.ms === undefined ? "" : move.ms.toFixed(1) + " ms";
    }

    function drawCaption() {
      const step = state.step;
      const parts = [];
      const move = step > 0 ? moves[step - 1] : null;
      // The step's faults come first: on a small screen the caption shows only its first lines.
      for (const fault of faultsAt.get(step) || []) {
        parts.push(
          h("div", { class: "caption-fault kind-" + fault.kind }, h("b", {}, fault.kind.replace("_", " ")), " of " + seatLabel(fault.seat) + ": ", V.faultDetail(h, fault.detail))
        );
      }
      if (move) {
        const hidden = state.view !== null && state.view !== move.seat && move.pub;
        parts.push(
          h("div", { class: "caption-move" }, h("span", { class: "who" }, seatLabel(move.seat)), " ", hidden ? move.pub : move.text,
            h("span", { class: "timing" + (move.by === "fallback" ? " fallback" : "") }, timing(move)))
        );
        for (const note of move.notes) parts.push(h("div", { class: "caption-note" }, note));
      } else {
        parts.push(h("div", { class: "caption-move" }, "The deal, before any decision."));
      }
      const next = observation(0, step).to_move;
      if (next && next.length) {
        parts.push(h("div", { class: "caption-next" }, "to move: " + next.map((seat) => seatLabel(seat)).join(", ")));
      }
      $("caption").replaceChildren(...parts);
    }

    function drawRaw() {
      const raw = $("raw");
      if (state.view === null) {
        raw.hidden = true;
        return;
      }
      raw.hidden = false;
      raw.querySelector("summary").textContent = "Observation of " + seatLabel(state.view) + " at step " + state.step + " (what its bot was shown)";
      if (raw.open) raw.querySelector("pre").replaceChildren(...V.compact(h, observation(state.view, state.step)));
    }

    function draw() {
      const step = state.step;
      const context = {
        h, meta, step, players, names, view: state.view,
        move: step > 0 ? moves[step - 1] : null,
        observation: (seat) => observation(seat, step),
        previous: (seat) => observation(seat, step - 1),
      };
      $("board").replaceChildren(game.draw(context));
      for (const part of V.parts) part.draw(api, context);
      drawCaption();
      drawRaw();
      $("slider").value = String(step);
      $("position").textContent = "step " + step + " / " + last + " · round " + roundOf(step);
      $("round").value = String(roundOf(step));
      $("view").value = state.view === null ? "full" : String(state.view);
      const root = document.documentElement;
      root.dataset.step = String(step);
      root.dataset.view = state.view === null ? "full" : String(state.view);
      clearTimeout(state.addressTimer);
      state.drawnHash = location.hash;
      state.addressTimer = setTimeout(keepPlace, ADDRESS_DELAY_MS);
    }

    // The address follows the board a moment later, so that playing does not change it many times a second
    // (browsers throttle that, and some throw).
    function keepPlace() {
      const address = "#step=" + state.step + "&view=" + (state.view === null ? "full" : state.view);
      // An address set since this step was drawn (a link, the back button) wins: its hashchange is on its way.
      if (location.hash === address || location.hash !== state.drawnHash) return;
      try {
        history.replaceState(null, "", address);
      } catch (error) {
        // Some browsers refuse to change the address of a local file; the place is then just not kept.
      }
    }

    function go(step) {
      state.step = Math.max(0, Math.min(last, step));
      draw();
    }

    function setView(view) {
      state.view = view === null || view === "full" ? null : Math.max(0, Math.min(players - 1, Number(view)));
      draw();
    }

    function roundStart(direction) {
      const starts = meta.rounds.map(([, first]) => first);
      if (direction > 0) {
        const later = starts.find((start) => start > state.step);
        return later === undefined ? last : later;
      }
      const earlier = starts.filter((start) => start < state.step);
      return earlier.length ? earlier[earlier.length - 1] : 0;
    }

    function play(on) {
      if (state.timer) clearInterval(state.timer);
      state.timer = null;
      if (on) {
        if (state.step >= last) go(0);
        const perSecond = Number($("speed").value);
        state.timer = setInterval(() => (state.step >= last ? play(false) : go(state.step + 1)), 1000 / perSecond);
      }
      $("play").classList.toggle("playing", on);
    }

    function fromAddress() {
      const values = new URLSearchParams(location.hash.slice(1));
      if (values.has("view")) state.view = values.get("view") === "full" ? null : Math.max(0, Math.min(players - 1, Number(values.get("view")) || 0));
      if (values.has("step")) state.step = Math.max(0, Math.min(last, Number(values.get("step")) || 0));
    }

    function setUp() {
      for (const [round, first] of meta.rounds) $("round").append(h("option", { value: round }, "round " + round + " (step " + first + ")"));
      for (const speed of SPEEDS) $("speed").append(h("option", { value: speed, selected: speed === 5 }, speed + " steps/s"));
      $("view").append(h("option", { value: "full" }, "full view: every hand"));
      for (let seat = 0; seat < players; seat++) $("view").append(h("option", { value: seat }, seatLabel(seat)));
      for (const part of V.parts) part.setUp(api);
      // A control gives the keyboard back once used: a focused button would take space and Enter, a focused
      // select the arrows.
      for (const control of document.querySelectorAll("#player button, #player select")) {
        control.addEventListener(control.tagName === "SELECT" ? "change" : "click", () => control.blur());
      }
      $("first").addEventListener("click", () => go(0));
      $("back").addEventListener("click", () => go(state.step - 1));
      $("forward").addEventListener("click", () => go(state.step + 1));
      $("last").addEventListener("click", () => go(last));
      $("play").addEventListener("click", () => play(!state.timer));
      $("slider").addEventListener("input", (event) => go(Number(event.target.value)));
      $("round").addEventListener("change", (event) => go(meta.rounds.find(([round]) => String(round) === event.target.value)[1]));
      $("speed").addEventListener("change", () => state.timer && play(true));
      $("view").addEventListener("change", (event) => setView(event.target.value));
      $("raw").addEventListener("toggle", drawRaw);
      window.addEventListener("hashchange", () => {
        fromAddress();
        draw();
      });
      document.addEventListener("keydown", onKey);
      drawMarks();
    }

    function onKey(event) {
      if (V.typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.target.tagName === "BUTTON" && event.key === "Enter") return; // the focused button's own click
      const jump = event.shiftKey ? 10 : 1;
      const actions = {
        ArrowRight: () => go(state.step + jump),
        ArrowLeft: () => go(state.step - jump),
        PageDown: () => go(roundStart(1)),
        PageUp: () => go(roundStart(-1)),
        Home: () => go(0),
        End: () => go(last),
        " ": () => play(!state.timer),
        f: () => setView(null),
      };
      let act = actions[event.key];
      if (!act && /^[0-9]$/.test(event.key) && Number(event.key) < players) act = () => setView(Number(event.key));
      if (!act) return;
      event.preventDefault();
      act();
    }

    function drawMarks() {
      const marks = $("marks");
      const at = (step) => (last ? (100 * step) / last : 0) + "%";
      const every = Math.ceil(meta.rounds.length / 10);
      meta.rounds.forEach(([round, first], index) => {
        marks.append(
          h("span", { class: "round-mark", style: "left:" + at(first), title: "round " + round + " starts at step " + first, onclick: () => go(first) },
            index % every === 0 ? "R" + round : "")
        );
      });
      for (const fault of meta.faults) {
        marks.append(
          h("span", {
            class: "fault-mark kind-" + fault.kind, style: "left:" + at(fault.step), "data-step": fault.step,
            title: "step " + fault.step + ": " + fault.kind.replace("_", " ") + " of " + seatLabel(fault.seat) + ": " + fault.detail,
            onclick: () => go(fault.step),
          })
        );
      }
      moves.forEach((move, index) => {
        if (move.by === "fallback" && !faultsAt.has(index + 1)) {
          marks.append(h("span", { class: "fallback-mark", style: "left:" + at(index + 1), title: "step " + (index + 1) + ": fallback action for " + seatLabel(move.seat), onclick: () => go(index + 1) }));
        }
      });
    }

    const api = {
      h, meta, data, moves, last, names, players, faultsAt, state, go, setView, observation, roundOf, seatLabel, timing, legal,
      shared: (step) => views.shared[step],
    };
    setUp();
    fromAddress();
    draw();
    return api;
  }

  V.start = async function start() {
    const started = performance.now();
    const root = document.documentElement;
    try {
      const meta = JSON.parse(document.getElementById("replay-meta").textContent);
      const data = await unpack(document.getElementById("replay-steps").textContent);
      V.viewer = Viewer(meta, data, document.getElementById("replay-legal").textContent);
      root.dataset.loadMs = String(Math.round(performance.now() - started));
      root.dataset.readyAt = String(Math.round(performance.now()));
      root.dataset.ready = "1";
    } catch (error) {
      const banner = V.h("div", { class: "error-banner" }, "This replay cannot be shown: " + error.message);
      document.getElementById("board").replaceChildren(banner);
      root.dataset.ready = "error";
      throw error;
    }
  };

  document.addEventListener("DOMContentLoaded", () => V.start());
})();
