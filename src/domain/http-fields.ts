/**
 * What a user-given value must be to travel as an HTTP header field of an outbound request unchanged. The
 * sender (undici) refuses, at every attempt, a name that is no RFC 9110 token and a value with a character
 * outside HTAB, SP, VCHAR and obs-text; obs-text (0x80–0xFF) it would send as Latin-1 bytes, which a
 * receiver reads as other characters, and a value with leading or trailing whitespace arrives trimmed
 * (RFC 9110 §5.5: that whitespace is not part of the value). Each is refused when the value is written,
 * not when it is sent.
 */

/** RFC 9110 §5.6.2 token: the characters of a header name (and of a media type's type, subtype and parameter name). */
export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** RFC 9110 §5.5 field-value, restricted to visible ASCII: VCHAR, with SP and HTAB only between them. */
const FIELD_VALUE = /^(?:[\x21-\x7e](?:[\t\x20-\x7e]*[\x21-\x7e])?)?$/;

/** Why `value` cannot be sent as a header value unchanged, or null when it can. */
export function headerValueProblem(value: string): string | null {
  if (FIELD_VALUE.test(value)) return null;
  if (/[\r\n\0]/.test(value)) return 'a header value may not hold CR, LF or NUL (they would end the header)';
  if (/^[\t ]|[\t ]$/.test(value)) {
    return 'a header value may not begin or end with a space or tab (the receiver reads it trimmed)';
  }
  return (
    'a header value may hold only visible ASCII characters, space and tab ' +
    '(no control characters, no non-ASCII: percent- or base64-encode them)'
  );
}

/** Why `name` cannot be sent as a header name, or null when it can. */
export function headerNameProblem(name: string): string | null {
  return TOKEN.test(name) ? null : "not a valid header name (an RFC 9110 token: letters, digits and !#$%&'*+-.^_`|~)";
}

/**
 * A media type as a `Content-Type` header value carries it (RFC 9110 §8.3.1): `type/subtype`, then
 * `; name=value` parameters, the value a token or a quoted string. Whitespace around `;` is SP or HTAB only
 * (never a line break or a Unicode space); a quoted string holds visible ASCII, SP, HTAB and quoted pairs.
 */
const TOKEN_CHARS = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const QUOTED_STRING = '"(?:[\\t !#-[\\]-~]|\\\\[\\t -~])*"';
const MEDIA_TYPE = new RegExp(
  `^${TOKEN_CHARS}/${TOKEN_CHARS}(?:[\\t ]*;[\\t ]*${TOKEN_CHARS}=(?:${TOKEN_CHARS}|${QUOTED_STRING}))*$`,
);

/** Why `value` is not a media type that can be sent as a `Content-Type` unchanged, or null when it is. */
export function mediaTypeProblem(value: string): string | null {
  if (MEDIA_TYPE.test(value)) return headerValueProblem(value);
  return headerValueProblem(value) ?? 'must be a media type such as text/plain or application/xml; charset=utf-8';
}
