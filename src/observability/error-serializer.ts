/**
 * How an error reaches a log line (`err`): what says what went wrong, and nothing it merely holds. pino's
 * standard serializer copies every enumerable property, so an error of the `pg` pool carried its whole client
 * (`err.client`: the connection's cancel key, every prepared statement's text, 16 KB a line). This one keeps a
 * fixed list of fields, of primitive values only, and follows `cause` and an AggregateError's `errors` a few
 * levels down.
 */

/**
 * The fields kept: the error's own (`name` as `type`, `message`, `stack`, `code`), those of a PostgreSQL error
 * (`severity`, `detail`, `hint`, `position`, `where`, `schema`, `table`, `column`, `dataType`, `constraint`,
 * `routine`; PostgreSQL manual, "Error Message Reporting"), of a system error (`errno`, `syscall`, `address`,
 * `port`), and Tidings' own (`step`, `statusCode`).
 */
export const ERROR_FIELDS: readonly string[] = Object.freeze([
  'message',
  'stack',
  'code',
  'severity',
  'detail',
  'hint',
  'position',
  'internalPosition',
  'where',
  'schema',
  'table',
  'column',
  'dataType',
  'constraint',
  'routine',
  'errno',
  'syscall',
  'address',
  'port',
  'step',
  'statusCode',
]);

/** How deep `cause` and `errors` are followed. */
const MAX_DEPTH = 3;
/** Most entries of an AggregateError's `errors` kept. */
const MAX_ERRORS = 5;
/** Longest text field kept, in characters (a stack, a message quoting a statement). */
const MAX_TEXT = 4096;

/** A serialized error. */
export interface SerializedError {
  [field: string]: string | number | boolean | SerializedError | SerializedError[];
}

const primitive = (value: unknown): string | number | boolean | undefined => {
  if (typeof value === 'string') return value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT)}…` : value;
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  return undefined;
};

/**
 * The `err` of a log line: {@link ERROR_FIELDS} of primitive value, `type` (the constructor's name), `cause`
 * and `errors` serialized the same way down to a few levels. A value that is not an object is shown as text.
 * An AppError's `detail` (a list of field problems) is kept as text.
 */
export function serializeError(error: unknown, depth = 0): SerializedError {
  if (error === null || typeof error !== 'object') return { message: String(error) };
  const source = error as Record<string, unknown>;
  const out: SerializedError = { type: (error as Error).constructor?.name ?? 'Object' };
  for (const field of ERROR_FIELDS) {
    const value = source[field];
    const asText = field === 'detail' && value !== undefined ? primitive(JSON.stringify(value)) : undefined;
    const kept = primitive(value) ?? asText;
    if (kept !== undefined) out[field] = kept;
  }
  if (depth < MAX_DEPTH) {
    if (source.cause !== undefined) out.cause = serializeError(source.cause, depth + 1);
    if (Array.isArray(source.errors)) {
      out.errors = source.errors.slice(0, MAX_ERRORS).map((e) => serializeError(e, depth + 1));
    }
  }
  return out;
}
