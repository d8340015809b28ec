/**
 * The form of a key's settings (create and edit): expiry, per-minute rate limit, monthly cloud
 * seconds, monthly token cap in dollars (spec "Rate limits": `tokenQuotaMonth` entered in dollars),
 * features. Empty means "no limit".
 */
import { useState } from 'preact/hooks';
import type { ApiKey, KeyInput } from '../api/types.js';
import { Field } from '../components/ui.js';
import { FEATURE_WORDS } from '../words.js';

const dateInput = (ms: number | null | undefined): string => {
  if (!ms) return '';
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
};

/** Parses an optional non-negative number field: '' -> null, bad -> undefined (invalid). */
const optNumber = (s: string): number | null | undefined => {
  if (s.trim() === '') return null;
  const n = Number(s);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
};

export function KeyForm(props: {
  initial?: ApiKey;
  features: string[];
  submitLabel: string;
  busy: boolean;
  onSubmit: (input: KeyInput) => void;
  onCancel: () => void;
}) {
  const k = props.initial;
  const [name, setName] = useState(k?.name ?? '');
  const [mode, setMode] = useState<'live' | 'test'>(k?.mode ?? 'live');
  const [expires, setExpires] = useState(dateInput(k?.expiresAt));
  const [rate, setRate] = useState(String(k?.rateLimitPerMin ?? 0));
  const [seconds, setSeconds] = useState(k?.quotaSecondsMonth == null ? '' : String(k.quotaSecondsMonth));
  const [cap, setCap] = useState(k?.tokenQuotaMonthUsd == null ? '' : String(k.tokenQuotaMonthUsd));
  const [features, setFeatures] = useState<string[]>(k?.features ?? []);
  const [problem, setProblem] = useState('');

  const submit = (e: Event) => {
    e.preventDefault();
    const rateN = Number(rate || '0');
    const secondsN = optNumber(seconds);
    const capN = optNumber(cap);
    if (!Number.isInteger(rateN) || rateN < 0)
      return setProblem('The rate limit is a whole number of calls per minute (0 for no per-key limit).');
    if (secondsN === undefined || (secondsN !== null && !Number.isInteger(secondsN)))
      return setProblem('Monthly cloud seconds is a whole number, or empty for no quota.');
    if (capN === undefined) return setProblem('The monthly token cap is an amount in dollars, or empty for no cap.');
    const expiresAt = expires ? new Date(`${expires}T23:59:59`).getTime() : null;
    if (expiresAt !== null && expiresAt < Date.now()) return setProblem('The expiry date is in the past.');
    setProblem('');
    props.onSubmit({
      ...(k ? { name: name.trim() || null } : { mode, ...(name.trim() ? { name: name.trim() } : {}) }),
      expiresAt,
      rateLimitPerMin: rateN,
      quotaSecondsMonth: secondsN,
      tokenQuotaMonthUsd: capN,
      features,
    });
  };

  const onText = (set: (v: string) => void) => (e: Event) => set((e.currentTarget as HTMLInputElement).value);
  return (
    <form class="form" onSubmit={submit}>
      {problem ? (
        <div class="note note-error" role="alert">
          {problem}
        </div>
      ) : null}
      <div class="form-grid">
        <Field label="Name" hint="For you to recognise the key (optional).">
          <input value={name} maxLength={64} onInput={onText(setName)} placeholder="Production backend" />
        </Field>
        {k ? null : (
          <Field label="Mode" hint="Test keys are for development.">
            <select
              value={mode}
              onChange={(e) => setMode((e.currentTarget as HTMLSelectElement).value as 'live' | 'test')}
            >
              <option value="live">Live</option>
              <option value="test">Test</option>
            </select>
          </Field>
        )}
        <Field label="Expires on" hint="Empty: never expires.">
          <input type="date" value={expires} onInput={onText(setExpires)} />
        </Field>
        <Field label="Rate limit per minute" hint="0: no per-key limit (the server maximum applies).">
          <input type="number" min={0} step={1} inputMode="numeric" value={rate} onInput={onText(setRate)} />
        </Field>
        <Field label="Monthly cloud seconds" hint="Empty: no quota.">
          <input type="number" min={0} step={1} inputMode="numeric" value={seconds} onInput={onText(setSeconds)} />
        </Field>
        <Field label="Monthly token cap (USD)" hint="Empty: no cap.">
          <input type="number" min={0} step={0.01} inputMode="decimal" value={cap} onInput={onText(setCap)} />
        </Field>
      </div>
      <fieldset class="features">
        <legend>Features</legend>
        <p class="field-hint">The core metrics (heart rate, breathing, stress, quality) are always on.</p>
        {props.features.map((f) => (
          <label key={f} class="check">
            <input
              type="checkbox"
              checked={features.includes(f)}
              onChange={(e) =>
                setFeatures((cur) =>
                  (e.currentTarget as HTMLInputElement).checked ? [...cur, f] : cur.filter((x) => x !== f),
                )
              }
            />
            {FEATURE_WORDS[f] ?? f}
          </label>
        ))}
      </fieldset>
      <div class="form-actions">
        <button type="button" class="btn" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="submit" class="btn btn-primary" disabled={props.busy}>
          {props.submitLabel}
        </button>
      </div>
    </form>
  );
}
