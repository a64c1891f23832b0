// The dashboard's JSON API, with the token the page was given (kept for this browser tab only).

const TOKEN_KEY = 'callisto-dashboard-token';

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** A token given in the address (`#token=…`, as `callisto dashboard --token` prints it) is taken and removed. */
export function takeTokenFromAddress() {
  const match = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (!match) return;
  setToken(decodeURIComponent(match[1]));
  history.replaceState(null, '', `${location.pathname}#/`);
}

/** The secret the dashboard wrote into this page: requests that change something carry it. */
const PAGE_SECRET = document.querySelector('meta[name="callisto-page"]')?.getAttribute('content') ?? '';

async function request(method, path, body) {
  const headers = { accept: 'application/json', 'x-callisto-page': PAGE_SECRET };
  const current = token();
  if (current) headers.authorization = `Bearer ${current}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'the dashboard does not answer (is `callisto dashboard` still running?)');
  }
  let data;
  try {
    data = await response.json();
  } catch {
    throw new ApiError(response.status, `the dashboard answered ${response.status} without JSON`);
  }
  if (!response.ok) throw new ApiError(response.status, data?.error ?? `error ${response.status}`);
  return data;
}

export const get = (path) => request('GET', path);
export const post = (path, body) => request('POST', path, body);

export function serviceQuery(name, key) {
  const params = new URLSearchParams({ name });
  if (key) {
    params.set('version', key.version);
    params.set('group', key.group);
  }
  return params.toString();
}
