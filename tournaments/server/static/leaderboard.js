// The live leaderboard: each `table` event from /api/events redraws the table's body, with text nodes only
// (never HTML from the server's data), so a bot's name cannot become markup.
(function () {
  "use strict";
  var status = document.getElementById("status");
  var body = document.querySelector("#leaderboard tbody");
  if (!status || !body || !window.EventSource) { return; }

  function cell(row, text) {
    var td = document.createElement("td");
    td.textContent = text;
    row.appendChild(td);
    return td;
  }

  function draw(table) {
    var rows = document.createDocumentFragment();
    table.rows.forEach(function (entry, index) {
      var tr = document.createElement("tr");
      if (entry.mine) { tr.classList.add("mine"); }
      if (entry.baseline) { tr.classList.add("baseline"); }
      cell(tr, String(index + 1));
      cell(tr, entry.name).className = "name";
      cell(tr, entry.elo === null ? "" : Math.round(entry.elo).toString());
      cell(tr, entry.interval ? Math.round(entry.interval[0]) + "–" + Math.round(entry.interval[1]) : "");
      cell(tr, String(entry.games));
      cell(tr, String(entry.group));
      cell(tr, entry.settled ? "" : "not settled");
      rows.appendChild(tr);
    });
    body.replaceChildren(rows);
    status.textContent = table.games + " games" + (table.frozen ? ", frozen at the deadline" : "") + "; " +
      (table.settled ? "settled." : "still settling.");
    status.dataset.changes = String(table.changes);
  }

  var source = new EventSource(status.dataset.live);
  source.addEventListener("table", function (event) { draw(JSON.parse(event.data)); });
}());
