// Page-side probe of drawn Vega charts, run by tests/test_browser.py in headless Chromium (over the
// DevTools protocol). Defines window.storagelabProbe(result), which takes vega-embed's result (its
// `view` and the compiled Vega spec `vgSpec`) and returns, as JSON:
//   title       the chart's title;
//   marks       how many mark items the chart's data marks drew;
//   scales      per continuous scale (linear, log, pow, sqrt, symlog, time, utc) that places marks on x
//               or y: its type, domain, range, its labelled axes and their tick labels, and the positions (px, on
//               the scale's range) of every mark item that a data mark places with it (x, x2, y, y2 ...),
//               null where the item has no position, counted per mark and channel in `unplaced`; and the
//               same for each discrete scale (band, point) that places marks, with `discrete: true` (a
//               heatmap's rows and columns).
// A facet's independent scales are reported per cell, as `name [cell]`.
window.storagelabProbe = (result) => {
  const CONTINUOUS = new Set(['linear', 'log', 'pow', 'sqrt', 'symlog', 'time', 'utc']);
  const DISCRETE = new Set(['band', 'point']);
  const POSITIONAL = new Set([...CONTINUOUS, ...DISCRETE]);
  const CHANNELS = {x: 'x', x2: 'x', xc: 'x', y: 'y', y2: 'y', yc: 'y'};
  const {view, vgSpec} = result;
  const finite = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const json = (v) => (v instanceof Date ? v.getTime() : typeof v === 'number' ? finite(v) : v);

  // From the compiled spec: each scale's type, the scale each named mark puts on x and y, each group's axes.
  const types = {};
  const uses = {};  // mark name -> {channel: scale name}
  const axes = {};  // group mark name ('root' for the top) -> its axes (scale, orient, labels), in order
  const walkSpec = (node, name) => {
    for (const s of node.scales || []) types[s.name] = s.type || 'linear';
    axes[name] = node.axes || [];
    for (const m of node.marks || []) {
      const enc = Object.assign({}, m.encode && m.encode.enter, m.encode && m.encode.update);
      const u = {};
      for (const ch of Object.keys(CHANNELS)) {
        for (const e of [].concat(enc[ch] || [])) if (e && e.scale) u[ch] = e.scale;
      }
      if (m.name) uses[m.name] = u;
      if (m.type === 'group') walkSpec(m, m.name);
    }
  };
  walkSpec(vgSpec, 'root');

  // A scale is the view's, or a facet cell's own (independent scales): a cell's group item holds the
  // dataflow context of its facet, whose `scales` inherit the outer ones and own the cell's.
  const scales = {};
  const entry = (name, cell) => {
    const own = cell && Object.prototype.hasOwnProperty.call(cell.context.scales, name);
    const key = own ? `${name} [${cell.label}]` : name;
    if (!scales[key]) {
      const scale = own ? cell.context.scales[name].value : view.scale(name);
      scales[key] = {name: key, type: types[name], domain: scale.domain().map(json), range: scale.range().map(json),
                     positions: [], unplaced: {}, axes: 0, ticks: [], discrete: DISCRETE.has(types[name])};
    }
    return scales[key];
  };
  const cellOf = (g, outer) => {
    if (!g.context || g.context === view._runtime || !Object.keys(g.context.scales || {}).length) return outer;
    const label = Object.values(g.datum || {}).filter((v) => typeof v === 'string').join(', ');
    return {context: g.context, label: label || String(g.mark.items.indexOf(g))};
  };
  const position = (item, ch) => {
    const horizontal = CHANNELS[ch] === 'x';
    const start = horizontal ? item.x : item.y, size = horizontal ? item.width : item.height;
    if (ch === 'x' || ch === 'y') return start;
    if (ch === 'xc' || ch === 'yc') return size != null ? start + size / 2 : start;
    const end = horizontal ? item.x2 : item.y2;  // x2, y2: a rule's or an area's end, else a rect's far side
    return end != null ? end : size != null ? start + size : start;
  };
  const labelsOf = (mark) => {
    const out = [];
    for (const it of mark.items || []) {
      if (mark.role === 'axis-label' && it.text != null && it.text !== '') out.push(String(it.text));
      for (const child of it.items || []) out.push(...labelsOf(child));
    }
    return out;
  };

  let marks = 0;
  const walkScene = (mark, cell) => {
    if (mark.marktype === 'group' && !['axis', 'legend', 'title'].includes(mark.role)) {
      const groupAxes = axes[mark.name] || [];
      for (const g of mark.items || []) {
        const inner = cellOf(g, cell);
        let axis = 0;
        for (const child of g.items || []) {
          if (child.role !== 'axis') {
            walkScene(child, inner);
            continue;
          }
          const spec = groupAxes[axis++] || {};
          if (spec.scale && POSITIONAL.has(types[spec.scale]) && spec.labels !== false) {
            const s = entry(spec.scale, inner);
            s.axes += 1;
            s.ticks.push(...labelsOf(child));
          }
        }
      }
      return;
    }
    if (mark.role !== 'mark' || !uses[mark.name]) return;
    for (const item of mark.items || []) {
      if (item.defined === false) continue;  // a gap a line or area leaves on purpose (a missing value)
      marks += 1;
      for (const [ch, scale] of Object.entries(uses[mark.name])) {
        if (!POSITIONAL.has(types[scale])) continue;
        const s = entry(scale, cell), p = finite(position(item, ch));
        s.positions.push(p);
        if (p === null) s.unplaced[`${mark.name}.${ch}`] = (s.unplaced[`${mark.name}.${ch}`] || 0) + 1;
      }
    }
  };
  walkScene(view.scenegraph().root, null);

  const title = result.spec && result.spec.title;
  return {
    title: title && typeof title === 'object' ? String(title.text) : title ? String(title) : null,
    marks,
    scales: Object.values(scales),
  };
};

const storagelabSleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The HTML report: waits until every .storagelab-chart is drawn or failed (report.py's snippet marks
// data-rendered or data-error and keeps vega-embed's result on the element), then probes each.
window.storagelabReportCharts = async (timeoutMs) => {
  const els = [...document.querySelectorAll('.storagelab-chart')];
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !els.every((el) => el.dataset.rendered || el.dataset.error)) {
    await storagelabSleep(50);
  }
  if (els.length) els[0].scrollIntoView();
  return els.map((el) => {
    if (el.dataset.error) return {error: el.dataset.error};
    if (!el.vegaEmbed) return {error: 'not drawn within the time limit'};
    return {
      ...window.storagelabProbe(el.vegaEmbed),
      svg_marks: el.querySelectorAll('svg .marks, svg g.mark-group').length,
      png_fallback: el.querySelectorAll('img').length,
    };
  });
};

// JupyterLab (started with --LabApp.expose_app_in_browser=True, so the app is window.jupyterapp): opens
// the notebook at `path` as the file browser does, waits until `expected` outputs are drawn by Lab's
// Vega-Lite renderer (the widget keeps vega-embed's result as `_result`) and the kernel is up, probes each
// chart, scrolls the first into view for a screenshot. `storagelabLabClose` shuts its kernel down.
window.storagelabLabCharts = async (path, expected, timeoutMs) => {
  const deadline = Date.now() + timeoutMs;
  while (!window.jupyterapp && Date.now() < deadline) await storagelabSleep(100);
  const app = window.jupyterapp;
  if (!app) throw new Error('window.jupyterapp is missing (Lab not started with expose_app_in_browser)');
  await app.restored;
  const panel = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  window.storagelabPanel = panel;
  await panel.context.ready;
  await panel.revealed;
  const renderers = () => {
    const out = [];
    const walk = (w) => {
      if (w.node.classList.contains('jp-RenderedVegaLite')) out.push(w);
      for (const child of w.children()) walk(child);
    };
    walk(panel.content);
    return out;
  };
  let found = renderers();
  while (Date.now() < deadline && !(found.length >= expected && found.every((w) => w._result))) {
    await storagelabSleep(100);
    found = renderers();
  }
  let kernel = null;
  const ready = await Promise.race([panel.sessionContext.ready.then(() => true), storagelabSleep(Math.max(0, deadline - Date.now()))]);
  if (ready) kernel = panel.sessionContext.session && panel.sessionContext.session.kernel
    ? panel.sessionContext.session.kernel.name : null;
  const text = panel.node.textContent;
  if (found.length) found[0].node.scrollIntoView();
  await storagelabSleep(200);
  return {
    opened: panel.node.classList.contains('jp-NotebookPanel') && panel.content.node.classList.contains('jp-Notebook'),
    kernel,
    kernel_error: text.includes('Error Starting Kernel') || document.body.textContent.includes('Error Starting Kernel'),
    news: document.body.textContent.includes('Jupyter news'),
    js_errors: (text.match(/Javascript Error: [^\n]*/g) || []),
    canvases: panel.node.querySelectorAll('.jp-RenderedVegaLite canvas').length,
    charts: found.map((w) => (w._result ? window.storagelabProbe(w._result) : {error: 'not drawn within the time limit'})),
  };
};

window.storagelabLabClose = async () => {
  const panel = window.storagelabPanel;
  if (!panel) return;
  // no request in flight (the debugger asks the new kernel for its state): shutting down would cancel it
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const deadline = Date.now() + 10000;
  while (kernel && kernel._futures && kernel._futures.size && Date.now() < deadline) await storagelabSleep(50);
  await panel.sessionContext.shutdown();
  panel.dispose();
  window.storagelabPanel = null;
};
