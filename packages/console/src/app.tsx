/**
 * The console shell: who is signed in (GET /api/v1/me), the sign-in page otherwise, and the
 * navigation whose link names are fixed by CONTRACT.md "Console".
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, post, SESSION_LOST } from './api/client.js';
import type { Me } from './api/types.js';
import { Link, Loading, ErrorNote } from './components/ui.js';
import { match, navigate, usePath } from './router.js';
import { SignIn } from './pages/sign-in.js';
import { OverviewPage } from './pages/overview.js';
import { KeysPage } from './pages/keys.js';
import { WebhooksPage } from './pages/webhooks.js';
import { UsagePage } from './pages/usage.js';
import { UsersPage } from './pages/users.js';
import { UserPage } from './pages/user.js';
import { MeasurementPage } from './pages/measurement.js';
import { BillingPage } from './pages/billing.js';

const NAV: Array<[string, string]> = [
  ['/', 'Overview'],
  ['/keys', 'API keys'],
  ['/webhooks', 'Webhooks'],
  ['/usage', 'Usage'],
  ['/users', 'End users'],
  ['/billing', 'Billing'],
];

function Routes(props: { path: string }) {
  const p = props.path;
  let m: Record<string, string> | null;
  if (p === '/' || p === '/overview') return <OverviewPage />;
  if (p === '/keys') return <KeysPage />;
  if (p === '/webhooks') return <WebhooksPage />;
  if (p === '/usage') return <UsagePage />;
  if (p === '/users') return <UsersPage />;
  if ((m = match('/users/:keyId/:userRef', p))) return <UserPage keyId={m.keyId} userRef={m.userRef} />;
  if ((m = match('/measurements/:id', p))) return <MeasurementPage id={m.id} />;
  if (p === '/billing') return <BillingPage />;
  return (
    <div class="card">
      <h1>Page not found</h1>
      <p>
        There is no page at this address. <Link to="/">Back to the start page</Link>.
      </p>
    </div>
  );
}

const section = (path: string): string =>
  path === '/'
    ? '/'
    : (NAV.find(([to]) => to !== '/' && (path === to || path.startsWith(`${to}/`)))?.[0] ??
      (path.startsWith('/measurements') ? '/users' : ''));

export function App() {
  const path = usePath();
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);

  const loadMe = async () => {
    try {
      setMe(await get<Me>('/me'));
      setError(undefined);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setMe(null);
      else setError(e);
    }
  };
  useEffect(() => {
    void loadMe();
    const lost = () => setMe(null);
    window.addEventListener(SESSION_LOST, lost);
    return () => window.removeEventListener(SESSION_LOST, lost);
  }, []);

  useEffect(() => {
    const name = NAV.find(([to]) => to === section(path))?.[1];
    document.title = me ? `${name ?? 'Console'} · vitals console` : 'Sign in · vitals console';
  }, [path, me]);

  if (error && me === undefined) {
    return (
      <main class="center">
        <ErrorNote error={error} onRetry={loadMe} />
      </main>
    );
  }
  if (me === undefined) {
    return (
      <main class="center">
        <Loading />
      </main>
    );
  }
  if (me === null) {
    return (
      <SignIn
        onSignedIn={async () => {
          await loadMe();
          if (path === '/sign-in') navigate('/', { replace: true });
        }}
      />
    );
  }

  const signOut = async () => {
    try {
      await post('/auth/logout');
    } finally {
      setMe(null);
    }
  };
  const current = section(path);
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">
          <span class="brand-mark" aria-hidden="true">
            ♥
          </span>{' '}
          vitals <span class="muted">console</span>
        </span>
        <span class="who">
          <span class="org">{me.orgName ?? me.orgId}</span>
          <span class="muted">{me.email}</span>
          <button type="button" class="btn btn-small" onClick={signOut}>
            Sign out
          </button>
        </span>
      </header>
      <nav class="sidenav" aria-label="Console">
        <ul>
          {NAV.map(([to, name]) => (
            <li key={to}>
              <Link to={to} current={current === to}>
                {name}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" class="content" tabIndex={-1}>
        <Routes path={path} />
      </main>
    </div>
  );
}
