import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError, type Page } from './api.ts';
import { relative } from './format.ts';
import { pageBack, pageNext, pagerView, type Trail } from './pager.ts';

export { pretty, relative } from './format.ts';

/** What {@link useLoad} answers. */
export interface Loaded<T> {
  readonly data: T | undefined;
  readonly error: unknown;
  readonly loading: boolean;
  readonly reload: () => void;
}

/**
 * Runs `load` when `deps` change (and on `reload`); with `pollMs`, again every pollMs while the page is shown,
 * so live state (attempts, timeline, task progress) appears without a reload. What it answers belongs to the
 * current `deps` only: when they change (another record's page), `data` is undefined until the new record is
 * loaded, so a page never shows one record's values under another's name.
 */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[], pollMs?: number): Loaded<T> {
  const key = JSON.stringify(deps);
  const [state, setState] = useState<{ key: string; data: T | undefined; error: unknown; loading: boolean }>({
    key,
    data: undefined,
    error: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  useEffect(() => {
    let live = true;
    setState((s) => (s.key === key ? { ...s, loading: true } : { key, data: undefined, error: null, loading: true }));
    load().then(
      (data) => {
        if (live) setState({ key, data, error: null, loading: false });
      },
      (error: unknown) => {
        if (live) setState((s) => ({ key, data: s.key === key ? s.data : undefined, error, loading: false }));
      },
    );
    return () => {
      live = false;
    };
  }, [key, tick]);
  useEffect(() => {
    if (pollMs === undefined) return;
    const timer = setInterval(reload, pollMs);
    return () => clearInterval(timer);
  }, [pollMs, reload]);
  const current = state.key === key ? state : { data: undefined, error: null, loading: true };
  return { data: current.data, error: current.error, loading: current.loading, reload };
}

/** A spinner with text, announced politely. */
export const Loading = ({ label = 'Loading…' }: { label?: string }) => (
  <p class="loading" role="status">
    <span class="spinner" aria-hidden="true" />
    {label}
  </p>
);

/** The API's error code and detail (or any other failure), as text; with `retry`, a Retry button. */
export function ErrorBox({ error, retry, busy }: { error: unknown; retry?: () => void; busy?: boolean }) {
  if (error === null || error === undefined) return null;
  const e = error instanceof ApiError ? error : null;
  return (
    <div class="error" role="alert">
      <strong>{e === null ? 'Error' : `${e.status === 0 ? '' : `${e.status} `}${e.code}`}</strong>
      <span>{e === null ? String((error as Error).message ?? error) : e.detail}</span>
      {retry === undefined ? null : (
        <button type="button" class="retry" disabled={busy === true} onClick={retry}>
          {busy === true ? 'Retrying…' : 'Retry'}
        </button>
      )}
    </div>
  );
}

/**
 * What a load shows: a spinner until the first answer, the error with a Retry button when it failed (never
 * an endless spinner), else `children(data)` (under the error of a later refresh, if that failed).
 */
export function Show<T>({
  of,
  label,
  children,
}: {
  of: Loaded<T>;
  label?: string;
  children: (data: T) => ComponentChildren;
}) {
  const error = of.error === null ? null : <ErrorBox error={of.error} retry={of.reload} busy={of.loading} />;
  if (of.data === undefined) return error ?? <Loading label={label} />;
  return (
    <>
      {error}
      {children(of.data)}
    </>
  );
}

/** An empty state: what is missing and what to do next. */
export const Empty = ({ title, children }: { title: string; children?: ComponentChildren }) => (
  <div class="empty">
    <p class="empty-title">{title}</p>
    {children === undefined ? null : <p>{children}</p>}
  </div>
);

/** An instant shown absolute (UTC, to the second) and relative. */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (iso === null || iso === undefined) return <span class="muted">—</span>;
  const abs = iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  return (
    <time dateTime={iso} title={iso}>
      {abs} <span class="muted">({relative(iso)})</span>
    </time>
  );
}

/** An id with a button that copies it. */
export function CopyId({ id, label = 'id' }: { id: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(id);
    } catch {
      const range = document.createRange();
      const node = document.getElementById(`copy-${id}`);
      if (node !== null) {
        range.selectNodeContents(node);
        getSelection()?.removeAllRanges();
        getSelection()?.addRange(range);
      }
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <span class="copy-id">
      <code id={`copy-${id}`}>{id}</code>
      <button type="button" class="icon" aria-label={`Copy ${label} ${id}`} title="Copy" onClick={() => void copy()}>
        {copied ? 'Copied' : 'Copy'}
      </button>
    </span>
  );
}

const BADGE: Record<string, string> = {
  succeeded: 'ok',
  success: 'ok',
  active: 'ok',
  closed: 'ok',
  finished: 'ok',
  healthy: 'ok',
  connected: 'ok',
  connecting: 'warn',
  reconnecting: 'warn',
  down: 'bad',
  pending: 'info',
  leased: 'info',
  sending: 'info',
  running: 'info',
  half_open: 'warn',
  paused: 'warn',
  failing: 'warn',
  dead: 'bad',
  fail: 'bad',
  failed: 'bad',
  open: 'bad',
  disabled: 'bad',
  skipped: 'muted',
  canceled: 'muted',
};

/** A state shown as a coloured badge (the word is always written, colour is not the only cue). */
export const Badge = ({ state }: { state: string }) => (
  <span class={`badge badge-${BADGE[state] ?? 'muted'}`}>{state.replace('_', ' ')}</span>
);

/**
 * Previous / next buttons over the API's iterators. `at` is the iterator of the page shown (null = the first
 * page). The pager keeps the iterators it walked through, so Previous returns to the page it came from and is
 * disabled on the first page (the API gives a `prevIterator` even there).
 */
export function Pager<T>({
  page,
  at,
  onPage,
}: {
  page: Page<T> | undefined;
  at: string | null;
  onPage: (iterator: string | null) => void;
}) {
  const [trail, setTrail] = useState<Trail>([]);
  useEffect(() => {
    if (at === null) setTrail([]);
  }, [at]);
  const { hidden, atStart, atEnd } = pagerView(page, at, trail);
  if (page === undefined || hidden) return null;
  const go = (to: { iterator: string | null; trail: Trail }): void => {
    setTrail(to.trail);
    onPage(to.iterator);
  };
  const back = (): void => go(pageBack(trail));
  const next = (): void => go(pageNext(trail, at, page.iterator));
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={atStart} onClick={back}>
        ← Previous
      </button>
      <button type="button" disabled={atEnd} onClick={next}>
        Next →
      </button>
    </nav>
  );
}

/** What a confirmation dialog asks: its title (naming what is changed), the consequences, the confirm label. */
export interface Ask {
  readonly title: string;
  readonly body: ComponentChildren;
  readonly yes: string;
}

/**
 * A button that runs an API call, shows it is busy, and shows the refusal next to it. With `confirm`, a modal
 * dialog names what will change and asks first (Cancel has the focus).
 */
export function Action({
  label,
  run,
  danger,
  confirm: ask,
  disabled,
}: {
  label: string;
  run: () => Promise<unknown>;
  danger?: boolean;
  confirm?: Ask;
  disabled?: boolean;
}) {
  const [busy, setBusy] = useState(false);
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const go = async (): Promise<void> => {
    setAsking(false);
    setBusy(true);
    setError(null);
    try {
      await run();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span class="action">
      <button
        type="button"
        class={danger === true ? 'danger' : ''}
        disabled={busy || disabled === true}
        aria-busy={busy}
        onClick={() => (ask === undefined ? void go() : setAsking(true))}
      >
        {busy ? `${label}…` : label}
      </button>
      {asking && ask !== undefined ? (
        <ConfirmDialog
          ask={ask}
          danger={danger === true}
          onConfirm={() => void go()}
          onCancel={() => setAsking(false)}
        />
      ) : null}
      <ErrorBox error={error} />
    </span>
  );
}

/** A modal confirmation (the native `<dialog>`: focus kept inside, Escape cancels). */
export function ConfirmDialog({
  ask,
  danger,
  onConfirm,
  onCancel,
}: {
  ask: Ask;
  danger: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  useEffect(() => {
    const dialog = ref.current;
    dialog?.showModal();
    return () => dialog?.close();
  }, []);
  const close = (then: () => void) => (): void => {
    ref.current?.close();
    then();
  };
  return (
    <dialog
      ref={ref}
      class="confirm"
      aria-labelledby={`${id}-t`}
      aria-describedby={`${id}-b`}
      onCancel={(e) => {
        e.preventDefault();
        close(onCancel)();
      }}
    >
      <h2 id={`${id}-t`}>{ask.title}</h2>
      <div id={`${id}-b`}>{ask.body}</div>
      <div class="row">
        <button type="button" autoFocus onClick={close(onCancel)}>
          Cancel
        </button>
        <button type="button" class={danger ? 'danger' : 'primary'} onClick={close(onConfirm)}>
          {ask.yes}
        </button>
      </div>
    </dialog>
  );
}

/** Text in a box, never interpreted as HTML (payloads, headers, receiver bodies). */
export const Pre = ({ text, label }: { text: string; label: string }) => (
  <pre class="text" tabIndex={0} aria-label={label}>
    {text}
  </pre>
);

/** A page heading that takes focus on navigation. */
export function Title({ children, sub }: { children: ComponentChildren; sub?: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  return (
    <header class="page-head">
      <h1 tabIndex={-1} ref={ref}>
        {children}
      </h1>
      {sub === undefined ? null : <p class="muted">{sub}</p>}
    </header>
  );
}

/** Runs `use` on localStorage; null where the browser refuses storage (a third-party iframe may). */
function storage<T>(use: (s: Storage) => T): T | null {
  try {
    return use(localStorage);
  } catch {
    return null;
  }
}

/** Light / dark / system theme switch, kept in localStorage (a preference, not a secret). */
export function ThemeToggle() {
  const [theme, setTheme] = useState(() => storage((s) => s.getItem('tidings-theme')) ?? 'system');
  useEffect(() => {
    if (theme === 'system') delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = theme;
    storage((s) => (theme === 'system' ? s.removeItem('tidings-theme') : s.setItem('tidings-theme', theme)));
  }, [theme]);
  return (
    <label class="theme">
      Theme{' '}
      <select value={theme} onChange={(e) => setTheme((e.target as HTMLSelectElement).value)}>
        <option value="system">System</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  );
}
