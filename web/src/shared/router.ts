import { signal } from '@preact/signals';

/** The current route: the part of the URL fragment after `#`, e.g. `/apps/app_1/endpoints`. */
export const route = signal<string>(readHash());

function readHash(): string {
  const h = location.hash.replace(/^#/, '');
  return h.startsWith('/') ? h : '/';
}

window.addEventListener('hashchange', () => {
  // A fragment that is not a route (a portal link's `#key=…`) belongs to whoever reads it (portal/session.ts):
  // rendering `/` for it first would navigate away and lose it.
  if (location.hash.length > 1 && !location.hash.startsWith('#/')) return;
  route.value = readHash();
  // Move focus to the new page's heading, so keyboard and screen-reader users start at the top.
  queueMicrotask(() => document.querySelector<HTMLElement>('main h1')?.focus());
});

/** Goes to `path` (a route such as `/apps`). */
export function navigate(path: string): void {
  location.hash = path;
}

export { href, match, pick, seg, type Route } from './route-match.ts';
