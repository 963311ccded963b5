// For specs that try what a peer may and may not do: how a request ended, as one word.

/** The code a request failed with, or 'ok' when it was answered. */
export async function outcome(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
    return 'ok';
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}
