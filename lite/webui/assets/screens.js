// The screens other than chat: agent picker, sessions, schedules and
// health. Each fills main; the data comes from the API as JSON and is
// shown as text.

import {h, clear, when, bytes, duration, focusFirst} from './dom.js';
import {get, post, del, sess} from './api.js';

const LAST_AGENT = 'agnx.agent'; // the only thing kept in localStorage with the sign-in flag

// failed shows why a screen could not load.
export function failed(main, e) {
  main.append(h('p', {class: 'msg error', role: 'alert'}, e.message));
}

// pickerScreen lists the agents; choosing one starts a session with it.
export async function pickerScreen(main, go) {
  const list = h('div', {class: 'cards'});
  clear(main).append(h('h1', {}, 'Start a chat'), list);
  const {agents = [], invalid = []} = await get('/api/v1/agents');
  const last = localStorage.getItem(LAST_AGENT);
  agents.sort((a, b) => (b.name === last) - (a.name === last));
  for (const a of agents) {
    list.append(h('button', {type: 'button', class: 'card agent' + (a.name === last ? ' last' : ''),
      onclick: async (e) => {
        e.currentTarget.disabled = true;
        try {
          const s = await post('/api/v1/sessions', {agent: a.name});
          localStorage.setItem(LAST_AGENT, a.name);
          go('#/chat/' + encodeURIComponent(s.session_id));
        } catch (err) {
          e.target.disabled = false;
          failed(main, err);
        }
      }},
    h('strong', {}, a.name), h('span', {}, a.description || '')));
  }
  if (!agents.length) list.append(h('p', {}, 'No agent loads. Add one with “agnx-lite agent new NAME”.'));
  for (const a of invalid) {
    list.append(h('div', {class: 'card invalid'}, h('strong', {}, a.name), h('span', {}, a.error)));
  }
  focusFirst(list.querySelector('button'));
}

// sessionsScreen lists the sessions, newest first, to open, export or
// delete: a subagent's session right under the session that spawned it.
export async function sessionsScreen(main) {
  const list = h('ul', {class: 'rows'});
  clear(main).append(h('h1', {}, 'Sessions'), list);
  const {sessions = []} = await get('/api/v1/sessions');
  if (!sessions.length) list.append(h('li', {}, 'No sessions yet.'));
  for (const [s, depth] of treeOrder(sessions)) list.append(sessionRow(s, depth));
}

// treeOrder puts each session's subagents under it (depth 1, theirs at 2,
// ...), each level in the list's order. One whose parent is not listed
// (deleted) stays at the top, as does any session of a parent loop, so
// every session shows once.
function treeOrder(sessions) {
  const ids = new Set(sessions.map((s) => s.session_id));
  const kids = new Map();
  for (const s of sessions) {
    if (s.parent_id && s.parent_id !== s.session_id && ids.has(s.parent_id)) {
      if (!kids.has(s.parent_id)) kids.set(s.parent_id, []);
      kids.get(s.parent_id).push(s);
    }
  }
  const out = [], done = new Set();
  const add = (s, depth) => {
    done.add(s.session_id);
    out.push([s, depth]);
    for (const c of kids.get(s.session_id) || []) if (!done.has(c.session_id)) add(c, depth + 1);
  };
  for (const s of sessions) if (!done.has(s.session_id) && !ids.has(s.parent_id)) add(s, 0);
  for (const s of sessions) if (!done.has(s.session_id)) add(s, 0);
  return out;
}

function sessionRow(s, depth) {
  const id = s.session_id;
  const href = '#/chat/' + encodeURIComponent(id);
  const actions = h('div', {class: 'actions'},
    h('a', {class: 'button primary', href}, 'Open'),
    h('a', {class: 'button', href: sess(id, 'export'), download: id + '.jsonl'}, 'Export'),
    h('button', {type: 'button', class: 'danger', onclick: ask}, 'Delete'));
  const row = h('li', {class: 'session' + (depth ? ' child' : ''), 'data-id': id, 'data-parent': s.parent_id,
    'aria-level': depth ? depth + 1 : undefined},
    h('a', {class: 'what', href},
      h('strong', {}, s.agent), ' ', h('span', {class: 'badge ' + s.status}, s.status),
      s.parent_id && [' ', h('span', {class: 'badge subagent'}, 'subagent')],
      s.parent_id && !depth && h('span', {class: 'meta'}, 'subagent of ' + s.parent_id),
      h('span', {class: 'preview'}, s.preview || '(no messages)'),
      h('span', {class: 'meta'}, `${when(s.updated_at)} · ${s.turns} turn${s.turns === 1 ? '' : 's'}`)),
    actions);
  // Set through the CSSOM, which the CSP allows (a style attribute it would not).
  if (depth) row.style.setProperty('--depth', Math.min(depth, 4));
  function ask() {
    const keep = h('button', {type: 'button', onclick: () => confirm.replaceWith(actions)}, 'Keep');
    const confirm = h('div', {class: 'actions confirm', role: 'group'},
      h('span', {}, 'Delete this session and its messages?'),
      h('button', {type: 'button', class: 'danger', onclick: async (e) => {
        e.currentTarget.disabled = true;
        try {
          await del(sess(id));
          row.remove();
        } catch (err) {
          confirm.replaceWith(actions);
          row.append(h('p', {class: 'msg error'}, err.message));
        }
      }}, 'Delete'),
      keep);
    actions.replaceWith(confirm);
    keep.focus();
  }
  return row;
}

// schedulesScreen lists the schedules agents made.
export async function schedulesScreen(main) {
  const list = h('ul', {class: 'rows'});
  clear(main).append(h('h1', {}, 'Schedules'), list);
  let data;
  try {
    data = await get('/api/v1/schedules?all=true');
  } catch (e) {
    if (e.status === 404) return list.append(h('li', {}, 'This daemon keeps no schedules.'));
    throw e;
  }
  const all = data.schedules || [];
  if (!all.length) list.append(h('li', {}, 'No schedules yet: agents make them with their schedule tool.'));
  for (const s of all) {
    const sc = s.schedule || {};
    const timing = sc.at ? 'once at ' + when(sc.at)
      : sc.every_seconds ? 'every ' + duration(sc.every_seconds)
        : sc.cron ? 'cron ' + sc.cron + (sc.tz ? ' (' + sc.tz + ')' : '') : '';
    const p = s.payload || {};
    list.append(h('li', {class: 'schedule'},
      h('div', {}, h('strong', {}, s.agent), ' ', h('span', {class: 'badge ' + s.status}, s.status), ' ', h('span', {class: 'meta'}, timing)),
      h('div', {class: 'preview'}, (p.kind ? p.kind + ': ' : '') + (p.text || '')),
      h('div', {class: 'meta'}, [
        s.next ? 'next ' + when(s.next) : '',
        `${s.runs || 0} run${s.runs === 1 ? '' : 's'}`,
        s.failures ? `${s.failures} failed` : '',
      ].filter(Boolean).join(' · '))));
  }
}

// healthScreen shows what doctor would say that the running daemon knows.
export async function healthScreen(main) {
  clear(main).append(h('h1', {}, 'Health'));
  let hl;
  try {
    hl = await get('/api/v1/health');
  } catch (e) {
    if (e.status === 404) return main.append(h('p', {}, 'This daemon does not report its health: update agnx-lite.'));
    throw e;
  }
  const facts = [
    ['Version', hl.version],
    ['Up for', duration(hl.uptime_seconds || 0)],
    ['Memory (RSS)', bytes(hl.rss_bytes || 0)],
    ['Agents loaded', `${hl.agents_loaded ?? '?'} of ${hl.agents_defined ?? '?'}`],
  ];
  main.append(h('dl', {class: 'facts'}, facts.map(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v ?? ''))])));
  const checks = h('ul', {class: 'rows checks'});
  for (const c of hl.checks || []) {
    checks.append(h('li', {class: 'check ' + c.status},
      h('span', {class: 'badge ' + c.status}, c.status), ' ', h('strong', {}, c.name),
      h('div', {class: 'preview'}, c.detail || '')));
  }
  if (!checks.firstChild) checks.append(h('li', {}, 'No checks reported.'));
  main.append(h('h2', {}, 'Checks'), checks,
    h('button', {type: 'button', onclick: () => healthScreen(main).catch((e) => failed(main, e))}, 'Refresh'));
}

// signinScreen asks for the API token; done runs once the cookie is set.
export function signinScreen(main, done) {
  const input = h('input', {type: 'password', id: 'token', name: 'token', autocomplete: 'current-password',
    required: true, 'aria-describedby': 'signin-help'});
  const msg = h('p', {class: 'msg error', role: 'alert', hidden: true});
  const btn = h('button', {type: 'submit', class: 'primary'}, 'Sign in');
  const form = h('form', {class: 'signin', onsubmit: async (e) => {
    e.preventDefault();
    btn.disabled = true;
    msg.hidden = true;
    try {
      await post('/ui/signin', {token: input.value}, {quiet401: true});
      input.value = '';
      done();
    } catch (err) {
      msg.textContent = err.message;
      msg.hidden = false;
      input.select();
    } finally {
      btn.disabled = false;
    }
  }},
  h('h1', {}, 'Sign in'),
  h('label', {for: 'token'}, 'API token'),
  input,
  h('p', {id: 'signin-help', class: 'meta'}, 'The server.api_token of this daemon (agnx.yaml or agnx.env). It is not kept in this browser: a cookie is.'),
  msg, btn);
  clear(main).append(form);
  input.focus();
}
