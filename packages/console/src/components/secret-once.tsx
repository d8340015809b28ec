/**
 * A secret shown exactly once (API key secret, `whsec_` endpoint secret): the server keeps only its
 * SHA-256, so the page says so plainly and offers a copy button.
 */
import type { ComponentChildren } from 'preact';
import { useId, useRef, useState } from 'preact/hooks';

async function copyText(text: string, input: HTMLInputElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Clipboard API refused (insecure context or permission): select the text for Ctrl+C.
    input?.select();
    return false;
  }
}

export function SecretOnce(props: { label: string; secret: string; extra?: ComponentChildren; onDone: () => void }) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'select'>('no');
  const input = useRef<HTMLInputElement>(null);
  const id = useId();
  return (
    <div class="secret" role="region" aria-label="Secret shown once">
      <p class="secret-warn">
        <strong>Copy this secret now.</strong> It is shown only once: the server keeps only its hash and cannot show it
        again.
      </p>
      {props.extra}
      <div class="field field-wide">
        <label class="field-label" for={id}>
          {props.label}
        </label>
        <span class="secret-row">
          <input
            id={id}
            ref={input}
            class="mono"
            readOnly
            value={props.secret}
            onFocus={(e) => (e.currentTarget as HTMLInputElement).select()}
          />
          <button
            type="button"
            class="btn"
            onClick={async () => setCopied((await copyText(props.secret, input.current)) ? 'yes' : 'select')}
          >
            {copied === 'yes' ? 'Copied' : 'Copy'}
          </button>
        </span>
      </div>
      <p class="field-hint" role="status" aria-live="polite">
        {copied === 'yes' ? 'Copied to the clipboard.' : copied === 'select' ? 'Selected: press Ctrl+C to copy.' : ''}
      </p>
      <div class="form-actions">
        <button type="button" class="btn btn-primary" onClick={props.onDone}>
          I have saved it
        </button>
      </div>
    </div>
  );
}
