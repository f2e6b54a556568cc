import type { Command } from 'commander';
import { MAX_PAGE, type ApiClient, type Page } from './api-client.ts';
import { note, printJson, printLine, table, type CliIo } from './io.ts';
import { wholeNumber } from './options.ts';

/** Paging options of the list commands. */
export interface PageOptions {
  readonly limit?: number;
  readonly iterator?: string;
  readonly json?: boolean;
}

/** Adds `--limit` and `--iterator` to a list command. */
export function withPaging(command: Command): Command {
  return command
    .option('--limit <n>', `items per page (1–${MAX_PAGE}, default 50)`, wholeNumber(1, MAX_PAGE))
    .option('--iterator <iterator>', 'continue from the iterator a previous page printed');
}

/** One column of a listed item: its header and how to show it. */
export type Column<T> = readonly [header: string, show: (item: T) => string];

/**
 * Reads one page of a list route and prints it: `--json` the page as the API gave it; otherwise a table,
 * and on stderr the `--iterator` of the next page when there is one.
 */
export async function printPage<T>(
  io: CliIo,
  api: ApiClient,
  path: string,
  query: Readonly<Record<string, string | number | boolean | readonly string[] | undefined>>,
  o: PageOptions,
  columns: readonly Column<T>[],
): Promise<void> {
  const page = await api.get<Page<T>>(path, { ...query, limit: o.limit ?? 50, iterator: o.iterator });
  if (o.json === true) {
    printJson(io, page);
    return;
  }
  for (const line of table(
    columns.map(([h]) => h),
    page.data.map((item) => columns.map(([, show]) => show(item))),
  ))
    printLine(io, line);
  if (!page.done && page.iterator !== null) note(io, `more: --iterator ${page.iterator}`);
}

/** Prints an object: `--json` as JSON, else `name: value` lines (nested values as JSON). */
export function printRecord(io: CliIo, value: Readonly<Record<string, unknown>>, json: boolean | undefined): void {
  if (json === true) {
    printJson(io, value);
    return;
  }
  const width = Math.max(...Object.keys(value).map((k) => k.length));
  const shown = (v: unknown): string =>
    typeof v === 'string' ? v : v === null || v === undefined ? '-' : JSON.stringify(v);
  for (const [key, v] of Object.entries(value)) {
    printLine(io, `${`${key}:`.padEnd(width + 1)}  ${shown(v)}`);
  }
}

/** A nullable value as table text. */
export const text = (value: string | number | boolean | null | undefined): string =>
  value === null || value === undefined || value === '' ? '-' : String(value);
