// The league report: a filter of the games table by bot. The page is readable without it.
"use strict";
(function () {
  function filterGames(bot) {
    for (const row of document.querySelectorAll("table.games tbody tr")) {
      row.hidden = bot !== "" && !JSON.parse(row.dataset.bots).includes(bot);
    }
  }
  document.addEventListener("DOMContentLoaded", () => {
    const filter = document.getElementById("bot-filter");
    if (filter) filter.addEventListener("change", () => filterGames(filter.value));
    document.documentElement.dataset.readyAt = String(Math.round(performance.now()));
    document.documentElement.dataset.ready = "1";
  });
})();
