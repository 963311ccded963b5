// Where a process looks for NATS when it is not told. Its own module, so the GCS and raylet entries
// can name the default without loading the driver client (some thirty modules they never use).

/** Where `orrery start --head` serves NATS, and where every process looks when given no address. */
export const DEFAULT_ADDRESS = 'nats://127.0.0.1:4222';

/** The address a command or client uses: the option, else ORRERY_ADDRESS, else the local default. */
export function resolveAddress(address?: string): string {
  return address ?? (process.env.ORRERY_ADDRESS || DEFAULT_ADDRESS);
}
