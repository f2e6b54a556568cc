import { useState } from 'preact/hooks';
import { client, ok } from '../shared/api.ts';
import { navigate } from '../shared/router.ts';
import type { Application } from '../shared/types.ts';
import { Action, CopyId, Show, Time, Title, useLoad } from '../shared/ui.tsx';

const value = (e: Event): string => (e.target as HTMLInputElement).value;

/** Name, uid and rate limit of one application (PATCH); its state is `app`'s only (the caller keys it by id). */
function AppForm({ app, onSaved }: { app: Application; onSaved: () => void }) {
  const [name, setName] = useState(app.name);
  const [uid, setUid] = useState(app.uid ?? '');
  const [rate, setRate] = useState(app.rateLimit === null ? '' : String(app.rateLimit));
  return (
    <section class="card form" aria-labelledby="app-form-h">
      <h2 id="app-form-h">Settings</h2>
      <label>
        Name <input name="name" required value={name} onInput={(e) => setName(value(e))} />
      </label>
      <label>
        Uid (your own id for it; empty = none) <input name="uid" value={uid} onInput={(e) => setUid(value(e))} />
      </label>
      <label>
        Rate limit, messages per second (empty = unlimited){' '}
        <input
          name="rateLimit"
          inputMode="numeric"
          placeholder="unlimited"
          value={rate}
          onInput={(e) => setRate(value(e))}
        />
      </label>
      <Action
        label="Save application"
        run={async () => {
          await ok(
            client.PATCH('/api/v1/app/{appId}', {
              params: { path: { appId: app.id } },
              body: {
                name,
                uid: uid.trim() === '' ? null : uid.trim(),
                rateLimit: rate.trim() === '' ? null : Number(rate),
              },
            }),
          );
          onSaved();
        }}
      />
    </section>
  );
}

/** Delete, with a dialog naming the application and what goes with it. */
function DeleteApp({ app }: { app: Application }) {
  const endpoints = useLoad(
    () =>
      ok(client.GET('/api/v1/app/{appId}/endpoint', { params: { path: { appId: app.id }, query: { limit: '250' } } })),
    [app.id],
  );
  const count =
    endpoints.data === undefined ? 'its' : `its ${endpoints.data.data.length}${endpoints.data.done ? '' : '+'}`;
  return (
    <section class="card form" aria-labelledby="app-delete-h">
      <h2 id="app-delete-h">Delete</h2>
      <p>
        Deleting an application deletes its endpoints, messages and delivery history, and revokes its API keys and
        portal links.
      </p>
      <Action
        label="Delete application"
        danger
        run={async () => {
          await ok(client.DELETE('/api/v1/app/{appId}', { params: { path: { appId: app.id } } }));
          navigate('/apps');
        }}
        confirm={{
          title: `Delete the application ${app.name}?`,
          yes: 'Delete application',
          body: (
            <p>
              Application <code>{app.id}</code>
              {app.uid === null ? null : (
                <>
                  {' '}
                  (uid <code>{app.uid}</code>)
                </>
              )}{' '}
              is deleted with {count} endpoints, its messages and their delivery history; its API keys and portal links
              stop working. This cannot be undone.
            </p>
          ),
        }}
      />
    </section>
  );
}

/** One application's settings page (console). */
export function AppSettingsPage({ appId, onChanged }: { appId: string; onChanged: () => void }) {
  const app = useLoad(() => ok(client.GET('/api/v1/app/{appId}', { params: { path: { appId } } })), [appId]);
  return (
    <Show of={app}>
      {(a) => (
        <>
          <Title
            sub={
              <>
                <CopyId id={a.id} label="application id" /> · created <Time iso={a.createdAt} /> · updated{' '}
                <Time iso={a.updatedAt} />
              </>
            }
          >
            {a.name}
          </Title>
          <div class="grid2">
            <AppForm
              key={a.id}
              app={a}
              onSaved={() => {
                app.reload();
                onChanged();
              }}
            />
            <DeleteApp key={a.id} app={a} />
          </div>
        </>
      )}
    </Show>
  );
}
