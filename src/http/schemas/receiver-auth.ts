import { z } from 'zod';
import { RECEIVER_AUTH_LIMITS } from '../../domain/receiver-auth.ts';

/**
 * Wire maxima, one past the limit so that a value just over it reaches the exact check (src/domain/receiver-auth.ts,
 * a 422 naming the field); a longer one is refused here with the same message, naming the real limit.
 */
const wire = (max: number, unit = 'characters') =>
  z.string().max(max + 1, { message: `must be at most ${max} ${unit}` });
const { text, url, pem } = RECEIVER_AUTH_LIMITS;

const basicIn = z.strictObject({
  username: wire(text).describe('The user id (no ":", RFC 7617)'),
  password: wire(text).describe('Never shown back: GET shows a masked hint'),
});

const oauth2In = z.strictObject({
  tokenUrl: wire(url).describe(
    'The token endpoint: https (http only to a literal private address that TIDINGS_EGRESS_ALLOWLIST opens)',
  ),
  clientId: wire(text),
  clientSecret: wire(text).describe('Sent with HTTP basic client authentication; never shown back'),
  scope: wire(text).nullish(),
  audience: wire(text).nullish().describe('Sent as the `audience` form field when set'),
});

const mtlsIn = z.strictObject({
  certificate: wire(pem, 'bytes').nullish().describe('PEM: the client certificate, then any intermediates (with key)'),
  key: wire(pem, 'bytes').nullish().describe('PEM, unencrypted: the private key of the certificate; never shown back'),
  ca: wire(pem, 'bytes')
    .nullish()
    .describe("PEM: the CA bundle the receiver's certificate must chain to, instead of the system's roots"),
});

/** `PUT …/endpoint/{ep}/auth`: the whole receiver authentication (replaces what was set). */
export const receiverAuthIn = z
  .strictObject({
    basic: basicIn.nullish().describe('HTTP basic credentials, sent as Authorization: Basic'),
    oauth2: oauth2In.nullish().describe('OAuth2 client credentials; the token is sent as Authorization: Bearer'),
    mtls: mtlsIn.nullish().describe("A TLS client certificate for this endpoint's connections"),
  })
  .meta({ id: 'ReceiverAuthIn' });

/**
 * `PATCH …/endpoint/{ep}/auth`: a part left out is kept, null removes it, a part given is merged field by field
 * (a field left out keeps the stored value, secrets included; null removes scope, audience or an mtls field).
 */
export const receiverAuthPatchIn = z
  .strictObject({
    basic: basicIn
      .partial()
      .nullish()
      .describe('Left out: kept. null: removed. A field left out keeps the stored one (password included)'),
    oauth2: oauth2In
      .partial()
      .nullish()
      .describe('Left out: kept. null: removed. A field left out keeps the stored one (clientSecret included)'),
    mtls: mtlsIn
      .nullish()
      .describe('Left out: kept. null: removed. A field left out keeps the stored one (key included); null removes it'),
  })
  .meta({ id: 'ReceiverAuthPatch' });

const certificateOut = z.object({
  subject: z.string(),
  issuer: z.string(),
  validTo: z.string(),
  fingerprint256: z.string(),
});

/** `GET …/endpoint/{ep}/auth`: what is set, secrets masked; every part null when nothing is. */
export const receiverAuthOut = z
  .object({
    basic: z.object({ username: z.string(), password: z.string().describe('Masked hint') }).nullable(),
    oauth2: z
      .object({
        tokenUrl: z.string(),
        clientId: z.string(),
        clientSecret: z.string().describe('Masked hint'),
        scope: z.string().nullable(),
        audience: z.string().nullable(),
      })
      .nullable(),
    mtls: z
      .object({
        certificate: certificateOut.nullable(),
        key: z.string().nullable().describe('Masked'),
        ca: z.array(certificateOut).nullable(),
      })
      .nullable(),
    version: z.string().nullable().describe('Changes at every PUT; null when nothing is set'),
  })
  .meta({ id: 'ReceiverAuthOut' });
