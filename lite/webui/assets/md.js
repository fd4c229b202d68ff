// A small Markdown renderer for model output, which is hostile text. It
// builds DOM nodes with createElement and textContent only: markup in the
// text is shown as text, never parsed as HTML. It knows paragraphs,
// headings, fenced and indented-less code, block quotes, lists, emphasis,
// code spans and links; links go only to http:, https: and mailto:
// (anything else is shown as the text it was), open in a new tab and carry
// rel="noopener noreferrer nofollow". Images are shown as links, never
// loaded.
//
// Rendering takes time linear in the text's length, whatever the text: no
// regular expression here can backtrack over more than a bounded window,
// and every search inline makes (the ']' that closes a '[', the run of
// backticks that closes a run, the mark that closes emphasis) is answered
// from tables built in one pass over the text (mdscan.js). Nesting is
// bounded (MAX_DEPTH), and so are the nodes one text may make
// (MAX_NODES): past that, as past MAX_LEN, the text is shown as it is.

import {h} from './dom.js';
import {Marks, punct} from './mdscan.js';

// Past these, text is shown as it is: no hostile input makes rendering
// slow. MAX_LEN is in characters; MAX_NODES counts the elements, their
// attributes and the text nodes one render makes: a node costs
// microseconds, and a hostile 100 KB line such as '*a' over and over
// asks for tens of thousands (a real answer makes a few hundred).
export const MAX_LEN = 100000;
export const MAX_NODES = 5000;
const MAX_DEPTH = 6;

// budget is what the render under way may still make; render sets it.
let budget = 0;
const tooMany = new Error('markdown: too many nodes');

// spend accounts for n nodes about to be made, and gives up the render
// once the budget is spent.
function spend(n = 1) {
  budget -= n;
  if (budget < 0) throw tooMany;
}

// el is h for the renderer: each element and attribute counts against
// the budget.
function el(tag, attrs, ...children) {
  spend(1 + (attrs ? Object.keys(attrs).length : 0));
  return h(tag, attrs, ...children);
}

// render returns a fragment holding text rendered as Markdown.
export function render(text) {
  const frag = document.createDocumentFragment();
  text = String(text ?? '');
  if (text.length <= MAX_LEN) {
    budget = MAX_NODES;
    try {
      blocks(frag, text.replace(/\r\n?/g, '\n').split('\n'), 0);
      return frag;
    } catch (e) {
      if (e !== tooMany) throw e;
    }
  }
  frag.replaceChildren(h('pre', {class: 'plain'}, text));
  return frag;
}

const fenceRe = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const headRe = /^ {0,3}(#{1,6})\s/;
const quoteRe = /^ {0,3}> ?/;
const itemRe = /^( {0,12})([-*+]|\d{1,9}[.)])\s+/;
const ruleRe = /^ {0,3}[-*_]/;
// blockStart: the characters a block other than a paragraph begins with.
const blockStart = /[-`~#>*+_0-9]/;

// heading returns [level, text] for an ATX heading line, else null: the
// text without the closing #s and the spaces around it. (A regular
// expression that does this in one go backtracks cubically over a line
// of spaces.)
function heading(line) {
  const m = headRe.exec(line);
  if (!m) return null;
  let t = line.slice(m[0].length).trim();
  let end = t.length;
  while (end > 0 && t[end - 1] === '#') end--;
  t = t.slice(0, end).trimEnd();
  // U+2028 or U+2029 inside its text make it none, as they did when
  // a regular expression's '.' read it.
  return /[\u2028\u2029]/.test(t) ? null : [m[1].length, t];
}

// isRule reports whether line is a thematic break: three or more of one
// of - * _, with nothing else but white space, after at most three
// spaces.
function isRule(line) {
  if (!ruleRe.test(line)) return false;
  const t = line.replace(/\s+/g, '');
  return t.length >= 3 && t === t[0].repeat(t.length);
}

// blocks appends the blocks of lines to parent.
function blocks(parent, lines, depth) {
  if (depth > MAX_DEPTH) {
    parent.append(el('p', {}, lines.join('\n')));
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
      const code = el('code', {}, body.join('\n'));
      if (m[2]) code.dataset.lang = m[2].slice(0, 32);
      parent.append(el('pre', {}, code));
      continue;
    }
    if ((m = heading(line))) {
      parent.append(el('h' + Math.min(m[0] + 2, 6), {class: 'mdh'}, inline(m[1], depth)));
      i++;
      continue;
    }
    if (isRule(line)) { parent.append(el('hr')); i++; continue; }
    if (quoteRe.test(line)) {
      const inner = [];
      while (i < lines.length && quoteRe.test(lines[i])) inner.push(lines[i++].replace(quoteRe, ''));
      const q = el('blockquote');
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
    const p = el('p');
    para.forEach((l, k) => {
      if (k) p.append(el('br'));
      p.append(inline(l, depth));
    });
    parent.append(p);
  }
}

// startsBlock reports whether line begins a block other than a paragraph.
// It is asked of every line of a paragraph, so most lines are answered
// by their first character alone.
function startsBlock(line) {
  let k = 0;
  while (line[k] === ' ' && k < 4) k++;
  if (k > 3 || !blockStart.test(line[k] || '')) return false;
  const m = itemRe.exec(line);
  return fenceRe.test(line) || heading(line) !== null || quoteRe.test(line) || isRule(line) || (m && m[1].length <= 3);
}

// list appends the list starting at lines[i] and returns the index after it.
function list(parent, lines, i, depth) {
  const first = itemRe.exec(lines[i]);
  const ordered = /\d/.test(first[2]);
  const ol = el(ordered ? 'ol' : 'ul');
  if (ordered) {
    const n = parseInt(first[2], 10);
    if (n !== 1) ol.setAttribute('start', String(n));
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
    const li = el('li');
    if (body.length === 1) li.append(inline(body[0].trim(), depth));
    else blocks(li, body, depth + 1);
    ol.append(li);
  }
  parent.append(ol);
  return i;
}

// Sticky, so that they match at lastIndex without a copy of the text.
// Each is bounded; an autolink's try stops at the next '<' or space, so
// tries at different places never scan the same characters twice, and a
// bare URL's fails within its first eight characters or is consumed.
const autoRe = /<((?:https?:\/\/|mailto:)[^\s<>]{1,2000})>/iy;
const bareRe = /https?:\/\/[^\s<>()"'`]{1,2000}/iy;
const wordRe = /\w/;

// at runs the sticky re at text[i].
function at(re, text, i) {
  re.lastIndex = i;
  return re.exec(text);
}

// inline returns a fragment of text with its inline Markdown rendered.
// The loop only moves forward, and each construct it tries costs, beyond
// what it then consumes, constant time (Marks) or a bounded window.
function inline(text, depth) {
  spend();
  const out = document.createDocumentFragment();
  if (depth > MAX_DEPTH) {
    out.append(text);
    return out;
  }
  const marks = new Marks(text);
  // The plain text not yet appended: buf (escaped characters, and the
  // text before them), then text from start on.
  let buf = '';
  let start = 0;
  const flush = (end) => {
    const s = buf + text.slice(start, end);
    buf = '';
    if (s) {
      spend();
      out.append(s);
    }
  };
  const put = (node, end, next) => {
    flush(end);
    if (typeof node === 'string') spend();
    out.append(node);
    start = next;
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length && punct.test(text[i + 1])) {
      buf += text.slice(start, i);
      start = i + 1; // the escaped character is plain text
      i += 2;
      continue;
    }
    if (c === '`') {
      let n = 1;
      while (text[i + n] === '`') n++;
      const j = marks.closingTicks(i, n);
      if (j < 0) { i += n; continue; }
      let code = text.slice(i + n, j);
      if (code.length > 1 && code.startsWith(' ') && code.endsWith(' ')) code = code.slice(1, -1);
      put(el('code', {}, code), i, j + n);
      i = j + n;
      continue;
    }
    if (c === '*' || c === '_') {
      const dbl = text[i + 1] === c;
      const len = dbl ? 2 : 1;
      const prev = text[i - 1] || ' ';
      const next = text[i + len] || ' ';
      const opens = next.trim() !== '' && !(c === '_' && wordRe.test(prev));
      if (opens) {
        const j = marks.closingMark(c, dbl, i + len + 1);
        if (j >= 0 && text[j - 1].trim() !== '' && !(c === '_' && wordRe.test(text[j + len] || ''))) {
          const inner = inline(text.slice(i + len, j), depth + 1);
          put(el(dbl ? 'strong' : 'em', {}, inner), i, j + len);
          i = j + len;
          continue;
        }
      }
      i += len;
      continue;
    }
    if (c === '[' || (c === '!' && text[i + 1] === '[')) {
      const img = c === '!';
      const end = link(text, marks, img ? i + 1 : i);
      if (end) {
        const [label, url, after] = end;
        const a = anchor(url, img ? 'image: ' + label : null, depth, label);
        put(a || text.slice(i, after), i, after);
        i = after;
        continue;
      }
    }
    if (c === '<') {
      const m = at(autoRe, text, i);
      if (m) {
        put(anchor(m[1], m[1], depth) || m[0], i, i + m[0].length);
        i += m[0].length;
        continue;
      }
    }
    if ((c === 'h' || c === 'H') && !wordRe.test(text[i - 1] || '')) {
      const m = at(bareRe, text, i);
      if (m) {
        const url = trimPunct(m[0]);
        put(anchor(url, url, depth) || url, i, i + url.length);
        i += url.length;
        continue;
      }
    }
    i++;
  }
  flush(text.length);
  return out;
}

// trimPunct drops the sentence's punctuation from the end of a bare URL.
function trimPunct(url) {
  let end = url.length;
  while (end > 0 && '.,;:!?'.includes(url[end - 1])) end--;
  return url.slice(0, end);
}

// link parses [label](url) at text[i] ('['): [label, url, index after], or
// null. Labels and urls are bounded so a stray bracket costs little.
function link(text, marks, i) {
  const j = marks.closingBracket(i);
  if (j < 0 || j - i >= 1000 || text[j + 1] !== '(') return null;
  const d = destination(text, j + 1);
  if (!d) return null;
  return [text.slice(i + 1, j), d[0], d[1]];
}

const space = /\s/;

// destination parses ( <?url>? "title"? ) at text[p] ('('): [url, index
// after], or null. The url is at most 2,000 characters, the title 500,
// each ended by a character it may not hold; it reads forward only.
function destination(text, p) {
  const n = text.length;
  let k = p + 1;
  while (k < n && space.test(text[k])) k++;
  if (text[k] === '<') k++;
  const u = k;
  while (k < n && k - u <= 2000 && !/[\s()<>]/.test(text[k])) k++;
  if (k - u > 2000) return null;
  const url = text.slice(u, k);
  if (text[k] === '>') k++;
  let w = k;
  while (w < n && space.test(text[w])) w++;
  if (w > k && text[w] === '"') {
    let q = w + 1;
    while (q < n && q - w <= 501 && text[q] !== '"') q++;
    if (text[q] !== '"' || q - w > 501) return null;
    k = q + 1;
    while (k < n && space.test(text[k])) k++;
  } else {
    k = w;
  }
  return text[k] === ')' ? [url, k + 1] : null;
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
  const a = el('a', {href, rel: 'noopener noreferrer nofollow', target: '_blank', referrerpolicy: 'no-referrer'});
  if (plain !== null) a.append(plain);
  else a.append(inline(label, depth + 1));
  if (a.textContent.trim() === '') a.append(href);
  return a;
}
