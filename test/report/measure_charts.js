// Injected by test/test_report_cli.cpp at the end of a copy of a report,
// then rendered with `chromium --headless --dump-dom`: it writes what the
// browser actually laid out onto each chart's <svg>, so the test reads
// rendered sizes and parsed shape counts from the dumped DOM. The report
// itself carries no script.
(function measureCharts() {
  const charts = document.querySelectorAll('svg[data-testid]');
  for (const svg of charts) {
    const box = svg.getBoundingClientRect();
    svg.setAttribute('data-rendered-width', String(Math.round(box.width)));
    svg.setAttribute('data-rendered-height', String(Math.round(box.height)));
    svg.setAttribute('data-rendered-right', String(Math.round(box.right)));
    // querySelectorAll sees only elements the HTML parser put in the SVG
    // namespace where they belong: a malformed chart counts short.
    const bars = svg.querySelectorAll('rect.bar');
    const points = svg.querySelectorAll('circle.point');
    let invisible = 0;
    for (const shape of [...bars, ...points]) {
      const r = shape.getBoundingClientRect();
      if (!(r.width > 0 && r.height > 0)) invisible += 1;
    }
    svg.setAttribute('data-rendered-bars', String(bars.length));
    svg.setAttribute('data-rendered-points', String(points.length));
    svg.setAttribute('data-rendered-invisible', String(invisible));
    svg.setAttribute('data-rendered-title', svg.querySelector(':scope > title')?.textContent ?? '');
  }
  // Tables fit their cards: how far each table is wider than the box it
  // scrolls in (0 or less fits).
  const overflows = [];
  for (const wrap of document.querySelectorAll('.table-wrap')) {
    const table = wrap.querySelector('table');
    overflows.push(String(Math.round(table.scrollWidth - wrap.clientWidth)));
  }
  document.body.setAttribute('data-table-overflows', overflows.join(' '));
  document.body.setAttribute('data-tables', String(document.querySelectorAll('table').length));
  document.body.setAttribute('data-measured-charts', String(charts.length));
  document.body.setAttribute('data-viewport-width', String(window.innerWidth));
})();
