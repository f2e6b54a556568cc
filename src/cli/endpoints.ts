import { Command } from 'commander';
import { seg } from './api-client.ts';
import { printJson, printLine, table, type CliIo } from './io.ts';
import { printPage, printRecord, text, withPaging, type PageOptions } from './listing.ts';
import { apiClient, withApiOptions } from './options.ts';

/** `GET /api/v1/app` items (Svix `ApplicationOut`). */
interface ApplicationOut {
  readonly id: string;
  readonly uid: string | null;
  readonly name: string;
  readonly throttleRate: number | null;
  readonly createdAt: string;
}

/** `GET …/endpoint` items (Svix `EndpointOut`). */
interface EndpointOut {
  readonly id: string;
  readonly uid: string | null;
  readonly url: string;
  readonly disabled: boolean;
  readonly eventTypes: string[] | null;
  readonly channels: string[] | null;
  readonly createdAt: string;
}

/** `GET …/endpoint/{ep}/health` (Tidings; docs/reference/api.md). */
interface HealthOut {
  readonly status: string;
  readonly statusReason: string | null;
  readonly breaker: { readonly state: string; readonly consecutiveFailures: number; readonly openUntil: string | null };
  readonly failingSince: string | null;
  readonly lastSuccessAt: string | null;
  readonly throttledUntil: string | null;
  readonly inFlight: number;
  readonly currentRatePerS: number;
  readonly deliveries: Readonly<Record<string, number>>;
  readonly windows: readonly {
    readonly windowS: number;
    readonly attempts: number;
    readonly succeeded: number;
    readonly failed: number;
    readonly successRatio: number | null;
    readonly p50LatencyMs: number | null;
    readonly p99LatencyMs: number | null;
  }[];
}

type Options = PageOptions & { readonly url?: string; readonly token?: string; readonly timeout?: string };

/** `tidings apps`: the applications (operator credentials). */
export function appsCommand(io: CliIo): Command {
  return withPaging(
    withApiOptions(new Command('apps').description('list the applications (operator credential)')),
  ).action(async (o: Options) => {
    await printPage<ApplicationOut>(io, apiClient(io, o), '/api/v1/app', {}, o, [
      ['ID', (a) => a.id],
      ['UID', (a) => text(a.uid)],
      ['NAME', (a) => a.name],
      ['CREATED', (a) => a.createdAt],
    ]);
  });
}

/** The health read model as lines: status, breaker, recent windows, deliveries by state. */
export function healthLines(h: HealthOut): string[] {
  const lines = [
    `status: ${h.status}${h.statusReason === null ? '' : ` (${h.statusReason})`}`,
    `breaker: ${h.breaker.state}, ${h.breaker.consecutiveFailures} failures in a row` +
      (h.breaker.openUntil === null ? '' : `, open until ${h.breaker.openUntil}`),
    `last success: ${text(h.lastSuccessAt)}; failing since: ${text(h.failingSince)}; ` +
      `throttled until: ${text(h.throttledUntil)}`,
    `in flight: ${h.inFlight}; rate now: ${h.currentRatePerS}/s`,
    `deliveries: ${
      Object.entries(h.deliveries)
        .map(([state, n]) => `${state} ${n}`)
        .join(', ') || '-'
    }`,
  ];
  const ratio = (r: number | null): string => (r === null ? '-' : `${(r * 100).toFixed(1)}%`);
  const windowName = (s: number): string => (s % 3600 === 0 ? `${s / 3600}h` : `${Math.round(s / 60)}m`);
  return [
    ...lines,
    ...table(
      ['WINDOW', 'ATTEMPTS', 'OK', 'FAILED', 'SUCCESS', 'P50', 'P99'],
      h.windows.map((w) => [
        windowName(w.windowS),
        String(w.attempts),
        String(w.succeeded),
        String(w.failed),
        ratio(w.successRatio),
        w.p50LatencyMs === null ? '-' : `${w.p50LatencyMs}ms`,
        w.p99LatencyMs === null ? '-' : `${w.p99LatencyMs}ms`,
      ]),
    ),
  ];
}

/** `tidings endpoints list|show|health|pause|resume`. */
export function endpointsCommand(io: CliIo): Command {
  const endpoints = new Command('endpoints').description(
    "an application's endpoints: list, show, health, pause, resume",
  );
  const path = (app: string, ep?: string): string =>
    `/api/v1/app/${seg(app)}/endpoint${ep === undefined ? '' : `/${seg(ep)}`}`;
  endpoints.addCommand(
    withPaging(
      withApiOptions(
        new Command('list')
          .description('list the endpoints of an application')
          .argument('<app>', 'application id or uid'),
      ),
    ).action(async (app: string, o: Options) => {
      await printPage<EndpointOut>(io, apiClient(io, o), path(app), {}, o, [
        ['ID', (e) => e.id],
        ['UID', (e) => text(e.uid)],
        ['URL', (e) => e.url],
        ['DISABLED', (e) => (e.disabled ? 'yes' : 'no')],
        ['EVENT TYPES', (e) => text(e.eventTypes?.join(','))],
        ['CHANNELS', (e) => text(e.channels?.join(','))],
      ]);
    }),
  );
  endpoints.addCommand(
    withApiOptions(
      new Command('show')
        .description('show one endpoint (never its secret)')
        .argument('<app>', 'application id or uid')
        .argument('<endpoint>', 'endpoint id or uid'),
    ).action(async (app: string, ep: string, o: Options) => {
      printRecord(io, await apiClient(io, o).get<Record<string, unknown>>(path(app, ep)), o.json);
    }),
  );
  endpoints.addCommand(
    withApiOptions(
      new Command('health')
        .description('breaker, failures, latency and success over recent windows')
        .argument('<app>', 'application id or uid')
        .argument('<endpoint>', 'endpoint id or uid'),
    ).action(async (app: string, ep: string, o: Options) => {
      const health = await apiClient(io, o).get<HealthOut>(`${path(app, ep)}/health`);
      if (o.json === true) printJson(io, health);
      else for (const line of healthLines(health)) printLine(io, line);
    }),
  );
  for (const action of ['pause', 'resume'] as const) {
    const what =
      action === 'pause'
        ? 'hold its deliveries pending, without attempts, until resumed'
        : "let a paused endpoint's deliveries go again";
    endpoints.addCommand(
      withApiOptions(
        new Command(action)
          .description(`${action} an endpoint: ${what}`)
          .argument('<app>', 'application id or uid')
          .argument('<endpoint>', 'endpoint id or uid'),
      ).action(async (app: string, ep: string, o: Options) => {
        const api = apiClient(io, o);
        await api.json('POST', `${path(app, ep)}/${action}`);
        const health = await api.get<HealthOut>(`${path(app, ep)}/health`);
        if (o.json === true) printJson(io, { endpointId: ep, action, status: health.status });
        else printLine(io, `${ep}: ${action === 'pause' ? 'paused' : 'resumed'} (status ${health.status})`);
      }),
    );
  }
  return endpoints;
}
