import { useState } from 'preact/hooks';
import { client, ok } from './api.ts';
import { href, navigate, seg } from './router.ts';
import { SchemaView } from './schema-view.tsx';
import type { EventType } from './types.ts';
import { Action, Badge, Empty, ErrorBox, Show, Time, Title, useLoad } from './ui.tsx';

const TEMPLATE =
  '{\n  "1": {\n    "type": "object",\n    "properties": { "id": { "type": "string" } },\n    "required": ' +
  '["id"],\n    "examples": [{ "id": "inv_1" }]\n  }\n}';
/** The path parameters of one event type's routes. */
const typePath = (name: string) => ({ path: { eventTypeName: name } });

/**
 * Create or replace an event type; the server checks the schemas and their examples (422 naming the field).
 * Its state is `initial`'s only: the caller keys it by the type's name, so another type never inherits it.
 */
function Editor({ initial, onSaved }: { initial: EventType | null; onSaved: (name: string) => void }) {
  const [name, setName] = useState(initial?.name ?? '');
  const [description, setDescription] = useState(initial?.description ?? '');
  const [schemas, setSchemas] = useState(
    initial === null ? TEMPLATE : initial.schemas === null ? '' : JSON.stringify(initial.schemas, null, 2),
  );
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    let parsed: Record<string, unknown> | null;
    try {
      parsed = schemas.trim() === '' ? null : JSON.parse(schemas);
    } catch (err) {
      setError(new Error(`The schemas are not JSON: ${(err as Error).message}`));
      return;
    }
    try {
      const body = { description, schemas: parsed };
      await ok(client.PUT('/api/v1/event-type/{eventTypeName}', { params: typePath(initial?.name ?? name), body }));
      setSaved(true);
      onSaved(initial?.name ?? name);
    } catch (err) {
      setError(err);
    }
  };
  const set =
    (to: (v: string) => void) =>
    (e: Event): void =>
      to((e.target as HTMLInputElement).value);
  return (
    <form class="card form" onSubmit={(e) => void submit(e)} aria-label="Event type editor">
      <h2>{initial === null ? 'New event type' : `Edit ${initial.name}`}</h2>
      <label>
        Name{' '}
        <input
          name="name"
          required
          value={initial?.name ?? name}
          disabled={initial !== null}
          onInput={set(setName)}
          placeholder="invoice.paid"
        />
      </label>
      <label>
        Description <input name="description" value={description} onInput={set(setDescription)} />
      </label>
      <label>
        JSON Schemas by version, with examples (each example is checked against its schema; empty = any payload)
        <textarea name="schemas" class="code" rows={12} spellcheck={false} value={schemas} onInput={set(setSchemas)} />
      </label>
      <button type="submit" class="primary">
        Check and save
      </button>
      {saved ? (
        <p class="notice" role="status">
          Saved: the schemas compile and every example passes.
        </p>
      ) : null}
      <ErrorBox error={error} />
    </form>
  );
}

/** Archive (hidden from new endpoints' choices, kept) and delete for good, each with a dialog naming the type. */
function TypeControls({ type, onDone }: { type: EventType; onDone: (deleted: boolean) => void }) {
  return (
    <div class="toolbar">
      {type.archived ? null : (
        <Action
          label={`Archive ${type.name}`}
          run={async () => {
            await ok(client.DELETE('/api/v1/event-type/{eventTypeName}', { params: typePath(type.name) }));
            onDone(false);
          }}
          confirm={{
            title: `Archive the event type ${type.name}?`,
            yes: 'Archive',
            body: (
              <p>
                It is hidden from the catalogue's choices; messages of this type are still accepted and delivered.
                Saving it again brings it back.
              </p>
            ),
          }}
        />
      )}
      <Action
        label={`Delete ${type.name}`}
        danger
        run={async () => {
          await ok(
            client.DELETE('/api/v1/event-type/{eventTypeName}', {
              params: { ...typePath(type.name), query: { expunge: 'true' } },
            }),
          );
          onDone(true);
        }}
        confirm={{
          title: `Delete the event type ${type.name} for good?`,
          yes: 'Delete event type',
          body: (
            <p>
              Its description and every version of its schema are deleted; messages already sent keep their payloads.
              This cannot be undone.
            </p>
          ),
        }}
      />
    </div>
  );
}

/** The event catalogue: types with their schemas as structure; the operator creates, edits, archives, deletes. */
export function EventTypesPage({ canEdit, base = '' }: { canEdit: boolean; base?: string }) {
  const list = useLoad(
    () =>
      ok(
        client.GET('/api/v1/event-type', {
          params: { query: { limit: '250', with_content: 'true', include_archived: 'true' } },
        }),
      ),
    [],
  );
  return (
    <>
      <Title sub="The events that can be sent, with their JSON Schemas and examples.">Event types</Title>
      <Show of={list}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty title="No event types yet.">
              {canEdit
                ? 'Create one with the editor below; messages of that type are then checked against its schema.'
                : 'None are published yet.'}
            </Empty>
          ) : (
            <ul class="plain catalogue">
              {page.data.map((t) => (
                <li key={t.name} class="card">
                  <h2>
                    <a href={href(`${base}/event-types/${seg(t.name)}`)}>
                      <code>{t.name}</code>
                    </a>{' '}
                    {t.archived ? <Badge state="archived" /> : null}
                    {t.deprecated ? <Badge state="deprecated" /> : null}
                  </h2>
                  <p>
                    {t.description === '' ? <span class="muted">No description.</span> : t.description}{' '}
                    <span class="muted">
                      · updated <Time iso={t.updatedAt} />
                    </span>
                  </p>
                  {t.schemas === null ? (
                    <p class="muted">No schema: any JSON payload is accepted.</p>
                  ) : (
                    <details>
                      <summary>Schemas and examples</summary>
                      <SchemaView name={t.name} schemas={t.schemas} />
                    </details>
                  )}
                  {canEdit ? (
                    <p>
                      <a href={href(`${base}/event-types/${seg(t.name)}`)}>Edit {t.name}</a>
                    </p>
                  ) : null}
                </li>
              ))}
            </ul>
          )
        }
      </Show>
      {canEdit ? (
        <Editor key="new" initial={null} onSaved={(name) => navigate(`${base}/event-types/${seg(name)}`)} />
      ) : null}
    </>
  );
}

/** One event type at its own address: its schemas as structure; for the operator its editor and controls. */
export function EventTypePage({ name, canEdit, base = '' }: { name: string; canEdit: boolean; base?: string }) {
  const type = useLoad(() => ok(client.GET('/api/v1/event-type/{eventTypeName}', { params: typePath(name) })), [name]);
  return (
    <>
      <Title
        sub={
          <>
            <a href={href(`${base}/event-types`)}>Event types</a> › {name}
          </>
        }
      >
        {name}
      </Title>
      <Show of={type}>
        {(t) => (
          <>
            <section class="card" aria-labelledby="et-h">
              <h2 id="et-h">
                Schema {t.archived ? <Badge state="archived" /> : null}
                {t.deprecated ? <Badge state="deprecated" /> : null}
              </h2>
              <p>
                {t.description === '' ? <span class="muted">No description.</span> : t.description}{' '}
                <span class="muted">
                  · updated <Time iso={t.updatedAt} />
                </span>
              </p>
              <SchemaView name={t.name} schemas={t.schemas} />
            </section>
            {canEdit ? (
              <TypeControls
                type={t}
                onDone={(deleted) => (deleted ? navigate(`${base}/event-types`) : type.reload())}
              />
            ) : null}
            {canEdit ? <Editor key={t.name} initial={t} onSaved={() => type.reload()} /> : null}
          </>
        )}
      </Show>
    </>
  );
}
