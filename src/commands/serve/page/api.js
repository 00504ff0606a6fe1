// Shared by the board and the dashboard: calls to the JSON API and a small
// SVG line chart. No library: the page must work offline.
"use strict";

/** Calls the API; a reply that is not 2xx throws an Error with the server's message. */
async function api(path, body) {
  const options = body === undefined
    ? { method: "GET" }
    : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const reply = await fetch(path, options);
  let data = null;
  try {
    data = await reply.json();
  } catch (_) {
    throw new Error(`${path}: ${reply.status} ${reply.statusText}`);
  }
  if (!reply.ok) {
    throw new Error(data && data.error ? data.error : `${path}: ${reply.status}`);
  }
  return data;
}

const SVG_NS = "http://www.w3.org/2000/svg";

function svgElement(name, attrs, parent) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  if (parent) parent.appendChild(el);
  return el;
}

const CHART_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf"];

/** An axis label: as many decimals as the distance between ticks needs. */
function tickLabel(x, step) {
  if (!isFinite(x)) return "";
  const decimals = Math.max(0, Math.min(6, 1 - Math.floor(Math.log10(Math.abs(step) || 1))));
  return Number(x.toFixed(decimals)).toString();
}

/**
 * Draws line series into `container` (replacing what was there).
 * series: [{name, points: [[x, y], ...]}]; y may be null (a gap).
 * The container gets data-points = the number of points drawn, so a test can
 * see the chart grow.
 */
function lineChart(container, series, opts) {
  const o = Object.assign({ width: 460, height: 220, xLabel: "", yLabel: "" }, opts || {});
  const pad = { left: 52, right: 12, top: 12, bottom: 34 };
  container.innerHTML = "";
  const svg = svgElement("svg", { viewBox: `0 0 ${o.width} ${o.height}`, class: "chart" }, container);
  const all = series.flatMap(s => s.points.filter(p => p[1] !== null && isFinite(p[1])));
  container.dataset.points = String(all.length);
  if (all.length === 0) {
    svgElement("text", { x: o.width / 2, y: o.height / 2, "text-anchor": "middle", class: "empty" }, svg)
      .textContent = "no data yet";
    return;
  }
  let [x0, x1] = [Math.min(...all.map(p => p[0])), Math.max(...all.map(p => p[0]))];
  let [y0, y1] = [Math.min(...all.map(p => p[1])), Math.max(...all.map(p => p[1]))];
  if (o.yMin !== undefined) y0 = Math.min(y0, o.yMin);
  if (o.yMax !== undefined) y1 = Math.max(y1, o.yMax);
  if (x1 === x0) x1 = x0 + 1;
  if (y1 === y0) { y1 += 0.5; y0 -= 0.5; }
  const W = o.width - pad.left - pad.right, H = o.height - pad.top - pad.bottom;
  const sx = x => pad.left + (x - x0) / (x1 - x0) * W;
  const sy = y => pad.top + (1 - (y - y0) / (y1 - y0)) * H;
  svgElement("rect", { x: pad.left, y: pad.top, width: W, height: H, class: "plot" }, svg);
  for (let k = 0; k <= 4; k++) {
    const y = y0 + (y1 - y0) * k / 4, x = x0 + (x1 - x0) * k / 4;
    svgElement("line", { x1: pad.left, x2: pad.left + W, y1: sy(y), y2: sy(y), class: "grid" }, svg);
    svgElement("text", { x: pad.left - 4, y: sy(y) + 4, "text-anchor": "end", class: "tick" }, svg)
      .textContent = tickLabel(y, (y1 - y0) / 4);
    svgElement("text", { x: sx(x), y: pad.top + H + 14, "text-anchor": "middle", class: "tick" }, svg)
      .textContent = tickLabel(x, (x1 - x0) / 4);
  }
  svgElement("text", { x: pad.left + W / 2, y: o.height - 4, "text-anchor": "middle", class: "label" }, svg)
    .textContent = o.xLabel;
  series.forEach((s, i) => {
    const colour = CHART_COLOURS[i % CHART_COLOURS.length];
    let d = "", pen = false;
    for (const [x, y] of s.points) {
      if (y === null || !isFinite(y)) { pen = false; continue; }
      d += `${pen ? "L" : "M"}${sx(x).toFixed(1)},${sy(y).toFixed(1)} `;
      pen = true;
    }
    svgElement("path", { d, stroke: colour, class: "series" }, svg);
    if (s.points.length <= 60) {
      for (const [x, y] of s.points) {
        if (y !== null && isFinite(y)) svgElement("circle", { cx: sx(x), cy: sy(y), r: 2.5, fill: colour }, svg);
      }
    }
    svgElement("text", { x: pad.left + 6, y: pad.top + 14 + 14 * i, fill: colour, class: "legend" }, svg)
      .textContent = s.name;
  });
}
