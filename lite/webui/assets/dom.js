// DOM helpers. Everything the app shows is built here with createElement
// and textContent: no string of markup is ever parsed, so text from the
// model or the server cannot become an element or a script.

const SVG = 'http://www.w3.org/2000/svg';

// h builds an element: h('button', {class: 'x', onclick: f}, 'text', child).
// Attributes named on* are listeners; text children become text nodes.
export function h(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

// s builds an SVG element the same way.
export function s(tag, attrs, ...children) {
  return fill(document.createElementNS(SVG, tag), attrs, children);
}

function fill(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  add(el, children);
  return el;
}

function add(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) add(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// clear removes every child of el.
export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

// when formats an ISO time as the reader's local date and time.
export function when(iso) {
  const d = new Date(iso);
  return isNaN(d) ? '' : d.toLocaleString([], {dateStyle: 'medium', timeStyle: 'short'});
}

// bytes formats a byte count (1.5 MB).
export function bytes(n) {
  const u = ['B', 'KB', 'MB', 'GB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : String(n)) + ' ' + u[i];
}

// duration formats seconds as "3d 4h", "5h 6m" or "7m 8s".
export function duration(sec) {
  sec = Math.max(0, Math.floor(sec));
  const d = Math.floor(sec / 86400), hh = Math.floor(sec % 86400 / 3600);
  const m = Math.floor(sec % 3600 / 60), ss = sec % 60;
  if (d) return `${d}d ${hh}h`;
  if (hh) return `${hh}h ${m}m`;
  return `${m}m ${ss}s`;
}

// count formats a token count compactly (12.3k).
export function count(n) {
  if (n >= 1e6) return (n / 1e6).toFixed(1) + 'M';
  if (n >= 1e4) return (n / 1e3).toFixed(0) + 'k';
  if (n >= 1e3) return (n / 1e3).toFixed(1) + 'k';
  return String(n);
}

// focusFirst focuses el where a keyboard is likely (a pointer that
// hovers): on a phone it would only open the on-screen keyboard.
export function focusFirst(el) {
  if (el && matchMedia('(hover: hover)').matches) el.focus({preventScroll: true});
}
