// A small Markdown renderer for model output, which is hostile text. It
// builds DOM nodes with createElement and textContent only: markup in the
// text is shown as text, never parsed as HTML. It knows paragraphs,
// headings, fenced and indented-less code, block quotes, lists, emphasis,
// code spans and links; links go only to http:, https: and mailto:
// (anything else is shown as the text it was), open in a new tab and carry
// rel="noopener noreferrer nofollow". Images are shown as links, never
// loaded.

import {h} from './dom.js';

// Past these, text is shown as it is: no hostile input makes rendering slow.
const MAX_LEN = 100000;
const MAX_DEPTH = 6;

// render returns a fragment holding text rendered as Markdown.
export function render(text) {
  const frag = document.createDocumentFragment();
  text = String(text ?? '');
  if (text.length > MAX_LEN) {
    frag.append(h('pre', {class: 'plain'}, text));
    return frag;
  }
  blocks(frag, text.replace(/\r\n?/g, '\n').split('\n'), 0);
  return frag;
}

const fenceRe = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const headRe = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const quoteRe = /^ {0,3}> ?/;
const itemRe = /^( {0,12})([-*+]|\d{1,9}[.)])\s+/;
const ruleRe = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;

// blocks appends the blocks of lines to parent.
function blocks(parent, lines, depth) {
  if (depth > MAX_DEPTH) {
    parent.append(h('p', {}, lines.join('\n')));
    return;
  }
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (line.trim() === '') { i++; continue; }
    if ((m = fenceRe.exec(line))) {
      const fence = m[1];
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence)) body.push(lines[i++]);
      i++; // the closing fence, or past the end
      const code = h('code', {}, body.join('\n'));
      if (m[2]) code.dataset.lang = m[2].slice(0, 32);
      parent.append(h('pre', {}, code));
      continue;
    }
    if ((m = headRe.exec(line))) {
      parent.append(h('h' + Math.min(m[1].length + 2, 6), {class: 'mdh'}, inline(m[2], depth)));
      i++;
      continue;
    }
    if (ruleRe.test(line)) { parent.append(h('hr')); i++; continue; }
    if (quoteRe.test(line)) {
      const inner = [];
      while (i < lines.length && quoteRe.test(lines[i])) inner.push(lines[i++].replace(quoteRe, ''));
      const q = h('blockquote');
      blocks(q, inner, depth + 1);
      parent.append(q);
      continue;
    }
    if ((m = itemRe.exec(line)) && m[1].length <= 3) {
      i = list(parent, lines, i, depth);
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() !== '' && !startsBlock(lines[i])) para.push(lines[i++].trim());
    if (para.length === 0) para.push(lines[i++].trim());
    const p = h('p');
    para.forEach((l, k) => {
      if (k) p.append(h('br'));
      p.append(inline(l, depth));
    });
    parent.append(p);
  }
}

function startsBlock(line) {
  const m = itemRe.exec(line);
  return fenceRe.test(line) || headRe.test(line) || quoteRe.test(line) || ruleRe.test(line) || (m && m[1].length <= 3);
}

// list appends the list starting at lines[i] and returns the index after it.
function list(parent, lines, i, depth) {
  const first = itemRe.exec(lines[i]);
  const ordered = /\d/.test(first[2]);
  const el = h(ordered ? 'ol' : 'ul');
  if (ordered) {
    const n = parseInt(first[2], 10);
    if (n !== 1) el.setAttribute('start', String(n));
  }
  while (i < lines.length) {
    const m = itemRe.exec(lines[i]);
    if (!m || m[1].length > 3 || /\d/.test(m[2]) !== ordered) break;
    const body = [lines[i].slice(m[0].length)];
    const indent = m[0].length;
    i++;
    // The item goes on while lines are indented, or are blank before an
    // indented line.
    while (i < lines.length) {
      const l = lines[i];
      const lead = l.length - l.trimStart().length;
      if (l.trim() === '') {
        const next = lines[i + 1];
        if (next === undefined || next.length - next.trimStart().length < Math.min(indent, 2)) break;
        body.push('');
      } else if (lead >= Math.min(indent, 2)) {
        body.push(l.slice(Math.min(lead, indent)));
      } else if (!startsBlock(l) && body[body.length - 1] !== '') {
        body.push(l.trim()); // a lazy continuation line
      } else break;
      i++;
    }
    const li = h('li');
    if (body.length === 1) li.append(inline(body[0].trim(), depth));
    else blocks(li, body, depth + 1);
    el.append(li);
  }
  parent.append(el);
  return i;
}

const punct = /[!-/:-@[-`{-~]/;
const autoRe = /^<((?:https?:\/\/|mailto:)[^\s<>]{1,2000})>/i;
const bareRe = /^https?:\/\/[^\s<>()"'`]{1,2000}/i;

// inline returns a fragment of text with its inline Markdown rendered.
export function inline(text, depth = 0) {
  const out = document.createDocumentFragment();
  if (depth > MAX_DEPTH) {
    out.append(text);
    return out;
  }
  // missing[k]: no closer k from here on; a failed search is not repeated,
  // so hostile runs of openers stay linear.
  const missing = new Set();
  const find = (key, from) => {
    if (missing.has(key)) return -1;
    const j = text.indexOf(key, from);
    if (j < 0) missing.add(key);
    return j;
  };
  let buf = '';
  const flush = () => { if (buf) { out.append(buf); buf = ''; } };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length && punct.test(text[i + 1])) {
      buf += text[i + 1];
      i += 2;
      continue;
    }
    if (c === '`') {
      let n = 1;
      while (text[i + n] === '`') n++;
      const tick = '`'.repeat(n);
      let j = find(tick, i + n);
      while (j >= 0 && text[j + n] === '`') { // a longer run does not close it
        let k = j;
        while (text[k] === '`') k++;
        j = text.indexOf(tick, k);
      }
      if (j < 0) { buf += tick; i += n; continue; }
      let code = text.slice(i + n, j);
      if (code.length > 1 && code.startsWith(' ') && code.endsWith(' ')) code = code.slice(1, -1);
      flush();
      out.append(h('code', {}, code));
      i = j + n;
      continue;
    }
    if (c === '*' || c === '_') {
      const dbl = text[i + 1] === c;
      const mark = dbl ? c + c : c;
      const prev = text[i - 1] || ' ';
      const next = text[i + mark.length] || ' ';
      const opens = next.trim() !== '' && !(c === '_' && /\w/.test(prev));
      if (opens) {
        let j = find(mark, i + mark.length + 1);
        // A single mark is not closed by half of a double one.
        while (!dbl && j >= 0 && text[j + 1] === c) j = text.indexOf(mark, j + 2);
        if (j >= 0 && text[j - 1].trim() !== '' && !(c === '_' && /\w/.test(text[j + mark.length] || ''))) {
          flush();
          out.append(h(dbl ? 'strong' : 'em', {}, inline(text.slice(i + mark.length, j), depth + 1)));
          i = j + mark.length;
          continue;
        }
      }
      buf += mark;
      i += mark.length;
      continue;
    }
    if (c === '[' || (c === '!' && text[i + 1] === '[')) {
      const img = c === '!';
      const end = link(text, img ? i + 1 : i);
      if (end) {
        flush();
        const [label, url, after] = end;
        const a = anchor(url, img ? 'image: ' + label : null, depth, label);
        out.append(a || text.slice(i, after));
        i = after;
        continue;
      }
    }
    if (c === '<') {
      const m = autoRe.exec(text.slice(i, i + 2100));
      if (m) {
        flush();
        out.append(anchor(m[1], m[1], depth) || m[0]);
        i += m[0].length;
        continue;
      }
    }
    if ((c === 'h' || c === 'H') && !/\w/.test(text[i - 1] || '')) {
      const m = bareRe.exec(text.slice(i, i + 2100));
      if (m) {
        let url = m[0].replace(/[.,;:!?]+$/, '');
        flush();
        out.append(anchor(url, url, depth) || url);
        i += url.length;
        continue;
      }
    }
    buf += c;
    i++;
  }
  flush();
  return out;
}

// link parses [label](url) at text[i] ('['): [label, url, index after], or
// null. Labels and urls are bounded so a stray bracket costs little.
function link(text, i) {
  let d = 0;
  let j = i;
  for (; j < text.length && j - i < 1000; j++) {
    if (text[j] === '\\') { j++; continue; }
    if (text[j] === '[') d++;
    else if (text[j] === ']' && --d === 0) break;
  }
  if (d !== 0 || text[j] !== ']' || text[j + 1] !== '(') return null;
  const m = /^\(\s*<?([^\s()<>]{0,2000})>?(?:\s+"[^"]{0,500}")?\s*\)/.exec(text.slice(j + 1, j + 2600));
  if (!m) return null;
  return [text.slice(i + 1, j), m[1], j + 1 + m[0].length];
}

// safeURL returns the URL if it is absolute and http:, https: or mailto:,
// else null.
export function safeURL(raw) {
  if (typeof raw !== 'string' || raw.length > 2000 || /[\u0000-\u0020\u007f]/.test(raw)) return null;
  let u;
  try { u = new URL(raw); } catch { return null; }
  return ['http:', 'https:', 'mailto:'].includes(u.protocol) ? u.href : null;
}

// anchor returns a safe link to url labelled by label (rendered inline
// unless plain is given), or null when the url is not allowed.
function anchor(url, plain, depth, label) {
  const href = safeURL(url);
  if (!href) return null;
  const a = h('a', {href, rel: 'noopener noreferrer nofollow', target: '_blank', referrerpolicy: 'no-referrer'});
  if (plain !== null) a.append(plain);
  else a.append(inline(label, depth + 1));
  if (a.textContent.trim() === '') a.append(href);
  return a;
}
