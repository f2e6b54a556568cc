import { z } from 'zod';
import type { IdPrefix } from '../../domain/ids.ts';

/**
 * Limits of the wire contract, as the Svix API documents them (they shape requests, they are not
 * deployment settings; operational limits such as the body size live in config.ts).
 */
export const WIRE_LIMITS = Object.freeze({
  /** Page size: default and maximum of `limit` (Svix: 50 / 250). */
  pageDefault: 50,
  pageMax: 250,
  /** uid, eventId, event type and idempotency key lengths (Svix: 256). */
  nameMaxLength: 256,
  /** Channel and tag length (Svix: 128). */
  channelMaxLength: 128,
  /** Channels per endpoint or message (Svix: 10). */
  channelsMax: 10,
  /** Tags per message. */
  tagsMax: 10,
  /** Event types an endpoint filters on. */
  eventTypesMax: 1000,
  /** Endpoint URL length. */
  urlMaxLength: 65_536,
  /** Metadata and custom header entries. */
  mapEntriesMax: 100,
} as const);

/**
 * True for `.` and `..`: a URL path cannot carry them as a segment. RFC 3986 §5.2.4 removes dot segments, and
 * so do fetch and the WHATWG URL parser (which read `%2e` as `.`), so the official client's
 * `endpoint.delete('app', '..')` sends `DELETE /api/v1/app/app/`: the application, not the endpoint.
 */
export function isDotSegment(segment: string): boolean {
  return segment === '.' || segment === '..';
}

/** Refuses `.` and `..` in a value that names an object in a path (an id, a uid, an eventId, an event type name). */
const pathSafe = <T extends z.ZodString>(schema: T) =>
  schema.refine((s) => !isDotSegment(s), {
    message:
      'must not be "." or "..": a URL path cannot carry it (clients remove dot segments), so the object could ' +
      'not be named in a path',
    abort: true,
  });

/** Svix `uid`: 1–256 of letters, digits, `-`, `_`, `.`; not `.` or `..` ({@link isDotSegment}). */
export const uidSchema = pathSafe(
  z
    .string()
    .min(1)
    .max(WIRE_LIMITS.nameMaxLength)
    .regex(/^[a-zA-Z0-9\-_.]+$/, 'may contain only letters, digits, "-", "_" and "."'),
);
/** Event type name (Svix): 1–256 of letters, digits, `-`, `_`, `.`; not `.` or `..` (it names the type in paths). */
export const eventTypeName = pathSafe(
  z
    .string()
    .min(1)
    .max(WIRE_LIMITS.nameMaxLength)
    .regex(/^[a-zA-Z0-9\-_.]+$/, 'may contain only letters, digits, "-", "_" and "."'),
);
/** A message's own id (Svix `eventId`): 1–256 characters, any but `.` and `..` (`GET …/msg/{eventId}` names it). */
export const eventIdSchema = pathSafe(z.string().min(1).max(WIRE_LIMITS.nameMaxLength));
/** Channel name (Svix): 1–128 of letters, digits, `-`, `_`, `.`, `:`. */
export const channelName = z
  .string()
  .min(1)
  .max(WIRE_LIMITS.channelMaxLength)
  .regex(/^[a-zA-Z0-9\-_.:]+$/, 'may contain only letters, digits, "-", "_", "." and ":"');
/** Tag (Svix): 1–128 of letters, digits and `-_./\#:`. */
export const tagName = z
  .string()
  .min(1)
  .max(WIRE_LIMITS.channelMaxLength)
  .regex(/^[a-zA-Z0-9\-_./\\#:]+$/, 'may contain only letters, digits and "-_./\\#:"');
/** String-to-string map (metadata). */
export const stringMap = z
  .record(z.string().max(WIRE_LIMITS.nameMaxLength), z.string())
  .refine((m) => Object.keys(m).length <= WIRE_LIMITS.mapEntriesMax, `at most ${WIRE_LIMITS.mapEntriesMax} entries`);
/** A value as compared between a field and its older name: a list as the set it names. */
const aliasValue = (v: unknown): string =>
  JSON.stringify(Array.isArray(v) ? [...(v as unknown[])].map(String).sort() : v);

/**
 * A refinement that refuses a field and its older name given together with different values (Svix's
 * `eventTypes` / `filterTypes`, `throttleRate` / `rateLimit`): which one wins would otherwise be decided
 * silently. The 422 names both (loc: the older name). Absent (undefined) is not given; null is a value.
 */
export function sameAsOlderName(pairs: readonly (readonly [current: string, older: string])[]) {
  return (body: Readonly<Record<string, unknown>>, ctx: z.RefinementCtx): void => {
    for (const [current, older] of pairs) {
      const a = body[current];
      const b = body[older];
      if (a === undefined || b === undefined || aliasValue(a) === aliasValue(b)) continue;
      const message =
        `${older} is the older name of ${current}, and the two differ: give one of them (or both with the same ` +
        'value)';
      ctx.addIssue({ code: 'custom', path: [older], message });
    }
  };
}

/** Messages (or requests) per second; null = unlimited. */
export const rateSchema = z.number().int().min(1).max(2_147_483_647);

/** `throttleRate` and its older name `rateLimit` as a body gives them (both only with the same value). */
export const rateFieldsIn = { throttleRate: rateSchema.nullish(), rateLimit: rateSchema.nullish() };

/** `throttleRate` and its older name `rateLimit` (the same value) as a response shows them. */
export const rateFieldsOut = { throttleRate: z.number().nullable(), rateLimit: z.number().nullable() };

/** The part of an id after its prefix (a ULID for ids Tidings makes). */
const ID_BODY = '[0-9A-Za-z]{1,64}';

/** An iterator over ids with `prefix` (`-` in front = the page before it). */
export const idIterator = (prefix: IdPrefix) =>
  z.string().regex(new RegExp(`^-?${prefix}_${ID_BODY}$`), `must be an iterator returned by this list (${prefix}_…)`);

/**
 * An integer in a query string, `min`–`max`: plain decimal digits only, without leading zeros. `Number()` would
 * also read `0x10`, `1e1`, ` 16 `, `16.0`, `0b10` and `016` as numbers, so one value would have several spellings
 * (and `010` is 8 to a reader that takes a leading zero as octal).
 */
export const queryInt = (min: number, max: number) =>
  z
    .string()
    .regex(/^(?:0|[1-9][0-9]*)$/, 'must be an integer in plain decimal digits, without leading zeros')
    // Any number of digits is read: one too large for a double is refused as over the maximum, not as a spelling.
    .transform((digits) => Math.min(Number(digits), Number.MAX_SAFE_INTEGER))
    .pipe(z.number().int().min(min).max(max));

/** Page parameters of a list (Svix): limit 1–250 (default 50), iterator, order. */
export function listQuery(iterator: z.ZodType<string>, defaultOrder: 'ascending' | 'descending') {
  return z.object({
    limit: queryInt(1, WIRE_LIMITS.pageMax).default(WIRE_LIMITS.pageDefault),
    iterator: iterator.nullish(),
    order: z
      .enum(['ascending', 'descending'])
      .default(defaultOrder)
      .describe(`Sort order by id (creation); default ${defaultOrder}`),
  });
}

/** Where the seconds of an RFC 3339 date-time sit: `YYYY-MM-DDTHH:MM:SS`. */
const SECONDS_AT = 17;

/**
 * An RFC 3339 §5.6 date-time with its offset, as a Date. The grammar is zod's ISO form (seconds required, any
 * fraction, `Z` or ±hh:mm), with what RFC 3339 adds to it: `t` and `z` may be lower case (§5.6, note), and a
 * leap second `:60` (§5.7) names the instant that ends its UTC day, so it is read as the next day's first.
 */
export const rfc3339Instant = z
  .string()
  .max(64)
  .transform((text, ctx) => {
    const upper = text.toUpperCase();
    const leap = upper.slice(SECONDS_AT, SECONDS_AT + 2) === '60';
    const form = leap ? `${upper.slice(0, SECONDS_AT)}59${upper.slice(SECONDS_AT + 2)}` : upper;
    const at = z.iso.datetime({ offset: true }).safeParse(form).success ? new Date(form) : null;
    const instant = at === null ? null : leap ? new Date(at.valueOf() + 1000) : at;
    if (instant === null || (leap && instant.getUTCHours() + instant.getUTCMinutes() + instant.getUTCSeconds() !== 0)) {
      const message =
        'must be an RFC 3339 date-time with its offset, e.g. 2026-01-31T12:00:00Z or 2026-01-31t13:00:00.5+01:00';
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    return instant;
  })
  .meta({ format: 'date-time' });

/** An RFC 3339 instant in a query string, as a Date ({@link rfc3339Instant}). */
export const instantQuery = rfc3339Instant;

/** A boolean query flag (`true`/`false`, `1`/`0`…). */
export const flagQuery = z.stringbool();

/** A list in a query string: comma-separated and/or repeated. */
export const listParam = <T extends z.ZodType<unknown, string>>(item: T) =>
  z
    .union([z.string(), z.array(z.string())])
    .transform((v) =>
      (Array.isArray(v) ? v : [v])
        .flatMap((s) => s.split(','))
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    )
    .pipe(z.array(item));

/** A path parameter naming an object by id or uid (a PUT may create one with it as uid: never `.` or `..`). */
export const refParam = pathSafe(z.string().min(1).max(WIRE_LIMITS.nameMaxLength));

/** `{code, detail}` error body (Svix `HttpErrorOut`; a 422 carries the failing fields as `detail`). */
export const errorBody = z
  .object({
    code: z.string(),
    detail: z.union([
      z.string(),
      z.array(z.object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string(), type: z.string() })),
    ]),
  })
  .meta({ id: 'HttpError' });

/** A list response `{data, iterator, prevIterator, done}` over `item`. */
export function listResponse<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    iterator: z.string().nullable(),
    prevIterator: z.string().nullable(),
    done: z.boolean(),
  });
}

/** Error responses every authenticated route may answer. */
export const commonErrors = {
  401: errorBody,
  403: errorBody,
  404: errorBody,
  422: errorBody,
  500: errorBody,
  503: errorBody,
} as const;
