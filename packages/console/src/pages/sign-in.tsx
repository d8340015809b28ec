/** Sign-in (POST /api/v1/auth/login): one answer for every wrong credential, 429 when throttled. */
import { useState } from 'preact/hooks';
import { ApiError, post } from '../api/client.js';
import { ErrorNote } from '../components/ui.js';

export function SignIn(props: { onSignedIn: () => Promise<void> }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await post('/auth/login', { email, password });
      await props.onSignedIn();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <main class="signin">
      <form class="card signin-card" onSubmit={submit} aria-labelledby="signin-title">
        <p class="brand">
          <span class="brand-mark" aria-hidden="true">
            ♥
          </span>{' '}
          vitals <span class="muted">console</span>
        </p>
        <h1 id="signin-title">Sign in to your organization</h1>
        {error instanceof ApiError && error.code === 'unauthorized' ? (
          <div class="note note-error" role="alert">
            The email or password is not right.
          </div>
        ) : (
          <ErrorNote error={error} />
        )}
        <label class="field field-wide">
          <span class="field-label">Email</span>
          <input
            type="email"
            name="email"
            autoComplete="username"
            required
            value={email}
            onInput={(e) => setEmail((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <label class="field field-wide">
          <span class="field-label">Password</span>
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" class="btn btn-primary btn-block" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p class="muted small">Accounts are created by your service operator.</p>
      </form>
    </main>
  );
}
