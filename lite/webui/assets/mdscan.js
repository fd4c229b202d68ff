// The searches md.js's inline renderer makes in one text, each answered in
// constant time from a table built, on first need, in one pass over the
// text: the ']' that closes a '[', the run of exactly n backticks that
// closes a code span, the * or _ (single or double) that may close
// emphasis. Searching the text instead repeats a scan to its end once per
// opener, which a hostile line turns quadratic: 100 KB of '[' took 1.6 s
// to render, and '*a' followed by '\**' over and over as long.

// punct are the characters a backslash escapes.
export const punct = /[!-/:-@[-`{-~]/;

// Marks holds one text's tables. Its methods must be asked about places
// in increasing order (inline's loop only moves forward).
export class Marks {
  constructor(text) {
    this.text = text;
    this.brackets = null; // Int32Array: the index of the ']' closing each '[', or -1
    this.ticks = null; // Map: run length → {starts, at}
    this.emph = new Map(); // '*' / '**' / '_' / '__' → Int32Array
  }

  // closingBracket returns the index of the ']' that closes the '[' at i
  // (brackets nest; a backslash before punctuation escapes it, as inline
  // reads it), or -1.
  closingBracket(i) {
    if (!this.brackets) this.brackets = matchBrackets(this.text);
    return this.brackets[i];
  }

  // closingTicks returns where the first run of exactly n backticks after
  // the run of n at i begins, or -1. Runs are read as they are, escapes
  // or not, as CommonMark reads code spans.
  closingTicks(i, n) {
    if (!this.ticks) this.ticks = tickRuns(this.text);
    const r = this.ticks.get(n);
    if (!r) return -1;
    while (r.at < r.starts.length && r.starts[r.at] < i + n) r.at++;
    return r.at < r.starts.length ? r.starts[r.at] : -1;
  }

  // closingMark returns the first index from 'from' on of the mark c (a
  // single one: not the first half of a pair, pairs being read left to
  // right) or, dbl, of cc; -1 if there is none.
  closingMark(c, dbl, from) {
    const key = dbl ? c + c : c;
    let t = this.emph.get(key);
    if (!t) {
      t = dbl ? nextPairs(this.text, c) : nextSingles(this.text, c);
      this.emph.set(key, t);
    }
    return from < this.text.length ? t[from] : -1;
  }
}

function matchBrackets(text) {
  const n = text.length;
  const close = new Int32Array(n).fill(-1);
  const open = new Int32Array(n); // a stack of the '[' not closed yet
  let top = 0;
  for (let k = 0; k < n; k++) {
    const c = text[k];
    if (c === '\\' && k + 1 < n && punct.test(text[k + 1])) k++;
    else if (c === '[') open[top++] = k;
    else if (c === ']' && top > 0) close[open[--top]] = k;
  }
  return close;
}

function tickRuns(text) {
  const runs = new Map();
  for (let k = 0; k < text.length;) {
    if (text[k] !== '`') { k++; continue; }
    const s = k;
    while (text[k] === '`') k++;
    let r = runs.get(k - s);
    if (!r) runs.set(k - s, r = {starts: [], at: 0});
    r.starts.push(s);
  }
  return runs;
}

// nextSingles: t[p] is the first c at or after p that is not followed by
// another c, pairs cc being skipped whole ("**" is two halves of a double
// mark, not a single one).
function nextSingles(text, c) {
  const n = text.length;
  const t = new Int32Array(n + 2).fill(-1);
  for (let p = n - 1; p >= 0; p--) {
    if (text[p] !== c) t[p] = t[p + 1];
    else if (text[p + 1] !== c) t[p] = p;
    else t[p] = t[p + 2];
  }
  return t;
}

// nextPairs: t[p] is the first index at or after p where cc begins.
function nextPairs(text, c) {
  const n = text.length;
  const t = new Int32Array(n + 1).fill(-1);
  for (let p = n - 2; p >= 0; p--) t[p] = text[p] === c && text[p + 1] === c ? p : t[p + 1];
  return t;
}
