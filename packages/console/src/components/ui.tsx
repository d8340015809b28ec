/** The console's small building blocks: page frame, notices, states, badges, fields, dialogs. */
import { cloneElement, isValidElement, type ComponentChildren, type VNode } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import { errorWords } from '../words.js';
import { hrefOf, onLinkClick } from '../router.js';

export function PageHead(props: { title: string; intro?: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <header class="page-head">
      <div>
        <h1>{props.title}</h1>
        {props.intro ? <p class="intro">{props.intro}</p> : null}
      </div>
      {props.actions ? <div class="actions">{props.actions}</div> : null}
    </header>
  );
}

export function Section(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  return (
    <section class="card" aria-label={props.title}>
      <div class="card-head">
        <h2>{props.title}</h2>
        {props.actions ? <div class="actions">{props.actions}</div> : null}
      </div>
      {props.children}
    </section>
  );
}

/** An error in plain words (role alert, so screen readers announce it). */
export function ErrorNote(props: { error: unknown; onRetry?: () => void }) {
  if (!props.error) return null;
  const code = (props.error as { code?: string }).code;
  return (
    <div class="note note-error" role="alert">
      <span>{errorWords(props.error)}</span>
      {code ? <code class="code">{code}</code> : null}
      {props.onRetry ? (
        <button type="button" class="btn btn-small" onClick={props.onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

export function Note(props: { tone?: 'info' | 'success' | 'warn'; children: ComponentChildren }) {
  return (
    <div class={`note note-${props.tone ?? 'info'}`} role="status">
      {props.children}
    </div>
  );
}

export function Loading(props: { label?: string }) {
  return (
    <div class="loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {props.label ?? 'Loading…'}
    </div>
  );
}

export function Empty(props: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{props.title}</p>
      {props.children ? <p class="empty-body">{props.children}</p> : null}
    </div>
  );
}

export type Tone = 'good' | 'warn' | 'bad' | 'neutral' | 'info';
export function Badge(props: { tone: Tone; children: ComponentChildren; title?: string }) {
  return (
    <span class={`badge badge-${props.tone}`} title={props.title}>
      {props.children}
    </span>
  );
}

/**
 * A labelled control: the label wraps the control (its accessible name is the label alone) and the
 * hint is tied to it with aria-describedby.
 */
export function Field(props: { label: string; hint?: string; children: ComponentChildren; wide?: boolean }) {
  const hintId = useId();
  const child =
    props.hint && isValidElement(props.children)
      ? cloneElement(props.children as VNode<any>, { 'aria-describedby': hintId })
      : props.children;
  return (
    <div class={props.wide ? 'field field-wide' : 'field'}>
      <label class="field-control">
        <span class="field-label">{props.label}</span>
        {child}
      </label>
      {props.hint ? (
        <span class="field-hint" id={hintId}>
          {props.hint}
        </span>
      ) : null}
    </div>
  );
}

export function Link(props: {
  to: string;
  children: ComponentChildren;
  class?: string;
  current?: boolean;
  /** A fuller accessible name where the visible text repeats (a "Details" per row). */
  label?: string;
}) {
  return (
    <a
      href={hrefOf(props.to)}
      class={props.class}
      aria-label={props.label}
      aria-current={props.current ? 'page' : undefined}
      onClick={(e) => onLinkClick(e as unknown as MouseEvent, props.to)}
    >
      {props.children}
    </a>
  );
}

/**
 * A modal `<dialog>`: the browser traps focus and closes it with Escape; `onClose` keeps the
 * page's state in step.
 */
export function Dialog(props: { title: string; open: boolean; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} class="dialog" aria-label={props.title} onClose={props.onClose}>
      {props.open ? (
        <div class="dialog-body">
          <div class="dialog-head">
            <h2>{props.title}</h2>
            <button type="button" class="btn btn-ghost" aria-label="Close" onClick={props.onClose}>
              ×
            </button>
          </div>
          {props.children}
        </div>
      ) : null}
    </dialog>
  );
}

export function Select(props: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  options: Array<[string, string]>;
  disabled?: boolean;
}) {
  const { label, value, onChange, options, disabled } = props;
  return (
    <Field label={label}>
      <select
        disabled={disabled}
        value={value}
        onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value)}
      >
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </Field>
  );
}
