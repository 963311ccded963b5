import type { Cluster } from '../client/cluster.ts';
import type { NodeInfo } from '../client/cluster-info.types.ts';

/** One node of a local cluster: one raylet. */
export interface NodeSpec {
  name?: string;
  /** e.g. { CPU: 4, GPU: 1, my_res: 2 }; CPU defaults to 1 per spec. */
  resources?: Record<string, number>;
  labels?: Record<string, string>;
  taints?: Record<string, string>;
}

export type Transport = 'nats' | 'memory';

export interface LocalClusterOptions {
  nodes: NodeSpec[];
  /**
   * 'memory': the whole cluster inside this process on one in-process broker. 'nats': a GCS process
   * and one raylet process per node on a NATS server. Default: 'nats' when a nats-server binary is
   * available (or `address` is given), else 'memory'; `LocalCluster.transport` says which.
   */
  transport?: Transport;
  /** With 'nats': use this server; without: spawn nats-server on a free port (never 4222). */
  address?: string;
  /** The cluster name; default 'default'. */
  cluster?: string;
  /** Resources whose nodes get a rare-resource taint (seed 003), e.g. ['GPU']. */
  rareResources?: string[];
  /**
   * How long the GCS waits for a job's heartbeat before it finishes the job and kills what it owns
   * (docs/jobs.md); default the GCS's, 30,000 ms.
   */
  jobTimeoutMs?: number;
  /**
   * Node flags for the GCS and raylet processes (nats transport); default: this process's own
   * (process.execArgv), so a driver running under tsx starts them under tsx too. Pass [] to run the
   * compiled package's entries on plain node, as an installed orrery runs.
   */
  nodeFlags?: string[];
  /**
   * Authentication on NATS (nats transport): `true` writes a fresh configuration and credentials
   * (`orrery auth init`) into a temporary directory, starts nats-server with it, and runs the GCS,
   * the raylets and the client each with its role's credentials (the client as `admin`).
   * `{ dir }` uses the ones in `dir` (written when absent); with `address`, the server there must
   * already run with `dir`'s configuration. `LocalCluster.authDir` says where they are.
   */
  auth?: boolean | { dir: string };
  /** Every output line of the GCS and raylet processes (nats transport); by default they are kept quietly. */
  onOutput?: (line: string, source: string) => void;
}

export interface LocalCluster {
  /** A connected client. */
  readonly cluster: Cluster;
  /** NATS URL, or 'memory://…' for the memory transport. */
  readonly address: string;
  readonly transport: Transport;
  /** With `auth`: the directory of the configuration and each role's credentials file. */
  readonly authDir?: string;
  addNode(spec: NodeSpec): Promise<NodeInfo>;
  /** Abrupt: SIGKILL of the raylet process and its worker hosts (nats), or the raylet's in-process crash (memory). */
  killNode(nodeId: string): Promise<void>;
  /**
   * The pid of a node's raylet process (nats transport only; undefined for an unknown node): the
   * hook the fencing spec and the chaos run use to freeze one (SIGSTOP) and resume it (SIGCONT).
   */
  rayletPid?(nodeId: string): number | undefined;
  /**
   * Control-plane faults (nats transport only): start another GCS process (a hot standby while one
   * leads), SIGKILL the one that leads now, and crash the nats-server this cluster started and bring
   * it back on the same port and JetStream store after `downMs`. The chaos run's hooks.
   */
  startGcs?(): Promise<void>;
  killLeaderGcs?(): Promise<void>;
  restartNats?(opts?: { downMs?: number }): Promise<void>;
  /**
   * nats-server the cluster started takes its configuration again (SIGHUP): after `authAdd` on
   * `authDir`. The server applies it shortly after; wait for what it allows.
   */
  reloadNats?(): void;
  /** Stops everything it started: client, raylets, GCS, and nats-server when it spawned one. */
  stop(): Promise<void>;
}
