// The usage screen: tokens per day per agent over the last 30 days, as
// stacked bars in an SVG built with DOM calls, and the totals as a table.

import {h, s, clear, count} from './dom.js';
import {get} from './api.js';

const DAYS = 30;
const MAX_AGENTS = 5; // the rest are summed as "others"
const COLORS = 6; // .c0 … .c5 in app.css

export async function usageScreen(main) {
  clear(main).append(h('h1', {}, 'Usage'), h('p', {class: 'meta'}, `Tokens per day, last ${DAYS} days.`));
  let byAgent;
  try {
    byAgent = await get(`/api/v1/usage?by=agent&since=${DAYS}d`);
  } catch (e) {
    if (e.status === 404) return main.append(h('p', {}, 'This daemon keeps no usage ledger.'));
    throw e;
  }
  const rows = byAgent.rows || [];
  if (!rows.length) return main.append(h('p', {}, 'No model calls in the last 30 days.'));
  const agents = rows.slice(0, MAX_AGENTS).map((r) => r.key);
  const byDay = (agent) => get(`/api/v1/usage?by=day&since=${DAYS}d` + (agent ? '&agent=' + encodeURIComponent(agent) : ''))
    .then((r) => new Map((r.rows || []).map((row) => [row.key, row.total_tokens || 0])));
  // The days are the ledger's own (its time zone), not the browser's.
  const [all, ...perDay] = await Promise.all([byDay(''), ...agents.map(byDay)]);
  const days = lastDays(DAYS, [...all.keys()].sort().pop());
  const series = agents.map((name, i) => ({name, values: days.map((d) => perDay[i].get(d) || 0)}));
  if (rows.length > agents.length) {
    // Everyone else: the day's total less the agents drawn.
    series.push({name: 'others', values: days.map((d, i) =>
      Math.max(0, (all.get(d) || 0) - series.reduce((t, se) => t + se.values[i], 0)))});
  }
  main.append(chart(days, series), legend(series), table(rows, byAgent.total, byAgent.priced));
}

// lastDays returns the n dates (YYYY-MM-DD) up to the later of today
// (the browser's) and the ledger's last day, oldest first.
function lastDays(n, ledgerLast) {
  const ymd = (x) => `${x.getFullYear()}-${String(x.getMonth() + 1).padStart(2, '0')}-${String(x.getDate()).padStart(2, '0')}`;
  const now = new Date();
  let end = new Date(now.getFullYear(), now.getMonth(), now.getDate());
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(ledgerLast || '');
  if (m && ledgerLast > ymd(end)) end = new Date(+m[1], +m[2] - 1, +m[3]);
  const out = [];
  for (let i = n - 1; i >= 0; i--) out.push(ymd(new Date(end.getFullYear(), end.getMonth(), end.getDate() - i)));
  return out;
}

function chart(days, series) {
  // As wide as the screen shows it, so that its text stays readable.
  const W = Math.round(Math.min(600, Math.max(300, window.innerWidth - 40))), H = 220, L = 44, B = 24, T = 8;
  const totals = days.map((_, i) => series.reduce((t, se) => t + se.values[i], 0));
  const max = nice(Math.max(1, ...totals));
  const bw = (W - L) / days.length;
  const y = (v) => H - B - (v / max) * (H - B - T);
  const svg = s('svg', {viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img',
    'aria-label': `Tokens per day per agent; the busiest day used ${count(Math.max(...totals))}`});
  const steps = String(max)[0] === '5' ? 5 : 4;
  for (let k = 0; k <= steps; k++) {
    const v = (max / steps) * k;
    svg.append(s('line', {x1: L, x2: W, y1: y(v), y2: y(v), class: 'grid'}),
      s('text', {x: L - 4, y: y(v) + 4, 'text-anchor': 'end', class: 'axis'}, count(v)));
  }
  days.forEach((d, i) => {
    let base = 0;
    series.forEach((se, j) => {
      const v = se.values[i];
      if (!v) return;
      svg.append(s('rect', {x: L + i * bw + 1, y: y(base + v), width: Math.max(1, bw - 2), height: y(base) - y(base + v),
        class: 'c' + (j % COLORS)}, s('title', {}, `${d} ${se.name}: ${v} tokens`)));
      base += v;
    });
    if (i % 7 === (days.length - 1) % 7) {
      const lastOne = i === days.length - 1;
      svg.append(s('text', {x: lastOne ? W : L + i * bw + bw / 2, y: H - 6, 'text-anchor': lastOne ? 'end' : 'middle', class: 'axis'}, d.slice(5)));
    }
  });
  return h('figure', {class: 'chartbox'}, svg);
}

// nice rounds v up to 1, 2 or 5 times a power of ten.
function nice(v) {
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

function legend(series) {
  return h('ul', {class: 'legend'}, series.map((se, j) =>
    h('li', {}, h('span', {class: 'swatch c' + (j % COLORS)}), se.name)));
}

function table(rows, total, priced) {
  const head = ['Agent', 'Calls', 'Input', 'Output', 'Total'];
  if (priced) head.push('Cost');
  const line = (r, name) => h('tr', {}, h('th', {scope: 'row'}, name), h('td', {}, String(r.calls)),
    h('td', {}, count(r.input_tokens)), h('td', {}, count(r.output_tokens)), h('td', {}, count(r.total_tokens)),
    priced ? h('td', {}, r.cost_usd === undefined ? '–' : '$' + r.cost_usd.toFixed(4) + (r.cost_partial ? '+' : '')) : null);
  return h('div', {class: 'tablebox'}, h('table', {},
    h('thead', {}, h('tr', {}, head.map((x) => h('th', {scope: 'col'}, x)))),
    h('tbody', {}, rows.map((r) => line(r, r.key)), total ? line(total, 'Total') : null)));
}
