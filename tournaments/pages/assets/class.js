// The class pages are static. On a narrow screen their tables stack, a row to a card (class.css): each cell
// is labelled here with its column's heading (the heading's own words, not its small print), so that a phone
// shows every column without cutting any off. Then the page says it is drawn, as every page of this package does.
for (const table of document.querySelectorAll('div.scroll > table')) {
  const headings = [...table.querySelectorAll('thead th')].map((th) => (th.childNodes[0]?.textContent ?? '').trim())
    .map((heading) => (heading === '#' ? 'place' : heading));
  for (const row of table.querySelectorAll('tbody tr')) {
    [...row.cells].forEach((cell, column) => {
      const said = headings[column] && !cell.classList.contains('bot') && cell.textContent.trim() !== headings[column];
      if (said) cell.dataset.label = headings[column];
    });
  }
}
document.documentElement.dataset.ready = '1';
document.documentElement.dataset.readyAt = String(Math.round(performance.now()));
