/**
 * Every error orrery throws is an OrreryError with a stable `code`. Callers branch on `code` (or
 * `instanceof`), never on the message; structured fields carry the offending values so a CLI or a
 * wire reply can report them without parsing prose.
 */
export class OrreryError extends Error {
  override name = 'OrreryError';
  readonly code: string;
  readonly detail: Readonly<Record<string, unknown>>;

  constructor(code: string, message: string, options: { cause?: unknown; detail?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.detail = options.detail ?? {};
  }
}

/** A label key or value breaks the Kubernetes label syntax, or uses the reserved `orrery.io/` prefix. */
export class InvalidLabelError extends OrreryError {
  override name = 'InvalidLabelError';
  constructor(readonly key: string, readonly value: string | undefined, readonly rule: string) {
    const what = value === undefined ? `label key ${JSON.stringify(key)}` : `label ${JSON.stringify(key)}=${JSON.stringify(value)}`;
    super('INVALID_LABEL', `invalid ${what}: ${rule}`, { detail: { key, value, rule } });
  }
}

/** A taint's key, value or effect is malformed (`gpu=yes:Evict`); said as a taint, not as a label. */
export class InvalidTaintError extends OrreryError {
  override name = 'InvalidTaintError';
  constructor(readonly key: string, readonly value: string, readonly rule: string) {
    super('INVALID_TAINT', `invalid taint ${JSON.stringify(key)}=${JSON.stringify(value)}: ${rule}`, { detail: { key, value, rule } });
  }
}

/** A label selector value (`in(a,b)`, `!v`, …) or a match expression is malformed. */
export class InvalidSelectorError extends OrreryError {
  override name = 'InvalidSelectorError';
  constructor(readonly key: string, readonly value: unknown, readonly rule: string) {
    super('INVALID_SELECTOR', `invalid selector for ${JSON.stringify(key)} (${safeJson(value)}): ${rule}`, {
      detail: { key, value, rule },
    });
  }
}

/** A resource name or quantity is unusable (negative, not a number, too precise, too large). */
export class InvalidResourceError extends OrreryError {
  override name = 'InvalidResourceError';
  constructor(readonly resource: string, readonly value: unknown, readonly rule: string) {
    super('INVALID_RESOURCE', `invalid resource ${JSON.stringify(resource)} (${safeJson(value)}): ${rule}`, {
      detail: { resource, value, rule },
    });
  }
}

/** An option of an actor, task or placement group is malformed (wrong type, unknown strategy, …). */
export class InvalidOptionError extends OrreryError {
  override name = 'InvalidOptionError';
  constructor(readonly option: string, readonly value: unknown, readonly rule: string) {
    super('INVALID_OPTION', `invalid option ${option} (${safeJson(value)}): ${rule}`, { detail: { option, value, rule } });
  }
}

/** A hard node-id affinity names a node that is not (or no longer) in the cluster. */
export class NodeNotFoundError extends OrreryError {
  override name = 'NodeNotFoundError';
  constructor(readonly nodeId: string) {
    super('NODE_NOT_FOUND', `node ${JSON.stringify(nodeId)} is not in the cluster`, { detail: { nodeId } });
  }
}

/** A hard node-id affinity with failOnUnavailable names a node that cannot take the request now. */
export class NodeUnavailableError extends OrreryError {
  override name = 'NodeUnavailableError';
  constructor(readonly nodeId: string, readonly reasons: readonly string[]) {
    super('NODE_UNAVAILABLE', `node ${JSON.stringify(nodeId)} cannot take the request: ${reasons.join('; ')}`, {
      detail: { nodeId, reasons },
    });
  }
}

/** JSON for messages; values JSON cannot show (bigint, circular objects) fall back to String(). */
function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    try {
      return String(value);
    } catch {
      return '[unprintable]';
    }
  }
}
