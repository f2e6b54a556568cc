import { useState } from 'preact/hooks';
import { client, ok } from './api.ts';
import { navigate, route } from './router.ts';
import { SearchPager, SearchRows } from './search-results.tsx';
import { localOf, readSearch, searchCall, searchRoute, type SearchForm } from './search-query.ts';
import type { Endpoint, Scope } from './types.ts';
import { Empty, Show, Title, useLoad } from './ui.tsx';

const KINDS: [SearchForm['kind'], string][] = [
  ['msg', 'Messages'],
  ['delivery', 'Deliveries'],
  ['attempt', 'Attempts'],
];
const STATES: [string, string][] = [
  ['', 'any'],
  ['undelivered', 'not delivered (any but succeeded)'],
  ['pending', 'pending'],
  ['leased', 'sending'],
  ['succeeded', 'succeeded'],
  ['dead', 'dead'],
  ['skipped', 'skipped'],
  ['canceled', 'canceled'],
];
const CODES: [string, string][] = [
  ['', 'any'],
  ['200', '2xx'],
  ['300', '3xx'],
  ['400', '4xx'],
  ['500', '5xx'],
  ['0', 'no response'],
];
const RESULTS: [string, string][] = [
  ['', 'any'],
  ['0', 'succeeded'],
  ['2', 'failed'],
];

const val = (e: Event): string => (e.target as HTMLInputElement).value;

/** A `<select>` of `options` labelled `label`. */
function Choice({
  label,
  value,
  options,
  onChange,
  hint,
}: {
  label: string;
  value: string;
  options: readonly (readonly [string, string])[];
  onChange: (v: string) => void;
  hint?: string;
}) {
  return (
    <label>
      {label}{' '}
      <select value={value} onChange={(e) => onChange(val(e))}>
        {options.map(([v, l]) => (
          <option key={v} value={v}>
            {l}
          </option>
        ))}
      </select>
      {hint === undefined ? null : <span class="hint">{hint}</span>}
    </label>
  );
}

/** The search form: what to search, the window, and the filters that apply to it. */
function SearchFormView({
  initial,
  endpoints,
  onSearch,
}: {
  initial: SearchForm;
  endpoints: readonly Endpoint[];
  onSearch: (f: SearchForm) => void;
}) {
  const [f, setF] = useState(initial);
  const set = (k: keyof SearchForm) => (v: string) => setF({ ...f, [k]: v });
  const text = (k: keyof SearchForm, label: string, placeholder?: string) => (
    <label>
      {label} <input name={k} value={f[k]} placeholder={placeholder} onInput={(e) => set(k)(val(e))} />
    </label>
  );
  const endpointOptions: [string, string][] = [
    ['', f.kind === 'attempt' ? 'choose one' : 'all'],
    ...endpoints.map((ep): [string, string] => [ep.id, ep.url]),
  ];
  return (
    <form
      class="filters"
      aria-label="Search the delivery log"
      onSubmit={(e) => {
        e.preventDefault();
        onSearch(f);
      }}
    >
      <Choice label="Look for" value={f.kind} options={KINDS} onChange={set('kind')} />
      <label>
        After (UTC){' '}
        <input type="datetime-local" name="after" required value={f.after} onInput={(e) => set('after')(val(e))} />
      </label>
      <label>
        Before (UTC){' '}
        <input type="datetime-local" name="before" value={f.before} onInput={(e) => set('before')(val(e))} />
      </label>
      {text('eventType', 'Event type', 'invoice.paid')}
      {text('channel', 'Channel')}
      {text('tag', 'Tag')}
      {f.kind === 'msg' ? null : (
        <Choice
          label="Endpoint"
          value={f.endpoint}
          options={endpointOptions}
          onChange={set('endpoint')}
          {...(f.kind === 'attempt' ? { hint: 'Attempts are searched per endpoint' } : {})}
        />
      )}
      {f.kind === 'delivery' ? (
        <Choice label="Delivery state" value={f.state} options={STATES} onChange={set('state')} />
      ) : null}
      {f.kind === 'attempt' ? (
        <Choice label="Result" value={f.result} options={RESULTS} onChange={set('result')} />
      ) : null}
      {f.kind === 'msg' ? null : (
        <Choice
          label={f.kind === 'delivery' ? 'Last response' : 'Response'}
          value={f.code}
          options={CODES}
          onChange={set('code')}
        />
      )}
      {f.kind === 'msg' ? null : text('statusCode', 'Status code', '503')}
      {text('field', 'Payload field', 'customer.id')}
      {text('value', 'Field value', 'cus_123')}
      <button type="submit" class="primary">
        Search
      </button>
    </form>
  );
}

/**
 * Search over the delivery log (docs/reference/api.md, "Search"): messages, deliveries or attempts of one window,
 * with the API's filters; a page of results at a time, each linking to its record. The search lives in the page's
 * address, so opening a result and coming back returns to the same page of results.
 */
export function SearchPage({ scope }: { scope: Scope }) {
  const [defaultAfter] = useState(() => localOf(Date.now() - 86_400_000));
  const { form, iterator } = readSearch(route.value, defaultAfter);
  const call = searchCall(scope.appId, form, iterator);
  const endpoints = useLoad(
    () =>
      ok(
        client.GET('/api/v1/app/{appId}/endpoint', {
          params: { path: { appId: scope.appId }, query: { limit: '250' } },
        }),
      ),
    [scope.appId],
  );
  const results = useLoad(() => (call === null ? Promise.resolve(null) : call()), [scope.appId, form, iterator]);
  const go = (f: SearchForm, at: string | null): void => navigate(searchRoute(scope.base, f, at));
  return (
    <>
      <Title sub="Messages, deliveries and attempts of one window of time (at most 7 days by default), newest first.">
        Search
      </Title>
      <SearchFormView
        key={JSON.stringify(form)}
        initial={form}
        endpoints={endpoints.data?.data ?? []}
        onSearch={(f) => go(f, null)}
      />
      <Show of={results} label="Searching…">
        {(answer) =>
          answer === null ? (
            <Empty title="Choose an endpoint.">Attempts are searched per endpoint: choose one above.</Empty>
          ) : (
            <SearchRows scope={scope} answer={answer} endpoints={endpoints.data?.data ?? []} />
          )
        }
      </Show>
      <SearchPager page={results.data?.page} at={iterator} onPage={(at) => go(form, at)} />
    </>
  );
}
