/** End users (GET /api/v1/users): each key's userRefs, most recently active first. */
import { useState } from 'preact/hooks';
import { get } from '../api/client.js';
import type { ApiKey, EndUser, Page } from '../api/types.js';
import { Empty, ErrorNote, Link, Loading, PageHead, Select } from '../components/ui.js';
import { fmtDateTime, fmtNumber } from '../format.js';
import { useLoad } from '../hooks.js';
import { Pager } from '../components/pager.js';

const PER_PAGE = 20;

export function UsersPage() {
  const keys = useLoad(() => get<Page<ApiKey>>('/keys'), []);
  const [keyId, setKeyId] = useState('');
  const [page, setPage] = useState(1);
  const users = useLoad(() => get<Page<EndUser>>('/users', { keyId, page, perPage: PER_PAGE }), [keyId, page]);
  const keyName = (id: string) => keys.data?.items.find((k) => k.keyId === id)?.name || id;
  const items = users.data?.items ?? [];
  return (
    <>
      <PageHead
        title="End users"
        intro="People measured through your keys, by the userRef your backend sent. A userRef belongs to one key."
      />
      <div class="card filters">
        <Select
          label="Key"
          value={keyId}
          onChange={(v) => (setKeyId(v), setPage(1))}
          options={[
            ['', 'All keys'],
            ...(keys.data?.items ?? []).map((k): [string, string] => [
              k.keyId,
              k.name ? `${k.name} (${k.keyId})` : k.keyId,
            ]),
          ]}
        />
      </div>
      <ErrorNote error={users.error} onRetry={users.reload} />
      {users.loading && !users.data ? <Loading /> : null}
      {users.data && items.length === 0 ? (
        <div class="card">
          <Empty title="No end users yet">
            Measurements sent with a userRef appear here, with each person's history.
          </Empty>
        </div>
      ) : null}
      {items.length ? (
        <div class="card table-card">
          <table>
            <caption class="sr-only">End users</caption>
            <thead>
              <tr>
                <th scope="col">User</th>
                <th scope="col">Key</th>
                <th scope="col" class="num">
                  Measurements
                </th>
                <th scope="col">First seen</th>
                <th scope="col">Last seen</th>
                <th scope="col" class="num">
                  Average quality
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((u) => (
                <tr key={`${u.keyId}/${u.userRef}`}>
                  <td>
                    <Link
                      to={`/users/${encodeURIComponent(u.keyId)}/${encodeURIComponent(u.userRef)}`}
                      class="mono strong"
                    >
                      {u.userRef}
                    </Link>
                  </td>
                  <td class="small">{keyName(u.keyId)}</td>
                  <td class="num">{fmtNumber(u.measurements)}</td>
                  <td class="small nowrap">{fmtDateTime(u.firstSeenAt)}</td>
                  <td class="small nowrap">{fmtDateTime(u.lastSeenAt)}</td>
                  <td class="num">{u.avgQuality == null ? '—' : fmtNumber(u.avgQuality, 2)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager page={page} perPage={PER_PAGE} total={users.data?.total ?? items.length} onPage={setPage} />
        </div>
      ) : null}
    </>
  );
}
