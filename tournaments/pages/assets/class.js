// The class pages are static; this only says they are drawn (as every page of this package does).
document.documentElement.dataset.ready = '1';
document.documentElement.dataset.readyAt = String(Math.round(performance.now()));
