/** Where the CLI writes, injected so tests can run it in-process as well as spawned. */
export interface CliIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown; isTTY?: boolean };
  env: Record<string, string | undefined>;
  /** Aborted on SIGINT: long-running commands stop cleanly. */
  signal?: AbortSignal;
}

export function warnTo(io: CliIo): { warn(message: string): void } {
  return { warn: (message) => void io.stderr.write(`warning: ${message}\n`) };
}
