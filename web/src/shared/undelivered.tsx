import { useState } from 'preact/hooks';
import { client, ok } from './api.ts';
import { deliveryColumns, SearchPager } from './search-results.tsx';
import { isoOf, localOf, SEARCH_PAGE_SIZE } from './search-query.ts';
import { DataTable } from './table.tsx';
import type { Scope } from './types.ts';
import { Empty, Show, useLoad } from './ui.tsx';

const STATES: [string, string][] = [
  ['', 'any but succeeded'],
  ['skipped', 'skipped (endpoint disabled)'],
  ['canceled', 'canceled (endpoint deleted)'],
  ['dead', 'dead (attempts exhausted)'],
  ['pending', 'pending (waiting, or held)'],
  ['leased', 'sending now'],
];

interface Window {
  readonly after: string;
  readonly before: string;
  readonly state: string;
}

const val = (e: Event): string => (e.target as HTMLInputElement).value;

/**
 * The never-delivered view of one endpoint (`GET …/endpoint/{ep}/undelivered`): what was published in a window and
 * did not reach it — skipped while it was disabled, canceled, dead, still pending — each with why, and a link to its
 * delivery's timeline. The window defaults to the last 24 hours.
 */
export function NeverDelivered({ scope, endpointId }: { scope: Scope; endpointId: string }) {
  const [draft, setDraft] = useState<Window>(() => ({
    after: localOf(Date.now() - 86_400_000),
    before: '',
    state: '',
  }));
  const [applied, setApplied] = useState(draft);
  const [iterator, setIterator] = useState<string | null>(null);
  const page = useLoad(
    () =>
      ok(
        client.GET('/api/v1/app/{appId}/endpoint/{endpointId}/undelivered', {
          params: {
            path: { appId: scope.appId, endpointId },
            query: {
              limit: String(SEARCH_PAGE_SIZE),
              iterator,
              after: isoOf(applied.after),
              before: isoOf(applied.before),
              delivery_state: applied.state,
            },
          },
        }),
      ),
    [scope.appId, endpointId, applied, iterator],
  );
  const set = (k: keyof Window) => (e: Event) => setDraft({ ...draft, [k]: val(e) });
  return (
    <section class="card" aria-labelledby="undelivered-h">
      <h2 id="undelivered-h">Never delivered</h2>
      <p class="muted">Messages published in the window that this endpoint did not get, and why.</p>
      <form
        class="filters"
        aria-label="Never delivered window"
        onSubmit={(e) => {
          e.preventDefault();
          setIterator(null);
          setApplied(draft);
        }}
      >
        <label>
          Published after (UTC) <input type="datetime-local" required value={draft.after} onInput={set('after')} />
        </label>
        <label>
          Before (UTC) <input type="datetime-local" value={draft.before} onInput={set('before')} />
        </label>
        <label>
          State{' '}
          <select value={draft.state} onChange={set('state')}>
            {STATES.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Show</button>
      </form>
      <Show of={page}>
        {(p) =>
          p.data.length === 0 ? (
            p.done ? (
              <Empty title="Everything published in this window was delivered.">
                Or nothing was published to this endpoint then: widen the window to look further back.
              </Empty>
            ) : (
              <Empty title="None in the part of the window read so far.">
                Each request reads a bounded number of rows; choose Next page to read on.
              </Empty>
            )
          ) : (
            <DataTable
              label="Never delivered"
              rows={p.data}
              rowKey={(d) => d.msgId}
              columns={deliveryColumns(scope, null)}
            />
          )
        }
      </Show>
      <SearchPager page={page.data} at={iterator} onPage={setIterator} />
    </section>
  );
}
