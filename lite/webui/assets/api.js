// The daemon's HTTP API (docs/openapi.yaml). Requests carry the sign-in
// cookie by themselves (same origin); nothing here stores a token.

// APIError is a failed request: status and the problem's one-sentence
// detail.
export class APIError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

// onUnauthorized is called when a request answers 401 (the cookie expired
// or the token changed): the app shows the sign-in screen.
export let onUnauthorized = () => {};
export function setUnauthorized(f) { onUnauthorized = f; }

const TIMEOUT_MS = 30000;

// call sends a request and returns the decoded JSON answer (null for 204).
// body, when given, is sent as JSON. opts.wait: no time limit (a turn).
export async function call(method, path, body, opts = {}) {
  const res = await send(method, path, body, opts);
  if (res.status === 204) return null;
  const type = res.headers.get('Content-Type') || '';
  return type.includes('json') ? res.json() : null;
}

// send sends a request and returns the response once it is known to be a
// success (its headers came); it throws an APIError otherwise.
export async function send(method, path, body, opts = {}) {
  const init = {method, headers: {Accept: opts.accept || 'application/json'}, credentials: 'same-origin', cache: 'no-store'};
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  if (!opts.wait) init.signal = AbortSignal.timeout(TIMEOUT_MS);
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new APIError(0, e.name === 'TimeoutError'
      ? 'The daemon did not answer in time: check that it is running, then try again.'
      : 'The daemon cannot be reached: check the connection, then try again.');
  }
  if (res.status === 401 && !opts.quiet401) onUnauthorized();
  if (!res.ok) throw new APIError(res.status, await detail(res));
  return res;
}

async function detail(res) {
  try {
    const p = await res.json();
    if (p && typeof p.detail === 'string' && p.detail) return p.detail.slice(0, 500);
    if (p && typeof p.title === 'string') return p.title.slice(0, 200);
  } catch { /* not JSON: say the status */ }
  return `The daemon answered ${res.status} ${res.statusText}.`;
}

export const get = (path, opts) => call('GET', path, undefined, opts);
export const post = (path, body = {}, opts) => call('POST', path, body, opts);
export const del = (path) => call('DELETE', path);

// sess is the path of a session, or of one of its parts.
export const sess = (id, part = '') => '/api/v1/sessions/' + encodeURIComponent(id) + (part ? '/' + part : '');
