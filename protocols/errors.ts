import { OrreryError } from '../lib/errors.ts';

/**
 * Codes a peer can put on the wire. The first five describe a message the receiver could not accept;
 * NO_RESPONDERS and TIMEOUT describe a request that got no answer; INTERNAL stands for an error that
 * was not an OrreryError. Any domain code (`NODE_NOT_FOUND`, `INVALID_LABEL`, …) passes through as is.
 */
export const WireErrorCode = {
  MALFORMED: 'MALFORMED',
  VERSION_MISMATCH: 'VERSION_MISMATCH',
  TOO_LARGE: 'TOO_LARGE',
  UNKNOWN_TYPE: 'UNKNOWN_TYPE',
  INVALID_MESSAGE: 'INVALID_MESSAGE',
  NO_RESPONDERS: 'NO_RESPONDERS',
  TIMEOUT: 'TIMEOUT',
  INTERNAL: 'INTERNAL',
} as const;
export type WireErrorCode = (typeof WireErrorCode)[keyof typeof WireErrorCode];

/** Codes a ProtocolError carries: `PROTOCOL` for a bad subject, the others for a bad message. */
export type ProtocolErrorCode =
  | 'PROTOCOL'
  | typeof WireErrorCode.MALFORMED
  | typeof WireErrorCode.VERSION_MISMATCH
  | typeof WireErrorCode.TOO_LARGE
  | typeof WireErrorCode.UNKNOWN_TYPE
  | typeof WireErrorCode.INVALID_MESSAGE;

const PROTOCOL_CODES = new Set<string>(['PROTOCOL', 'MALFORMED', 'VERSION_MISMATCH', 'TOO_LARGE', 'UNKNOWN_TYPE', 'INVALID_MESSAGE']);

/** A subject or message breaks the protocol: a bad token, undecodable bytes, a field of the wrong type. */
export class ProtocolError extends OrreryError {
  override name = 'ProtocolError';
  declare readonly code: ProtocolErrorCode;
  constructor(code: ProtocolErrorCode, message: string, options: { cause?: unknown; detail?: Record<string, unknown> } = {}) {
    super(code, message, options);
  }
}

/** The error half of a reply: a stable code, a one-line message for humans, structured detail. */
export interface WireError {
  readonly code: WireErrorCode | (string & {});
  readonly message: string;
  readonly detail?: Readonly<Record<string, unknown>>;
}

/** What every request is answered with. */
export type WireResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: WireError };

export function okResult<T>(value: T): WireResult<T> {
  return { ok: true, value };
}

export function errorResult(err: unknown): WireResult<never> {
  return { ok: false, error: toWireError(err) };
}

/** The wire shape of any thrown value; only an OrreryError keeps its code and detail. */
export function toWireError(err: unknown): WireError {
  if (err instanceof OrreryError) {
    const detail = Object.keys(err.detail).length > 0 ? { detail: err.detail } : {};
    return { code: err.code, message: err.message, ...detail };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { code: WireErrorCode.INTERNAL, message };
}

/**
 * Re-creates an error received on the wire with the sender's code, message and detail: a
 * ProtocolError for protocol codes, a plain OrreryError for everything else.
 */
export function fromWireError(wire: WireError): OrreryError {
  const options = wire.detail === undefined ? {} : { detail: { ...wire.detail } };
  if (PROTOCOL_CODES.has(wire.code)) return new ProtocolError(wire.code as ProtocolErrorCode, wire.message, options);
  return new OrreryError(wire.code, wire.message, options);
}
