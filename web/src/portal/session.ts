import { token } from '../shared/api.ts';
import { route } from '../shared/router.ts';

/**
 * The portal's access key across reloads: kept in this tab's sessionStorage (never localStorage, never a
 * cookie) with the token's own expiry, so a reload keeps the customer signed in until the token expires,
 * and closing the tab forgets it. A frame whose storage is refused works as before: a reload needs the link
 * again. The trade-off (docs/guides/console.md): a script that runs on this origin could read
 * the key from the tab's storage as it could from memory; the strict CSP (no inline or foreign script) is
 * what keeps such a script out.
 */
const KEY = 'tidings-portal-session';

interface Stored {
  readonly token: string;
  readonly expiresAt: string | null;
}

function session<T>(use: (s: Storage) => T): T | null {
  try {
    return use(sessionStorage);
  } catch {
    return null;
  }
}

/**
 * Takes a link's key (`#key=…`) into memory, removes it from the address bar and the history at once, and
 * drops any stored session of another key. Answers whether the fragment held a key. Runs at load and on
 * every hashchange, so a new link opened in a tab already on the portal replaces the old key.
 */
export function adoptLinkKey(): boolean {
  const key = new URLSearchParams(location.hash.replace(/^#/, '')).get('key');
  if (key === null || key === '') return false;
  if (key !== token.value) forget();
  token.value = key;
  history.replaceState(null, '', `${location.pathname}#/endpoints`);
  route.value = '/endpoints';
  return true;
}

/** The stored key of this tab, if its token has not expired. */
export function restore(now = Date.now()): void {
  if (token.value !== null) return;
  const stored = session((s) => s.getItem(KEY));
  if (stored === null || stored === undefined) return;
  try {
    const s = JSON.parse(stored) as Stored;
    const live = s.expiresAt === null || new Date(s.expiresAt).getTime() > now;
    if (typeof s.token === 'string' && live) token.value = s.token;
    else forget();
  } catch {
    forget();
  }
}

/** Keeps the key in memory in this tab's storage until `expiresAt` (the token's own expiry). */
export function remember(expiresAt: string | null): void {
  if (token.value === null) return;
  const s: Stored = { token: token.value, expiresAt };
  session((store) => store.setItem(KEY, JSON.stringify(s)));
}

/** Drops the stored key (sign-out, a refused or expired token). */
export function forget(): void {
  session((s) => s.removeItem(KEY));
}
