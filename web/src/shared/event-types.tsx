import { useState } from 'preact/hooks';
import { api, get, type Page } from './api.ts';
import type { EventType } from './types.ts';
import { Badge, Empty, ErrorBox, Loading, Pre, Time, Title, useLoad } from './ui.tsx';

const TEMPLATE = '{\n  "1": {\n    "type": "object",\n    "properties": { "id": { "type": "string" } },\n    "required": ["id"],\n    "examples": [{ "id": "inv_1" }]\n  }\n}';

/** Create or replace an event type; the server checks the schemas and their examples (422 naming the field). */
function Editor({ initial, onSaved }: { initial: EventType | null; onSaved: () => void }) {
  const [name, setName] = useState(initial?.name ?? '');
  const [description, setDescription] = useState(initial?.description ?? '');
  const [schemas, setSchemas] = useState(initial?.schemas == null ? TEMPLATE : JSON.stringify(initial.schemas, null, 2));
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    let parsed: unknown;
    try { parsed = schemas.trim() === '' ? null : JSON.parse(schemas); } catch (err) { setError(new Error(`The schemas are not JSON: ${(err as Error).message}`)); return; }
    try {
      await api('PUT', `/api/v1/event-type/${encodeURIComponent(name)}`, { description, schemas: parsed });
      setSaved(true);
      onSaved();
    } catch (err) { setError(err); }
  };
  return (
    <form class="card form" onSubmit={(e) => void submit(e)} aria-label="Event type editor">
      <h2>{initial === null ? 'New event type' : `Edit ${initial.name}`}</h2>
      <label>Name <input required value={name} disabled={initial !== null} onInput={(e) => setName((e.target as HTMLInputElement).value)} placeholder="invoice.paid" /></label>
      <label>Description <input value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} /></label>
      <label>JSON Schemas by version, with examples (each example is checked against its schema)
        <textarea class="code" rows={12} spellcheck={false} value={schemas} onInput={(e) => setSchemas((e.target as HTMLTextAreaElement).value)} />
      </label>
      <button type="submit" class="primary">Check and save</button>
      {saved ? <p class="notice" role="status">Saved: the schemas compile and every example passes.</p> : null}
      <ErrorBox error={error} />
    </form>
  );
}

/** The event catalogue: types, schemas, examples; an editor for the operator. */
export function EventTypesPage({ canEdit }: { canEdit: boolean }) {
  const list = useLoad(() => get<Page<EventType>>('/api/v1/event-type?limit=250&with_content=true&include_archived=true'), []);
  const [editing, setEditing] = useState<EventType | null>(null);
  return (
    <>
      <Title sub="The events that can be sent, with their JSON Schemas and examples.">Event types</Title>
      <ErrorBox error={list.error} />
      {list.data === undefined ? <Loading /> : list.data.data.length === 0 ? (
        <Empty title="No event types yet.">{canEdit ? 'Create one with the editor below; messages of that type are then checked against its schema.' : 'None are published yet.'}</Empty>
      ) : (
        <ul class="plain catalogue">{list.data.data.map((t) => (
          <li key={t.name} class="card">
            <h2><code>{t.name}</code> {t.archived ? <Badge state="archived" /> : null}{t.deprecated ? <Badge state="deprecated" /> : null}</h2>
            <p>{t.description === '' ? <span class="muted">No description.</span> : t.description} <span class="muted">· updated <Time iso={t.updatedAt} /></span></p>
            {t.schemas === null ? <p class="muted">No schema: any JSON payload is accepted.</p> : <details><summary>Schemas and examples</summary><Pre label={`Schemas of ${t.name}`} text={JSON.stringify(t.schemas, null, 2)} /></details>}
            {canEdit ? <button type="button" onClick={() => setEditing(t)}>Edit {t.name}</button> : null}
          </li>
        ))}</ul>
      )}
      {canEdit ? <Editor key={editing?.name ?? 'new'} initial={editing} onSaved={list.reload} /> : null}
    </>
  );
}
