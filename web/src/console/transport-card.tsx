import { client, ok } from '../shared/api.ts';
import { Badge, ErrorBox, useLoad } from '../shared/ui.tsx';
import { brokerLines, healthWord, TRANSPORT_NAMES } from './transport-health.ts';

/**
 * The overview's transport tile: TIDINGS_TRANSPORT and its health as the API process knows it
 * (`GET /api/v1/stats/transport`), refreshed with the other figures.
 */
export function TransportTile() {
  const health = useLoad(() => ok(client.GET('/api/v1/stats/transport')), [], 5000);
  const t = health.data;
  return (
    <section class="tile" aria-label="Transport">
      <h2>Transport</h2>
      {t === undefined ? (
        <ErrorBox error={health.error} />
      ) : (
        <>
          <p>
            <strong>{TRANSPORT_NAMES[t.transport]}</strong> <Badge state={healthWord(t)} />
          </p>
          {t.transport === 'postgres' ? (
            <p class="muted">Dispatchers claim due deliveries from the database.</p>
          ) : t.state === null ? (
            <p class="muted">
              This API process holds no broker connection: each dispatcher reports its own on /readyz.
            </p>
          ) : (
            brokerLines(t).map(([count, what]) => (
              <p key={what}>
                <strong>{count}</strong> {what}
              </p>
            ))
          )}
        </>
      )}
    </section>
  );
}
