import { sha256Hex } from './code-bundle.ts';
import { assertToken } from './subjects.ts';

/**
 * The code store of a cluster (docs/code-shipping.md): a JetStream object store, one per cluster,
 * holding shipped bundles by hash. Its bucket name and the NATS subjects that reading and writing
 * it take are formed here (runtime/auth/roles.ts grants them; nats.js's object store forms the
 * same ones: `$O.<bucket>.C.>` chunks, `$O.<bucket>.M.>` metadata, the stream `OBJ_<bucket>`).
 */

/**
 * `orrery-code-<cluster>`: an object store name may hold only letters, digits, `_` and `-`, so a
 * cluster name with other characters has them replaced by `_` and 8 hex of its hash appended (two
 * such names cannot share a bucket).
 */
export function codeBucketName(cluster: string): string {
  assertToken('cluster', cluster);
  const safe = cluster.replace(/[^\w-]/g, '_');
  return safe === cluster ? `orrery-code-${cluster}` : `orrery-code-${safe}-${sha256Hex(cluster).slice(0, 8)}`;
}

/** The JetStream stream behind the bucket. */
export function codeStreamName(cluster: string): string {
  return `OBJ_${codeBucketName(cluster)}`;
}

/**
 * What a node needs to fetch a bundle: JetStream's account info, the stream's info, a message by
 * subject (an object's metadata), an ordered consumer of its chunks (created, deleted, its flow
 * control answered). It cannot publish to `$O.…`: it can not add or change code.
 */
export function codeStoreReadSubjects(cluster: string): string[] {
  const stream = codeStreamName(cluster);
  return [
    '$JS.API.INFO',
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.STREAM.MSG.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}.>`,
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.DELETE.${stream}.>`,
    `$JS.API.CONSUMER.INFO.${stream}.>`,
    `$JS.FC.${stream}.>`,
  ];
}

/** What a writer adds to reading: creating the bucket, publishing chunks and metadata, purging a replaced object's chunks. */
export function codeStoreWriteSubjects(cluster: string): string[] {
  const stream = codeStreamName(cluster);
  return [...codeStoreReadSubjects(cluster), `$JS.API.STREAM.CREATE.${stream}`, `$JS.API.STREAM.PURGE.${stream}`, `$O.${codeBucketName(cluster)}.>`];
}
