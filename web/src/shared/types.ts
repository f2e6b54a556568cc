/** Shapes of the Tidings API the pages read: those of its OpenAPI document (api-types.ts, `npm run api-types`). */
import type { components, paths } from './api-types.ts';

type Schemas = components['schemas'];

/** The JSON a GET route answers with 200. */
export type Answer<P extends keyof paths> = paths[P] extends {
  get: { responses: { 200: { content: { 'application/json': infer T } } } };
}
  ? T
  : never;

/** The JSON body a POST route takes. */
export type PostBody<P extends keyof paths> = paths[P] extends {
  post: { requestBody?: { content: { 'application/json': infer T } } };
}
  ? T
  : never;

export type Application = Schemas['ApplicationOut'];
export type Endpoint = Schemas['EndpointOut'];
export type Health = Answer<'/api/v1/app/{appId}/endpoint/{endpointId}/health'>;
export type HealthWindow = Health['windows'][number];
/** A message of a list: an endpoint's list (`…/endpoint/{ep}/msg`) adds its delivery's state and hold. */
export type Message = Pick<Schemas['MessageOut'], 'id' | 'eventId' | 'eventType' | 'channels' | 'tags' | 'timestamp'> &
  Partial<Pick<Schemas['EndpointMessageOut'], 'deliveryState' | 'nextAttempt' | 'heldBy' | 'heldUntil'>>;
export type Attempt = Schemas['MessageAttemptOut'];
export type Destination = Schemas['MessageEndpointOut'];
export type TimelineEntry = Schemas['DeliveryTimelineEntry'];
export type Timeline = Schemas['DeliveryTimeline'];
/** A delivery a search found, with why it is in its state (`search/delivery`, `…/undelivered`). */
export type DeliveryFound = Schemas['DeliverySearchOut'];
/** What holds a pending delivery back (the API's `heldBy`, `heldUntil`). */
export type Hold = Partial<Pick<Timeline, 'heldBy' | 'heldUntil'>>;
export type EventType = Schemas['EventTypeOut'];
export type DeadLetter = Schemas['DeadLetterOut'];
export type Task = Schemas['BackgroundTaskOut'];
export type ApiKey = Schemas['ApiKeyOut'];
export type Setting = Schemas['SettingOut'];
export type Branding = Schemas['PortalBrandingOut'];
export type Me = Schemas['AuthMeOut'];
export type RetryPolicy = Schemas['RetryPolicyOut'];
export type Overview = Answer<'/api/v1/stats/overview'>;
export type TimeInState = Answer<'/api/v1/stats/time-in-state'>;
export type TransportHealth = Schemas['TransportOut'];

/** One endpoint of one application: the path parameters of its routes. */
export interface EndpointRef {
  readonly appId: string;
  readonly endpointId: string;
}

/** Where a shared page is shown: the application, the route prefix of its pages, and what the credential may do. */
export interface Scope {
  readonly appId: string;
  /** Route prefix: `/apps/<app>` in the console, `` in the portal. */
  readonly base: string;
  /** Write controls shown (a read-only portal token shows none; the server refuses writes regardless). */
  readonly canWrite: boolean;
  /** Operator credential (console). */
  readonly operator: boolean;
}
