// The dashboard page: a router over the address's #fragment, one view mounted at a time, refreshed
// every POLL_MS from the JSON API without reloading the page.
import { ApiError, takeTokenFromAddress } from './api.js';
import { h, replaceContent } from './dom.js';
import { mountConfig } from './views/config.js';
import { mountActions, mountOverview } from './views/service.js';
import { mountServices } from './views/services.js';
import { mountToken } from './views/token.js';
import { mountTry } from './views/try.js';

const POLL_MS = 1500;

const main = document.getElementById('main');
const live = document.getElementById('live');
let current;
let timer;
let generation = 0;

/** `#/service/<name>/<tab>` -> { view, name, tab } */
function route() {
  const path = location.hash.replace(/^#/, '') || '/';
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'service' && parts[1])
    return { view: 'service', name: parts[1], tab: parts[2] ?? 'overview' };
  return { view: 'services' };
}

function showError(error) {
  if (error instanceof ApiError && error.status === 401) {
    navigateToken(error.message);
    return;
  }
  const banner = main.querySelector('.view-error');
  if (banner) {
    banner.hidden = false;
    // an alert is read out when it changes: the same error at every poll is said once
    if (banner.textContent !== error.message) banner.textContent = error.message;
  }
  live.textContent = error.status === 0 ? 'disconnected' : '';
}

function navigateToken(message) {
  stop();
  current = mountToken(main, message, () => start());
}

async function refresh(mine) {
  try {
    await current?.update();
    if (mine !== generation) return;
    const banner = main.querySelector('.view-error');
    if (banner && !banner.dataset.sticky) banner.hidden = true;
    live.textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    if (mine === generation) showError(error);
  }
}

function stop() {
  generation++;
  clearTimeout(timer);
  current?.unmount?.();
  current = undefined;
}

function schedule(mine) {
  timer = setTimeout(async () => {
    if (mine !== generation) return;
    await refresh(mine);
    if (mine === generation) schedule(mine);
  }, POLL_MS);
}

async function start() {
  stop();
  const mine = generation;
  const where = route();
  replaceContent(main);
  const banner = h('p', { class: 'error view-error', role: 'alert', hidden: true });
  if (where.view === 'services') current = mountServices(main, banner);
  else if (where.tab === 'try') current = mountTry(main, banner, where.name);
  else if (where.tab === 'config') current = mountConfig(main, banner, where.name);
  else if (where.tab === 'actions') current = mountActions(main, banner, where.name);
  else current = mountOverview(main, banner, where.name);
  await refresh(mine);
  if (mine === generation) schedule(mine);
}

takeTokenFromAddress();
window.addEventListener('hashchange', () => {
  void start();
  main.focus({ preventScroll: true });
});
void start();
