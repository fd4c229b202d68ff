// The chat screen: one session's conversation, followed on the durable
// event log (GET .../events, an EventSource that resumes with
// Last-Event-ID after a dropped connection), and a box to send messages.

import {h, clear, focusFirst} from './dom.js';
import {render} from './md.js';
import {get, post, send as request, sess, APIError} from './api.js';

// Shown text is capped: a huge tool result does not freeze a small phone.
const MAX_SHOWN = 20000;
const EVENTS = ['token', 'user_message', 'message', 'tool_call', 'tool_result',
  'approval_required', 'approval_decision', 'error', 'done', 'cancelled'];

// chatScreen fills main with the chat of session id and returns a function
// that stops following it.
// carry is the first message of a session a chat screen started in place
// of one it deleted: the new session's screen sends it (and so knows it
// sent the session's first message).
let carry = null;

export function chatScreen(main, id) {
  const log = h('div', {class: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation'});
  const status = h('p', {class: 'status', role: 'status'});
  const input = h('textarea', {id: 'msg', rows: 1, placeholder: 'Message', 'aria-label': 'Message',
    enterkeyhint: 'send', autocomplete: 'off'});
  const send = h('button', {type: 'submit', class: 'primary'}, 'Send');
  const cancel = h('button', {type: 'button', class: 'danger', hidden: true, onclick: () => stop()}, 'Cancel');
  const title = h('h1', {}, 'Chat');
  const parent = h('p', {class: 'parent meta', hidden: true});
  const form = h('form', {class: 'composer', onsubmit: (e) => { e.preventDefault(); submit(); }}, input, cancel, send);
  const fresh = h('button', {type: 'button', disabled: true, onclick: () => newChat()}, 'New chat');
  // Escape anywhere in the chat cancels the running turn.
  const onKey = (e) => {
    if (e.key === 'Escape' && st.running && !e.defaultPrevented) {
      e.preventDefault();
      stop();
    }
  };
  clear(main).append(h('section', {class: 'chat', onkeydown: onKey},
    h('div', {class: 'bar'}, h('div', {class: 'who'}, title, parent),
      h('div', {class: 'actions'}, fresh,
        h('a', {class: 'button', href: sess(id, 'export'), download: id + '.jsonl'}, 'Export'))),
    log, status, form));
  main.classList.add('full');

  const st = {
    seen: new Set(), // durable events shown, by seq: a replay shows nothing twice
    lastSeq: 0,
    stream: null, // the assistant bubble tokens go to
    calls: new Map(), // call_id -> its <details>
    approvals: new Map(), // call_id -> its card
    running: false,
    es: null,
    closed: false,
    retry: null,
    backoff: 1000,
    // A first message that never reached a model leaves no session:
    // users counts the session's messages, sent says this page sent the
    // first one, and gone that the session was removed for it (the next
    // message starts another).
    users: 0,
    sent: false,
    gone: false,
  };

  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      submit();
    }
  });
  input.addEventListener('input', grow);
  function grow() {
    input.style.height = 'auto';
    input.style.height = Math.min(input.scrollHeight, 200) + 'px';
  }

  let agent = '';
  get(sess(id)).then((s) => {
    agent = s.agent;
    title.textContent = s.agent;
    document.title = s.agent + ' · agnx-lite';
    fresh.disabled = false;
    if (s.parent_id) showParent(s.parent_id);
    if (s.status === 'running') setRunning(true);
    if (s.status === 'completed') {
      input.disabled = true;
      input.placeholder = 'This session has ended: start a new chat.';
    }
  }).catch((e) => say(e.message, true));

  // showParent links a subagent's chat to the session that spawned it,
  // named by its agent once known.
  function showParent(pid) {
    const link = h('a', {href: '#/chat/' + encodeURIComponent(pid), title: pid}, 'its parent session');
    parent.append('subagent of ', link);
    parent.hidden = false;
    get(sess(pid)).then((p) => { link.textContent = p.agent + '’s session'; }, () => {});
  }

  async function newChat() {
    fresh.disabled = true;
    try {
      const s = await post('/api/v1/sessions', {agent});
      location.hash = '#/chat/' + encodeURIComponent(s.session_id);
    } catch (e) {
      fresh.disabled = false;
      say(e.message, true);
    }
  }

  follow();
  focusFirst(input);
  if (carry && carry.id === id) {
    input.value = carry.text;
    carry = null;
    submit();
  }

  function follow() {
    if (st.closed) return;
    // Without ?after= the log is replayed from its start; on reconnect
    // the browser sends Last-Event-ID itself. A new EventSource (after a
    // fatal error) resumes with ?after=.
    const q = st.lastSeq ? '&after=' + st.lastSeq : '';
    const es = new EventSource(sess(id, 'events') + '?events=all' + q);
    st.es = es;
    for (const name of EVENTS) es.addEventListener(name, (e) => onEvent(name, e));
    es.onopen = () => {
      st.backoff = 1000;
      say('');
    };
    es.onerror = () => {
      if (st.closed) return;
      if (es.readyState !== EventSource.CLOSED) {
        say('Connection lost: reconnecting…');
        return;
      }
      // The browser gave up: the daemon answered an error. Ask it why
      // (a 401 shows the sign-in screen), then start anew, slower each time.
      es.close();
      get(sess(id)).then(() => again(), (e) => {
        if (e.status === 404) say('This session no longer exists.', true);
        else if (e.status !== 401) again();
      });
    };
  }

  function again() {
    if (st.closed) return;
    say('Reconnecting…');
    clearTimeout(st.retry);
    st.retry = setTimeout(follow, st.backoff);
    st.backoff = Math.min(st.backoff * 2, 30000);
  }

  // Back online (a phone back on Wi-Fi): resume now, not at the
  // browser's next retry.
  function online() {
    if (st.closed || !st.es || st.es.readyState === EventSource.OPEN) return;
    st.es.close();
    clearTimeout(st.retry);
    follow();
  }
  window.addEventListener('online', online);

  function onEvent(name, e) {
    let d;
    try { d = JSON.parse(e.data); } catch { return; }
    if (!d || typeof d !== 'object') return;
    const seq = Number(e.lastEventId) || 0;
    if (name !== 'token') {
      const key = name === 'error' ? 'e' + seq + ':' + d.message : seq;
      if (st.seen.has(key)) return;
      st.seen.add(key);
      if (name !== 'error') st.lastSeq = Math.max(st.lastSeq, seq);
    }
    const stick = log.scrollHeight - log.scrollTop - log.clientHeight < 80;
    show(name, d);
    if (stick) log.scrollTop = log.scrollHeight;
  }

  function show(name, d) {
    switch (name) {
      case 'token':
        setRunning(true);
        if (!st.stream) {
          st.stream = h('div', {class: 'msg assistant streaming'});
          log.append(st.stream);
        }
        st.stream.append(str(d.content));
        break;
      case 'user_message':
        st.users++;
        endStream();
        log.append(h('div', {class: 'msg user'}, clip(str(d.content))));
        setRunning(true);
        break;
      case 'message': {
        const text = str(d.content);
        if (!text.trim()) { endStream(); break; }
        const el = st.stream || h('div', {class: 'msg assistant'});
        if (!st.stream) log.append(el);
        clear(el).append(render(text));
        el.classList.remove('streaming');
        if (d.origin) el.classList.add('notice');
        st.stream = null;
        break;
      }
      case 'tool_call': {
        endStream();
        const det = h('details', {class: 'tool'},
          h('summary', {}, h('span', {class: 'tname'}, str(d.name)), h('span', {class: 'tstate'}, ' running…')),
          h('div', {class: 'label'}, 'Arguments'), h('pre', {}, clip(pretty(str(d.arguments)))));
        st.calls.set(str(d.call_id), det);
        log.append(det);
        setRunning(true);
        break;
      }
      case 'tool_result': {
        let det = st.calls.get(str(d.call_id));
        if (!det) {
          det = h('details', {class: 'tool'}, h('summary', {}, h('span', {class: 'tname'}, 'tool'), h('span', {class: 'tstate'})));
          log.append(det);
        }
        det.querySelector('.tstate').textContent = d.success ? ' ✓ done' : ' ✗ failed';
        det.classList.add(d.success ? 'ok' : 'failed');
        det.append(h('div', {class: 'label'}, 'Result'), h('pre', {}, clip(str(d.content))));
        break;
      }
      case 'approval_required':
        endStream();
        approval(d);
        break;
      case 'approval_decision': {
        const card = st.approvals.get(str(d.call_id));
        if (card) decided(card, str(d.decision));
        break;
      }
      case 'error':
        endStream();
        log.append(h('div', {class: 'msg error', role: 'alert'}, clip(str(d.message) || 'The turn failed.')));
        break;
      case 'done':
        endStream();
        if (d.status && d.status !== 'completed' && d.status !== 'paused') {
          log.append(h('p', {class: 'note'}, 'The turn ended: ' + str(d.status) + '.'));
        }
        closeApprovals();
        setRunning(false);
        if (d.status === 'failed' && st.sent && st.users === 1) discard();
        break;
      case 'cancelled':
        endStream();
        log.append(h('p', {class: 'note'}, 'Cancelled.'));
        closeApprovals();
        setRunning(false);
        break;
    }
  }

  // endStream ends the bubble tokens went to: what streamed stays, as
  // text, until the message event (or nothing, after a cancel) follows.
  function endStream() {
    if (st.stream) st.stream.classList.remove('streaming');
    st.stream = null;
  }

  function approval(d) {
    const callID = str(d.call_id);
    const answer = async (decision, btn) => {
      for (const b of card.querySelectorAll('button')) b.disabled = true;
      btn.classList.add('chosen');
      try {
        await post(sess(id, 'approve') + '?wait=false', {call_id: callID, command: str(d.command), decision});
      } catch (e) {
        for (const b of card.querySelectorAll('button')) b.disabled = false;
        btn.classList.remove('chosen');
        card.querySelector('.answer').textContent = e.message;
      }
    };
    const allow = h('button', {type: 'button', class: 'primary', onclick: (e) => answer('allow_once', e.currentTarget)}, 'Allow');
    const always = h('button', {type: 'button', onclick: (e) => answer('allow_always', e.currentTarget)}, 'Always allow');
    const deny = h('button', {type: 'button', class: 'danger', onclick: (e) => answer('deny', e.currentTarget)}, 'Deny');
    const card = h('div', {class: 'approval', role: 'group', 'aria-label': 'Approval'},
      h('p', {}, 'The agent asks to run ', h('strong', {}, str(d.tool_name) || 'a tool'), ':'),
      h('pre', {}, clip(str(d.command))),
      h('div', {class: 'actions'}, allow, always, deny),
      h('p', {class: 'answer', role: 'status'}));
    st.approvals.set(callID, card);
    log.append(card);
    allow.focus({preventScroll: true});
  }

  function decided(card, decision) {
    card.querySelector('.actions').remove();
    card.classList.add('decided');
    const said = {allow_once: 'Allowed.', allow_always: 'Allowed, and from now on.', deny: 'Denied.'}[decision] || decision;
    card.querySelector('.answer').textContent = said;
  }

  function closeApprovals() {
    for (const card of st.approvals.values()) {
      if (card.querySelector('.actions')) decided(card, 'No longer waiting: the turn ended.');
    }
  }

  function setRunning(on) {
    st.running = on;
    cancel.hidden = !on;
    log.classList.toggle('busy', on);
  }

  async function submit() {
    const text = input.value;
    if (!text.trim()) return;
    input.value = '';
    grow();
    if (text.trim() === '/compact') {
      try {
        const r = await post(sess(id, 'compact'));
        const said = !r || r.method === 'none' ? 'Nothing to compact yet.'
          : `Compacted (${r.method}): ${r.tokens_before} → ${r.tokens_after} tokens of history.`;
        log.append(h('p', {class: 'note'}, said));
      } catch (e) { say(e.message, true); }
      return;
    }
    setRunning(true);
    if (st.gone) {
      restart(text);
      return;
    }
    st.sent = st.sent || st.users === 0;
    let res;
    try {
      // POST .../stream, not .../messages: its headers come at once, so a
      // browser that loses the connection mid-turn knows the message
      // arrived and does not send it again.
      res = await request('POST', sess(id, 'stream'), {content: text}, {wait: true, accept: 'text/event-stream'});
    } catch (e) {
      setRunning(false);
      if (!input.value) input.value = text;
      say(e instanceof APIError ? e.message : String(e), true);
      return;
    }
    // The message is in: its turn is read from the log. The stream is
    // drained only so that the daemon sees a client while the turn runs;
    // when it breaks, the log (which resumes) tells the rest.
    try {
      const body = res.body.getReader();
      while (!(await body.read()).done) { /* drained */ }
    } catch { /* the connection dropped: the event log resumes */ }
  }

  // discard asks the daemon to remove the session if its only message
  // never reached a model (the error above says why; the daemon checks
  // and removes in one step); the next message then starts a new one.
  async function discard() {
    try {
      await post(sess(id, 'discard'));
    } catch { return; /* kept (409: a model answered): the next message goes on in it */ }
    st.gone = true;
    st.closed = true;
    if (st.es) st.es.close();
    say('Nothing was kept of this chat: fix what the error says, then send again.');
  }

  // restart opens a new session with the same agent, whose screen sends
  // text as its first message.
  async function restart(text) {
    try {
      const next = await post('/api/v1/sessions', {agent});
      carry = {id: next.session_id, text};
      location.hash = '#/chat/' + encodeURIComponent(next.session_id);
    } catch (e) {
      setRunning(false);
      if (!input.value) input.value = text;
      say(e instanceof APIError ? e.message : String(e), true);
    }
  }

  async function stop() {
    try {
      await post(sess(id, 'cancel'));
    } catch (e) { say(e.message, true); }
  }

  function say(text, bad = false) {
    status.textContent = text;
    status.classList.toggle('bad', bad);
  }

  return () => {
    st.closed = true;
    clearTimeout(st.retry);
    window.removeEventListener('online', online);
    if (st.es) st.es.close();
    main.classList.remove('full');
  };
}

function str(v) { return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v); }

function clip(text) {
  return text.length > MAX_SHOWN ? text.slice(0, MAX_SHOWN) + `\n… (${text.length - MAX_SHOWN} more characters)` : text;
}

function pretty(args) {
  try { return JSON.stringify(JSON.parse(args), null, 2); } catch { return args; }
}
