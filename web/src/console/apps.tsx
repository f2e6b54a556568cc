import { useState } from 'preact/hooks';
import { client, ok } from '../shared/api.ts';
import { href, navigate, seg } from '../shared/router.ts';
import { DataTable } from '../shared/table.tsx';
import { Action, CopyId, Empty, ErrorBox, Pager, Show, Time, Title, useLoad } from '../shared/ui.tsx';

/** Applications: list, search by name or uid (over the loaded page), create, open the portal. */
export function AppsPage() {
  const [iterator, setIterator] = useState<string | null>(null);
  const list = useLoad(
    () => ok(client.GET('/api/v1/app', { params: { query: { limit: '100', iterator } } })),
    [iterator],
  );
  const [search, setSearch] = useState('');
  const [name, setName] = useState('');
  const [uid, setUid] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [portal, setPortal] = useState<string | null>(null);
  const s = search.trim().toLowerCase();
  const rows = (list.data?.data ?? []).filter(
    (a) =>
      s === '' ||
      a.name.toLowerCase().includes(s) ||
      (a.uid ?? '').toLowerCase().includes(s) ||
      a.id.toLowerCase() === s,
  );
  const create = async (e: Event): Promise<void> => {
    e.preventDefault();
    setError(null);
    try {
      const a = await ok(client.POST('/api/v1/app', { body: { name, uid: uid === '' ? null : uid } }));
      navigate(`/apps/${seg(a.id)}/endpoints`);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <>
      <Title sub="Each application is one of your customers, with its own endpoints and messages.">Applications</Title>
      <label>
        Search by name or uid{' '}
        <input type="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} />
      </label>
      {portal === null ? null : (
        <p class="notice" role="status">
          Portal link (valid for the token's lifetime; the token is in the fragment, never sent to a server log):{' '}
          <a href={portal} target="_blank" rel="noopener noreferrer">
            open the portal
          </a>
        </p>
      )}
      <Show of={list}>
        {() =>
          rows.length === 0 ? (
            <Empty title={s === '' ? 'No applications yet.' : 'No application matches.'}>
              {s === ''
                ? 'Create the first one with the form below (one per customer).'
                : 'Try another name or uid, or the next page.'}
            </Empty>
          ) : (
            <DataTable
              rows={rows}
              rowKey={(a) => a.id}
              columns={[
                { label: 'Name', cell: (a) => <a href={href(`/apps/${seg(a.id)}/endpoints`)}>{a.name}</a> },
                { label: 'Uid', cell: (a) => a.uid ?? <span class="muted">—</span> },
                { label: 'Id', cell: (a) => <CopyId id={a.id} label="application id" /> },
                { label: 'Created', cell: (a) => <Time iso={a.createdAt} /> },
                {
                  label: 'Actions',
                  hideLabel: true,
                  cell: (a) => (
                    <span class="row">
                      <Action
                        label={`Portal link for ${a.name}`}
                        run={async () =>
                          setPortal(
                            (
                              await ok(
                                client.POST('/api/v1/auth/app-portal-access/{appId}', {
                                  params: { path: { appId: a.id } },
                                  body: { expiry: 3600 },
                                }),
                              )
                            ).url,
                          )
                        }
                      />
                      <a href={href(`/apps/${seg(a.id)}/settings`)} aria-label={`Settings of ${a.name}`}>
                        Settings
                      </a>
                    </span>
                  ),
                },
              ]}
            />
          )
        }
      </Show>
      <Pager page={list.data} at={iterator} onPage={setIterator} />
      <form class="card form" onSubmit={(e) => void create(e)} aria-label="Create an application">
        <h2>Create an application</h2>
        <label>
          Name{' '}
          <input name="name" required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Uid (optional, your own id for it){' '}
          <input name="uid" value={uid} onInput={(e) => setUid((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" class="primary">
          Create application
        </button>
        <ErrorBox error={error} />
      </form>
    </>
  );
}
