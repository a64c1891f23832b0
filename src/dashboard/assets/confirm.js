// Every action is confirmed in one dialog: what will happen, any value to give, Confirm or Cancel.
// A failed action keeps the dialog open with the reason; leaving the page closes it.
import { replaceContent } from './dom.js';

const dialog = document.getElementById('confirm');
const title = document.getElementById('confirm-title');
const body = document.getElementById('confirm-body');
const errorLine = document.getElementById('confirm-error');
const ok = document.getElementById('confirm-ok');
let pending;

dialog.querySelector('form').addEventListener('submit', async (event) => {
  if (event.submitter?.value !== 'ok' || !pending) return;
  event.preventDefault();
  ok.disabled = true;
  errorLine.hidden = true;
  try {
    await pending.run();
    const done = pending.done;
    pending = undefined;
    dialog.close();
    done?.();
  } catch (error) {
    errorLine.textContent = error.message;
    errorLine.hidden = false;
  } finally {
    ok.disabled = false;
  }
});
dialog.addEventListener('close', () => {
  pending = undefined;
});
// The dialog belongs to the page it was opened on: Back, Forward or a link to another page closes it
// (and nothing is applied), instead of leaving it over a page it does not describe.
window.addEventListener('hashchange', () => {
  if (dialog.open) dialog.close();
});

/** Opens the dialog; `run` applies the action (throws to say why not); `done` after it closed. */
export function confirmAction({ heading, content, confirmLabel = 'Confirm', run, done }) {
  pending = { run, done };
  title.textContent = heading;
  replaceContent(body, content);
  ok.textContent = confirmLabel;
  errorLine.hidden = true;
  dialog.showModal();
  (body.querySelector('input, select') ?? ok).focus();
}
