import type { Infer, Validator } from '../validate.ts';
import { heartbeat, registerNode, registerRunning, unregisterNode } from './node.ts';
import { reply } from './reply.ts';
import { viewDelta, viewSnapshotQuery } from './view.ts';
import { actorCall, actorDied, callBatch, cancelCall, replyBatch, createActor, explainRequest, getActor, killActor, listActors, rayletKillActor, registerActor } from './actor.ts';
import { listPage } from './page.ts';
import { clusterEvent, empty, labelsChange, listEvents, nodeRef, taintsChange } from './cluster.ts';
import { cancelBundle, commitBundle, createPg, getPg, prepareBundle, removePg } from './placement-group.ts';
import { cancelTask, leasedTask, rayletLoad, submitTask } from './task.ts';
import { inspectMessages } from './inspect.ts';
import { finishJob, jobHeartbeat, listJobs, registerJob } from './job.ts';
import { autoscalerReport, autoscalerStatusQuery, resourceDemands } from './autoscaling.ts';

/** A registry maps each message type (the envelope's `t`) to the validator of its body. */
export type MessageRegistry = Readonly<Record<string, Validator<unknown>>>;

/** Every message type of this protocol version. */
export const messages = {
  register_node: registerNode,
  register_running: registerRunning,
  heartbeat,
  unregister_node: unregisterNode,
  view_delta: viewDelta,
  view_snapshot: viewSnapshotQuery,
  register_actor: registerActor,
  get_actor: getActor,
  kill_actor: killActor,
  list_nodes: listPage,
  list_actors: listActors,
  set_node_labels: labelsChange,
  set_node_taints: taintsChange,
  drain_node: nodeRef,
  actor_died: actorDied,
  list_events: listEvents,
  explain: explainRequest,
  create_actor: createActor,
  raylet_kill_actor: rayletKillActor,
  actor_call: actorCall,
  cancel_call: cancelCall,
  call_batch: callBatch,
  reply_batch: replyBatch,
  submit_task: submitTask,
  raylet_load: rayletLoad,
  leased_task: leasedTask,
  cancel_task: cancelTask,
  create_pg: createPg,
  remove_pg: removePg,
  get_pg: getPg,
  list_placement_groups: listPage,
  prepare_bundle: prepareBundle,
  commit_bundle: commitBundle,
  cancel_bundle: cancelBundle,
  event: clusterEvent,
  resource_demands: resourceDemands,
  autoscaler_report: autoscalerReport,
  autoscaler_status: autoscalerStatusQuery,
  register_job: registerJob,
  job_heartbeat: jobHeartbeat,
  finish_job: finishJob,
  list_jobs: listJobs,
  gcs_status: empty,
  ...inspectMessages,
  reply,
} as const satisfies MessageRegistry;

export type Messages = typeof messages;
export type MessageType = keyof Messages;
export type MessageBody<K extends MessageType> = Infer<Messages[K]>;
