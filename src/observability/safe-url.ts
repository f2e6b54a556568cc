/**
 * URLs as they may reach a span, a log line or a metric: without userinfo, query or fragment, where an endpoint's
 * owner or an operator may have put a credential (`https://user:pw@host/hook?token=…`). The one place that rule
 * is written; src/observability/otel-tracer.ts (`url.full` of an attempt span) and the OpenTelemetry SDK's own
 * warnings (an exporter's URL) use it.
 */

/** `url` without userinfo, query and fragment, as a WHATWG URL; null when it does not parse. */
export function urlWithoutCredentials(url: string): URL | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  parsed.username = '';
  parsed.password = '';
  parsed.search = '';
  parsed.hash = '';
  return parsed;
}

/** Absolute URLs (`scheme://…`) inside free text, up to the next space or quote. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;

/** `text` with every absolute URL in it shown by {@link urlWithoutCredentials} (or `[url]` when it does not parse). */
export function redactUrlsIn(text: string): string {
  return text.replace(URL_IN_TEXT, (found) => urlWithoutCredentials(found)?.href ?? '[url]');
}
