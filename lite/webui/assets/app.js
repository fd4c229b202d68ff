// agnx-lite's web UI: sign in, pick an agent, chat, and see sessions,
// schedules, usage and health. Plain ES modules, no framework and no build
// step; every screen is built with DOM calls (dom.js), model output
// through md.js, which never parses HTML.

import {h, clear} from './dom.js';
import {get, post, setUnauthorized} from './api.js';
import {chatScreen} from './chat.js';
import {pickerScreen, sessionsScreen, schedulesScreen, healthScreen, signinScreen, failed} from './screens.js';
import {usageScreen} from './usage.js';

// SIGNED_IN marks that this browser signed in (the cookie itself is
// HttpOnly): it shows the Sign out button. No token is ever stored.
const SIGNED_IN = 'agnx.signedin';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
let leave = null; // stops the current screen (the chat's event stream)

const screens = {
  '': pickerScreen,
  sessions: sessionsScreen,
  schedules: schedulesScreen,
  usage: usageScreen,
  health: healthScreen,
};

function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

async function route() {
  if (leave) { leave(); leave = null; }
  document.title = 'agnx-lite';
  const [name, arg] = location.hash.replace(/^#\/?/, '').split('/');
  for (const a of nav.querySelectorAll('a')) {
    const on = a.dataset.screen === (name === 'chat' ? '' : name || '');
    if (on) {
      a.setAttribute('aria-current', 'page');
      a.scrollIntoView({block: 'nearest', inline: 'nearest'}); // the narrow nav scrolls
    }
    else a.removeAttribute('aria-current');
  }
  main.classList.remove('full');
  if (name === 'chat' && arg) {
    leave = chatScreen(main, decodeURIComponent(arg));
    return;
  }
  const screen = screens[name] || screens[''];
  // Each screen fills its own box: one still loading when the reader
  // moves on fills a box no longer shown.
  const box = h('div', {class: 'screen'});
  clear(main).append(box);
  try {
    await screen(box, go);
  } catch (e) {
    if (e.status !== 401) failed(box, e);
  }
  // Keyboard users start at the screen (unless it focused a control).
  if (!main.contains(document.activeElement)) main.focus({preventScroll: true});
}

function signin() {
  if (leave) { leave(); leave = null; }
  localStorage.removeItem(SIGNED_IN);
  nav.hidden = true;
  signinScreen(main, () => {
    localStorage.setItem(SIGNED_IN, '1');
    start();
  });
}

async function signout() {
  try { await post('/ui/signout'); } catch { /* the cookie is cleared or gone */ }
  localStorage.removeItem(SIGNED_IN);
  start();
}

async function start() {
  try {
    await get('/api/v1/agents', {quiet401: true});
  } catch (e) {
    if (e.status === 401) return signin();
    clear(main);
    return failed(main, e);
  }
  nav.hidden = false;
  document.getElementById('signout').hidden = !localStorage.getItem(SIGNED_IN);
  route();
}

setUnauthorized(signin);
window.addEventListener('hashchange', route);
document.getElementById('signout').addEventListener('click', signout);
start();

