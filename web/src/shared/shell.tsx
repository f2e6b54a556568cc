import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, client, ok, token } from './api.ts';
import type { Me } from './types.ts';
import { ErrorBox, ThemeToggle } from './ui.tsx';

/** Header, navigation and main area, with a skip link for keyboard users. */
export function Shell({
  brand,
  nav,
  children,
  onSignOut,
}: {
  brand: ComponentChildren;
  nav: ComponentChildren;
  children: ComponentChildren;
  onSignOut?: () => void;
}) {
  return (
    <>
      <a
        class="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.querySelector<HTMLElement>('main h1')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <div class="brand">{brand}</div>
        <nav aria-label="Main">{nav}</nav>
        <div class="top-end">
          <ThemeToggle />
          {onSignOut === undefined ? null : (
            <button type="button" onClick={onSignOut}>
              Sign out
            </button>
          )}
        </div>
      </header>
      <main id="main">{children}</main>
    </>
  );
}

/** The console's sign-in: a token typed or pasted, kept in memory only; checked with /api/v1/auth/me. */
export function SignIn({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    token.value = value.trim();
    try {
      const me = await ok(client.GET('/api/v1/auth/me'));
      if (me.kind !== 'admin' && me.kind !== 'operator_key')
        throw new ApiError(
          403,
          'forbidden',
          'This token belongs to one application: open its portal (/app-portal) instead.',
        );
      setValue('');
      onSignedIn(me);
    } catch (err) {
      token.value = null;
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="signin">
      <form class="card form" onSubmit={(e) => void submit(e)} aria-label="Sign in">
        <h1 tabIndex={-1}>Tidings console</h1>
        <p>
          Sign in with the admin token (printed once by the first <code>npm start</code>, or{' '}
          <code>TIDINGS_API_TOKEN</code>) or an operator API key. It stays in this tab's memory only: a reload asks
          again.
        </p>
        <label>
          API token{' '}
          <input
            name="token"
            type="password"
            autoComplete="off"
            required
            autoFocus
            value={value}
            onInput={(e) => setValue((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <ErrorBox error={error} />
      </form>
    </main>
  );
}
