// The league report: the games table filtered by a bot and its opponent (a crosstable cell picks the pair) and
// sorted by a column; "/" focuses the first filter, Escape clears both. The page is readable without it.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);

  function filterGames() {
    const bot = $("bot-filter").value;
    const other = $("pair-filter").value;
    let shown = 0;
    const rows = document.querySelectorAll("table.games tbody tr");
    for (const row of rows) {
      const seats = JSON.parse(row.dataset.bots);
      row.hidden = (bot !== "" && !seats.includes(bot)) || (other !== "" && !seats.includes(other));
      if (!row.hidden) shown++;
    }
    $("games-shown").textContent = shown + " of " + rows.length + " games shown";
  }

  function cellValue(row, column, kind) {
    const text = row.cells[column].textContent.trim();
    return kind === "number" ? (text === "" ? -Infinity : Number(text)) : text;
  }

  function sortBy(header) {
    const table = header.closest("table");
    const column = header.cellIndex;
    const kind = header.dataset.kind;
    const descending = header.dataset.sorted === "up";
    for (const other of table.querySelectorAll("th[data-sorted]")) delete other.dataset.sorted;
    header.dataset.sorted = descending ? "down" : "up";
    const body = table.tBodies[0];
    const rows = [...body.rows];
    rows.sort((a, b) => {
      const x = cellValue(a, column, kind);
      const y = cellValue(b, column, kind);
      const order = kind === "number" ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true });
      return descending ? -order : order;
    });
    body.append(...rows);
  }

  function typing(target) {
    return target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type !== "checkbox"));
  }

  document.addEventListener("DOMContentLoaded", () => {
    const filter = $("bot-filter");
    if (filter) {
      for (const select of [filter, $("pair-filter")]) {
        select.addEventListener("change", () => {
          filterGames();
          select.blur();
        });
      }
      for (const button of document.querySelectorAll("table.games th button.sort")) {
        button.addEventListener("click", () => {
          sortBy(button.closest("th"));
          button.blur();
        });
      }
      // A crosstable cell names its pair by its row's and its column's headers.
      document.addEventListener("click", (event) => {
        const cell = event.target.closest("table.crosstable td.heat");
        if (!cell) return;
        const table = cell.closest("table");
        filter.value = cell.parentElement.cells[0].textContent;
        $("pair-filter").value = table.tHead.rows[0].cells[cell.cellIndex].textContent;
        filterGames();
      });
      document.addEventListener("keydown", (event) => {
        if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
        if (event.key === "/") {
          event.preventDefault();
          filter.focus();
        } else if (event.key === "Escape") {
          filter.value = "";
          $("pair-filter").value = "";
          filterGames();
          document.activeElement.blur();
        }
      });
      $("games-shown").textContent = document.querySelectorAll("table.games tbody tr").length + " games shown";
    }
    document.documentElement.dataset.readyAt = String(Math.round(performance.now()));
    document.documentElement.dataset.ready = "1";
  });
})();
