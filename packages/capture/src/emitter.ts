/** A small typed event emitter (no DOM EventTarget, so the capture core stays testable anywhere). */
export class Emitter<M> {
  private readonly map = new Map<keyof M, Set<(e: never) => void>>();

  on<K extends keyof M>(type: K, fn: (e: M[K]) => void): () => void {
    let set = this.map.get(type);
    if (!set) this.map.set(type, (set = new Set()));
    set.add(fn as (e: never) => void);
    return () => set.delete(fn as (e: never) => void);
  }

  protected emit<K extends keyof M>(type: K, e: M[K]): void {
    for (const fn of this.map.get(type) ?? []) {
      try {
        (fn as (e: M[K]) => void)(e);
      } catch (err) {
        console.error(err);
      }
    }
  }
}
